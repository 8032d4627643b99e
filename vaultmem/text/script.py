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
