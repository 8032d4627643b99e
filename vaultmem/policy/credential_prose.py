"""Credentials said in prose, English and Chinese: a keyword, a few words, a copula, the value.

"my password for the clinic portal is X", "X's password: Y", "我家wifi密码是X", "X is my
password" (`prose`); and a made-up looking value anywhere in the clause after such a word
(`near_keyword`).
"""

from __future__ import annotations

import re
from typing import Iterator

from vaultmem.policy.credential_code import SETTING_NAME
from vaultmem.policy.credential_values import ENGLISH_WORDS, Span, has_shape, looks_made_up, placeholder, token_value_ok
from vaultmem.policy.secret_rules import shannon_entropy

# ---- prose: a keyword, a few words, a copula, the value ---------------------------------------

_NOT_THE_SECRET = (r"(?!\s*(?:managers?|resets?|polic(?:y|ies)|fields?|hints?|strength|rules?|requirements?|"
                   r"hash(?:es|ing)?|length|prompts?|box|input|protected|change|expir\w+|less)\b)")
_PW_KEY = (r"(?:pass(?:word|wd|code|phrase)s?(?!-)|pwd|pw|pin(?:\s*(?:code|number|no\.?|#))?|"
           r"wi-?fi\s+(?:key|pass)|network\s+key|wpa2?\s+key|"
           r"(?:door|gate|alarm|lockbox|garage|safe|locker|keypad|entry|building|padlock)\s+code)")
_TOKEN_KEY = (r"(?:api[\s_-]?key|access[\s_-]?(?:token|key)|auth[\s_-]?token|refresh[\s_-]?token|"
              r"session[\s_-]?(?:token|id|key|cookie)|bearer[\s_-]?token|secret[\s_-]?key|client[\s_-]?secret|"
              r"signing[\s_-]?(?:key|secret)|webhook[\s_-]?secret|private[\s_-]?token|token|secret|license\s+key)")
_GAP = r"(?P<gap>(?:[ \t]+(?!(?:is|was|are|and|but|or|so|because|then|while)\b)[^\s.;!?,:=]+){0,8}?)"
_COPULA = (r"(?P<sep>\s*(?:[:=：]|->|=>)\s*|(?:'s|’s)\s+|\s+(?:is|was|are|were|=|will\s+be|should\s+be|"
           r"would\s+be|became|becomes|changed\s+to|set\s+to|reset\s+to|updated\s+to|now)\s+"
           r"(?:(?:now|still|just|literally|simply|actually|currently|always|set\s+to|changed\s+to)\s+)*)")
_VALUE = (r"(?:(?P<q>[\"“‘'`])(?P<qv>[^\"”’'`\n]{2,64})[\"”’'`]"
          r"|(?P<v>[^\s\"'“”‘’`<>]+?)(?=[.,;!?)]*(?:\s|$)|[\"”’'`]))")

_PROSE = re.compile(r"(?i)\b(?P<key>" + _PW_KEY + "|" + _TOKEN_KEY + r")\b" + _NOT_THE_SECRET + _GAP + _COPULA + _VALUE)
_REVERSED = re.compile(
    r"(?i)(?<![\w@./-])(?P<v>[^\s\"'“”‘’`<>]{6,64}?)[.,]?\s+(?:is|was|as|=)\s+(?:(?:my|the|our|his|her|their|"
    r"your|a|new|old|current)\s+)+(?:[\w'’-]+\s+){0,3}?(?P<key>" + _PW_KEY + "|" + _TOKEN_KEY + r")\b")

_ZH_KEY = (r"(?P<key>(?:密码|密碼)(?!管理|学|强度|提示|规则|框|输入框|长度|错误)|口令|暗码|PIN\s*码|pin\s*码|门禁码|开锁码|密钥|秘钥|令牌|访问令牌|"
           r"API\s*密钥|api\s*key|token|Token|TOKEN)")
_ZH = re.compile(
    _ZH_KEY + r"(?P<gap>[^\n。！？；!?;，,]{0,12}?)"
    r"(?P<sep>\s*(?:就是|也是|都是|是|为|為|[:：=]|(?:改|换|变|设|设置|重置|更新)(?:成|为|到)了?)\s*)"
    r"(?:(?P<q>[\"“‘'「『`])(?P<qv>[^\"”’'」』`\n]{2,64})[\"”’'」』`]"
    r"|(?P<v>[!-~]{3,64}?)(?=[\"”’'」』`]|[.,;!?)]*(?:\s|$)|[，。；！？、）)：]|[\u3000-\u9fff]))")


