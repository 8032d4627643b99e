"""Which script a text is written in: the CJK character classes and one measure of how much of
a text is in them, asked by the rewriter, the write policy and the vault's language guess.

    >>> script_share("用户住在上海, near the Bund", among="letters", script=CJK)
    0.35294117647058826
    >>> is_chinese("我住在上海 now"), is_chinese("I live in Shanghai 上海")
    (True, False)
"""

from __future__ import annotations

import re
from functools import lru_cache

# The CJK Unified Ideographs block: what Chinese text is made of.
HAN = re.compile(r"[\u4e00-\u9fff]")
# CJK characters as search and the vault's language guess read them: kana, hangul and the
# ideograph blocks (extension A and the compatibility ideographs besides HAN).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# Letters as `re` reads them: CJK characters and words' letters; digits and marks do not count.
LETTER = re.compile(r"[^\W\d_]")

_POOLS = {
    "all": lambda text: text,
    "nonspace": lambda text: "".join(text.split()),
    "alpha": lambda text: "".join(filter(str.isalpha, text)),
    "letters": lambda text: "".join(LETTER.findall(text)),
}


def script_share(text: str, among: str = "nonspace", script: re.Pattern = HAN) -> float:
    """The share of `text`'s `among` characters that are in `script`; 0.0 when it has none.
    `among`: "all", "nonspace", "alpha" (`str.isalpha`) or "letters" (`LETTER`). Every HAN
    character is a letter, alphabetic and not a space, so HAN counts the same in each."""
    pool = _POOLS[among](text)
    return len(script.findall(pool)) / len(pool) if pool else 0.0


def is_chinese(text: str) -> bool:
    """Whether Chinese characters make up a good share (a third) of the text's letters."""
    return script_share(text, among="alpha") >= 1 / 3


@lru_cache(maxsize=8192)
def han_share(text: str) -> float:
    """`script_share` of Chinese characters among the non-space ones, cached: the write
    policy asks it of every remembered memory for every candidate, and uncached it was a
    tenth of an extraction's CPU."""
    return script_share(text)


def word_count(text: str) -> int:
    """How many words `text` reads as, Chinese included: a CJK character counts half a word
    (120 characters of Chinese say about what 60 English words say), other words one each.
    Without CJK it is `len(text.split())`.

    >>> word_count("I moved to Lisbon"), word_count("我上周搬到了里斯本 in May")
    (4, 7)
    """
    cjk = len(CJK.findall(text))
    if not cjk:
        return len(text.split())
    rest = CJK.sub(" ", text).split()
    return sum(1 for word in rest if any(c.isalnum() for c in word)) + (cjk + 1) // 2


# Chinese characters that are grammar or a question's own words (particles, pronouns, 什么,
# 哪里, 多少, 时候, ...). A bigram made of two of them says nothing a question is about: "什么",
# "时候" or "的是" in a question matched every turn that asks or says anything, and outweighed the
# words that name what was asked (LoCoMo-zh dev R@10 75.4 -> 77.6, the Chinese blind corpus's dev
# half 76.5 -> 79.4, with `search` asking neither half of its keyword side for them).
FUNCTION_HAN = frozenset("的了吗呢吧啊是在和与跟有去来到对把被给也都就还又很最么什哪怎谁几多少为时候里个些这那其他她它们")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_CJK_RUN = re.compile(f"(?:{CJK.pattern})+")
_WORD_BESIDE = re.compile(r"[^\W_]{2,}")   # a word of a question besides its CJK runs


def function_bigram(pair: str) -> bool:
    """Whether a CJK bigram (or a lone character) is grammar alone (`FUNCTION_HAN`). A doubled
    character is a name (多多, 来来), never grammar.

    >>> function_bigram("什么"), function_bigram("时候"), function_bigram("杭州"), function_bigram("在杭"), function_bigram("多多")
    (True, True, False, False, False)
    """
    if len(pair) == 1:
        return pair in FUNCTION_HAN
    return len(pair) == 2 and pair[0] != pair[1] and pair[0] in FUNCTION_HAN and pair[1] in FUNCTION_HAN


def asked_pairs(question: str) -> set[str]:
    """The bigrams (a lone character: itself) of a question's CJK runs that its keyword side
    asks for: all but those of grammar alone (`function_bigram`), unless the question has no
    other word to ask for (他们在哪里？ is asked as it is written). A run with kana or hangul is
    not Chinese: all of it. `retrieve.keywords.terms` and the full-text query both ask this.

    >>> sorted(asked_pairs("周婷什么时候去的杭州？")), sorted(asked_pairs("他们在哪里？"))
    (['周婷', '婷什', '杭州', '的杭'], ['他们', '们在', '哪里', '在哪'])
    >>> asked_pairs("Tom的 laptop 在哪？")   # asked for Tom and laptop alone
    set()
    """
    runs = _CJK_RUN.findall(question.lower())
    pairs, kept = [], []
    for run in runs:
        own = [run[i:i + 2] for i in range(len(run) - 1)] or [run]
        pairs += own
        kept += own if _KANA_HANGUL.search(run) else [p for p in own if not function_bigram(p)]
    alone = not _WORD_BESIDE.search(_CJK_RUN.sub(" ", question))
    return set(kept or (pairs if alone else ()))