def prose(text: str) -> Iterator[Span]:
    for pattern in (_PROSE, _ZH):
        for m in pattern.finditer(text):
            group = "qv" if m.group("qv") else "v"
            value = m.group(group)
            if not _prose_value_ok(m, value, text[m.end(group):]):
                continue
            yield _kind(m.group("key")), m.start(group), m.end(group)
    for m in _REVERSED.finditer(text):
        value = m.group("v")
        if has_shape(value) and not placeholder(value) and not re.fullmatch(r"[\d,.:/-]+", value):
            yield _kind(m.group("key")), m.start("v"), m.end("v")


def _prose_value_ok(m: re.Match, value: str, follows: str) -> bool:
    key = m.group("key").lower()
    cjk = re.compile(r"[\u4e00-\u9fff]")
    if m.re is _ZH and not cjk.search(key + m.group("gap") + m.group("sep")):
        return False  # "token: …" in English text is the English pattern's to judge
    if m.group("qv"):
        if m.group("q") == "`" and " " in value.strip():
            return False  # a command in backticks, not a value
        return not placeholder(value) and value.lower() not in ENGLISH_WORDS
    if key.startswith("pin") or key.endswith(" code") or key in ("门禁码", "开锁码"):
        return bool(re.fullmatch(r"\d{4,10}|[A-Za-z]?\d{3,10}[A-Za-z#*]?", value)) and not placeholder(value)
    if _kind(key) != "password":
        return token_value_ok(value)
    if m.group("sep").strip() in (":", "=", "：", "->", "=>") and not m.group("gap"):
        return not placeholder(value) and value.lower() not in ENGLISH_WORDS
    if cjk.search(key):
        return not placeholder(value) and (len(value) >= 4 or value.isdigit())
    return _word_value_ok(value, follows)


def _kind(key: str) -> str:
    key = key.lower()
    if any(w in key for w in ("token", "令牌", "bearer", "session", "cookie")):
        return "token"
    if "api" in key:
        return "api-key"
    if any(w in key for w in ("secret", "key", "密钥", "秘钥")) and not key.startswith(("wi", "network", "wpa")):
        return "secret"
    return "password"


_STOP_SUFFIX = re.compile(r"(?i)^[a-z]+(?:ed|ing|ly|able|ible|ful|less|ous|ive)$")


def _word_value_ok(value: str, follows: str) -> bool:
    """A bare prose value: made-up looking, or a single plain word that ends the clause."""
    low = value.lower()
    if low in ENGLISH_WORDS or placeholder(value):
        return False
    if has_shape(value) or re.fullmatch(r"\d{4,}", value):
        return True
    clause_ends = re.match(r"\s*(?:$|[.,;!?)\n]|(?:by the way|btw|if|and|but|so|for|just|lol|haha|"
                           r"please|thanks|now|until|because|which|though|ok)\b)", follows, re.I)
    return bool(clause_ends) and len(value) >= 4 and not _STOP_SUFFIX.match(value)


# ---- near a keyword: a made-up looking value in the same clause ---------------------------------
# People put the value anywhere after the word ("I use the same password everywhere, X, which
# I know is bad"; "密码还是老样子，X，你别再问了"). A value there is redacted when it looks made up
# (letters with digits or symbols, a long random string, digits for a PIN or lock code) and is
# none of the things a clause about passwords also holds: URLs, e-mail addresses, host names,
# paths, dates, versions, variable names, plain words.

_NEAR_PW = (r"pas+w(?:or|ro|r|o)?d|passphrase|passcode|(?:ssh|pg|store|key|src|dest)pass|log(?:ged|ging)?\s?in(?:to)?|"
            r"sign(?:ed)?[\s-]?in(?![a-z])|"   # not "signing the adoption papers on April 6, 2026"
            r"(?<![\w-])(?:pass|pw|pwd|psk|login|creds?|credentials|p(?=\s*[:=]))(?![\w-])|"
            r"wi-?fi|hotspot|recovery\s+(?:key|phrase|code)|seed\s+phrase|mnemonic")
_NEAR_PIN = (r"(?<![\w-])pin(?![\w-])|combo|combination|"
             r"(?:alarm|door|gate|lock\s?box|garage|safe|locker|keypad|padlock|disarm|unlock)"
             r"(?:\W+\w+){0,5}?\W+code(?![\w-])")
_NEAR_TOKEN = (r"token|secret|api[\s_-]?key|apikey|(?<![\w-])(?:key|auth)(?![\w-])|private\s+key|"
               r"cookie|session|credential|授权码|密钥|秘钥|私钥|令牌")
_NEAR_ZH_PW = r"(?:密码|密碼)(?!管理|学|强度|提示|规则|框|输入框|长度|错误)|口令"
_NEAR = re.compile(r"(?i)(?:(?P<pin>" + _NEAR_PIN + r")|(?P<pw>" + _NEAR_PW + "|" + _NEAR_ZH_PW + r")|(?P<tok>"
                   + _NEAR_TOKEN + "))" + _NOT_THE_SECRET)
_CLAUSE_END = re.compile(r"\n|(?:[。！？]|[.!?](?=\s|$))(?=[^。！？.!?\n]*(?:[。！？\n]|[.!?](?:\s|$)))")
_CANDIDATE = re.compile(r"(?P<app>(?<![\w-])[a-z]{4}(?: [a-z]{4}){3}(?![\w-]))"  # app passwords
                        r"|(?P<q>[\"“‘'「『`])(?P<qv>[^\"”’'」』`\n]{2,80})[\"”’'」』`]"
                        r"|(?P<v>[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+)")
_OPENERS = "([{<>'\"“‘,=:@`"
_BASE64_LINE = re.compile(r"\n[ \t]*[A-Za-z0-9+/]{16,}={0,2}[ \t]*(?=\n|$)")
_COMMON4 = set("that this with when what have will your from they been some take like just them then "
               "than were here there also only into over very much more most make said each".split())


def _app_password(value: str) -> bool:
    """Four groups of four letters, as Google and Apple print app passwords."""
    words = value.split()
    return not any(w in _COMMON4 for w in words) and shannon_entropy(value.replace(" ", "")) >= 3.4


def _quoted_made_up(value: str, family: str) -> bool:
    if placeholder(value) or value.lower() in ENGLISH_WORDS:
        return False
    words = value.split()
    if value != value.strip():
        return False
    if len(words) == 1:
        return looks_made_up(value, family)
    return family == "pw" and (has_shape(value) or len(words) >= 3) and len(words) <= 24


# A month and day just before a year: the year is a date's.
_DATED_YEAR = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s*$|"
                         r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s*$")


def near_keyword(text: str) -> Iterator[Span]:
    for key in _NEAR.finditer(text):
        family = key.lastgroup
        ident = re.match(r"[\w.-]*", text[key.start():]).group(0)
        if SETTING_NAME.search(ident):  # PASSWORD_RESET_TIMEOUT = 259200: a setting, no secret
            continue
        start = key.end()
        end_match = _CLAUSE_END.search(text, start)
        end = end_match.start() if end_match else len(text)
        while True:  # a key body on the lines that follow
            more = _BASE64_LINE.match(text, end)
            if not more:
                break
            end = more.end()
        window = text[start:end]
        kind = "password" if family in ("pw", "pin") else "token"
        words = 0
        for m in _CANDIDATE.finditer(window):
            words += 1
            if words > 18:
                break
            if m.group("app") is not None:
                if _app_password(m.group("app")):
                    yield kind, start + m.start("app"), start + m.end("app")
                continue
            if m.group("qv") is not None:
                if _quoted_made_up(m.group("qv"), family):
                    yield kind, start + m.start("qv"), start + m.end("qv")
                continue
            raw = m.group("v")
            lead = len(raw) - len(raw.lstrip(_OPENERS))
            value = raw[lead:]
            name, _, rest = value.partition("=")
            if rest and re.fullmatch(r"[A-Za-z_][\w.-]{0,31}", name) and not looks_made_up(name, family):
                lead += len(name) + 1 + len(rest) - len(rest.lstrip(_OPENERS))
                value = rest.lstrip(_OPENERS)
            value = value.rstrip(".,;:)]}>'\"”’")
            if _DATED_YEAR.search(window[:m.start("v") + lead]) and re.fullmatch(r"(?:19|20)\d\d", value):
                continue   # the year of a date ("… on April 6, 2026"), not a PIN
            if value and "[REDACTED" not in value and looks_made_up(value, family):
                yield kind, start + m.start("v") + lead, start + m.start("v") + lead + len(value)
