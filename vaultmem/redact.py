"""Find and redact secrets and exact personal identifiers before anything is written.

Session notes are redacted before they reach the vault, so secrets never reach git or the
index. Each detector is a regular expression plus, where numbers could be anything, a
checksum (Luhn for cards, ISO 7064 for Chinese resident ids) to keep ordinary numbers,
dates, versions and message ids such as `D1:3` untouched.

    >>> redact("my password is hunter2, key AKIAIOSFODNN7EXAMPLE")
    ('my password is [REDACTED:password], key [REDACTED:aws-access-key]', ['password', 'aws-access-key'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

REDACTED = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class Secret:
    kind: str
    start: int
    end: int


def find_secrets(text: str) -> list[Secret]:
    """Every secret in `text`, in order, without overlaps (the more specific kind wins)."""
    found: list[tuple[int, int, int, str]] = []
    for rank, (kind, pattern, group, check) in enumerate(_DETECTORS):
        for match in pattern.finditer(text):
            start, end = match.span(group)
            value = match.group(group)
            if start == end or value.startswith("[REDACTED"):
                continue
            if check is not None and not check(value, match):
                continue
            found.append((rank, start, end, kind if isinstance(kind, str) else kind(match)))
    chosen: list[Secret] = []
    for rank, start, end, kind in sorted(found, key=lambda f: (f[0], f[1] - f[2], f[1])):
        if all(end <= s.start or start >= s.end for s in chosen):
            chosen.append(Secret(kind, start, end))
    return sorted(chosen, key=lambda s: s.start)


def redact(text: str) -> tuple[str, list[str]]:
    """Replace each secret with `[REDACTED:kind]`; returns the new text and one kind per
    replacement, in text order. Redacting twice changes nothing."""
    secrets = find_secrets(text)
    out, last = [], 0
    for secret in secrets:
        out.append(text[last:secret.start])
        out.append(REDACTED.format(kind=secret.kind))
        last = secret.end
    out.append(text[last:])
    return "".join(out), [s.kind for s in secrets]


def contains_secret(text: str) -> bool:
    return bool(find_secrets(text))


# ---- checks ------------------------------------------------------------------------------

def luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def cn_id_ok(value: str) -> bool:
    """GB 11643 checksum of an 18-character Chinese resident identity number."""
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(c) * w for c, w in zip(value[:17], weights))
    return "10X98765432"[total % 11] == value[17].upper()


def _card_ok(value: str, match) -> bool:
    groups = re.split(r"[ -]", value)
    if len(groups) > 1 and all(re.fullmatch(r"(?:19|20)\d\d", g) for g in groups):
        return False  # a list of years
    return luhn_ok("".join(groups))


def _mixed(value: str, match) -> bool:
    """A random-looking token: letters and digits both present."""
    return bool(re.search(r"[A-Za-z]", value)) and bool(re.search(r"\d", value))


def _generic_value_ok(value: str, match) -> bool:
    if len(value) >= 16 and not re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", value):
        return True
    return len(value) >= 6 and _mixed(value, match)


_NOT_PASSWORDS = {
    "a", "an", "the", "not", "too", "very", "so", "strong", "weak", "required", "wrong",
    "incorrect", "correct", "long", "short", "expired", "same", "different", "changed",
    "reset", "secure", "insecure", "empty", "set", "still", "now", "saved", "stored", "my",
    "your", "his", "her", "their", "our", "in", "on", "at", "for", "of", "to", "and", "or",
    "hard", "easy", "simple", "complicated", "invalid", "valid", "needed", "missing", "case",
    "sensitive", "safe", "unsafe", "known", "unknown", "forgotten", "written", "shared",
    "updated", "old", "new", "good", "bad", "fine", "ok", "okay", "it", "this", "that",
    "what", "something", "nothing", "hidden", "protected", "encrypted", "hashed", "used",
}


def _password_ok(value: str, match) -> bool:
    if match.group("key").lower().startswith("pin"):
        return bool(re.fullmatch(r"\d{4,8}", value))  # a pin on a map is no secret
    if match.group("sep") and match.group("sep").strip() in (":", "=", "：", "是", "为"):
        return True
    return match.group("quote") is not None or value.lower().strip(".,!?") not in _NOT_PASSWORDS


def _generic_kind(match) -> str:
    name = match.group("name").lower()
    if "token" in name or "bearer" in name or "令牌" in name:
        return "token"
    if "api" in name:
        return "api-key"
    return "secret"


# ---- detectors: (kind, pattern, group to redact, check); earlier rank wins overlaps -------

_B = r"(?<![A-Za-z0-9_-])"  # token start: not inside a longer word
_E = r"(?![A-Za-z0-9_-])"   # token end

_STREET_SUFFIX = (r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|"
                  r"Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Square|Sq|Crescent|Close)")
_STREET_WORD = r"(?:[A-Z][A-Za-z'-]*\.?|\d{1,3}(?:st|nd|rd|th))"
_CJK_NAME = r"(?:(?![在住于是到我你他她的了和去从往搬址家送寄])[\u4e00-\u9fff])"
_CJK_NUM = r"(?:\d{1,5}|[一二三四五六七八九十百零]{1,5})"

_DETECTORS: list[tuple[str | Callable, re.Pattern, int | str, Callable | None]] = [
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:[ \t]*\n[ \t]*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n]*))*)", re.S), 0, None),
    ("aws-access-key", re.compile(_B + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}" + _E), 0, None),
    ("aws-secret-key", re.compile(
        r"(?i)(?:aws[ _-]?)?secret[ _-]?(?:access[ _-]?)?key(?:[ _-]?id)?[\"']?\s*(?:[:=：]|\bis\b)\s*[\"']?"
        r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), "v", _mixed),
    ("anthropic-key", re.compile(_B + r"sk-ant-[A-Za-z0-9_-]{20,}"), 0, None),
    ("openai-key", re.compile(_B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?P<v>[A-Za-z0-9_-]{20,})"),
     0, lambda v, m: _mixed(m.group("v"), m)),
    ("github-token", re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E), 0, None),
    ("slack-token", re.compile(_B + r"xox[baprs]-[A-Za-z0-9-]{10,}"), 0, None),
    ("google-api-key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E), 0, None),
    ("jwt", re.compile(_B + r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"), 0, None),
    ("cn-id", re.compile(r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])"
                         r"(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9A-Za-z])"), 0, lambda v, m: cn_id_ok(v)),
    # Contiguous 13-16 or 19 digits (17-18 would be ids), or the printed groupings.
    ("card-number", re.compile(r"(?<![\d.:/-])(?:[2-6]\d{12}(?:\d{1,3}|\d{6})?|[2-6]\d{3}(?:( ?)\d{4}(?:\1\d{4}){2}"
                               r"(?:\1\d{3})?|(-)\d{4}(?:\2\d{4}){2}(?:\2\d{3})?|([ -])\d{6}\3\d{5}))"
                               r"(?![\d.:/]|-\d)"), 0, _card_ok),
    ("ssn", re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])"), 0, None),
    ("phone", re.compile(r"(?<![\d+])(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?![\d-])"), 0, None),
    ("phone", re.compile(r"(?<![\w+])\+[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?![\d-])"),
     0, lambda v, m: 8 <= len(re.sub(r"\D", "", v)) <= 15),
    ("phone", re.compile(r"(?<![\w-])(?:\(\d{3}\)\s?\d{3}-\d{4}|\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4})(?![\d-])"), 0, None),
    ("street-address", re.compile(
        r"\b\d{1,6}[A-Za-z]?\s+(?:" + _STREET_WORD + r"\s+){1,4}" + _STREET_SUFFIX + r"\b\.?"
        r"(?:,?\s*(?:Apt|Apartment|Suite|Unit|Flat|#)\.?\s*[A-Za-z0-9-]+)?"), 0, None),
    ("street-address", re.compile(
        r"(?:" + _CJK_NAME + r"{2,6}(?:省|自治区))?(?:" + _CJK_NAME + r"{1,8}?(?:市|区|县|镇)){0,3}"
        + _CJK_NAME + r"{1,10}?(?:路|街|大道|大街|巷|弄|胡同)" + _CJK_NUM + r"(?:号|弄)(?!线)"
        r"(?:" + _CJK_NUM + r"(?:号楼|栋|幢|单元|室|楼))*"), 0, None),
    ("password", re.compile(
        r"(?i)\b(?P<key>password|passwd|pwd|passcode|passphrase|pin(?:\s+code)?)\b"
        r"(?P<sep>\s*[:=：]\s*|\s+(?:is|was|is\s+now|will\s+be)\s+)(?P<quote>[\"'“‘])?(?P<v>[^\s\"'”’]+?)"
        r"(?=[\"'”’]|[.,;!?。，；！？]?(?:\s|$)|[，。；！？])"), "v", _password_ok),
    ("password", re.compile(r"(?:密码|口令|支付密码|开机密码)(?P<sep>\s*(?:是|为|[:=：])\s*)(?P<quote>[\"'“‘])?"
                            r"(?P<v>[!-~]+?)(?=[\"'”’]|[.,;!?]?(?:\s|$)|[，。；！？、）)]|[\u4e00-\u9fff])"), "v", None),
    (_generic_kind, re.compile(
        r"(?i)(?P<name>\b(?:[a-z0-9]+[_-])?(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|"
        r"refresh[_-]?token|token|secret[_-]?key|client[_-]?secret|secret|bearer)\b[\"']?"
        r"|api\s+key|access\s+token|secret\s+key|authorization:\s*bearer|API\s*密钥|密钥|秘钥|令牌)"
        r"(?P<sep>\s*[:=：]\s*|\s+(?:is|=)\s+|\s*(?:是|为)\s*|(?<=bearer)\s+)[\"']?(?P<v>[^\s\"',;，。；]{6,})"),
     "v", _generic_value_ok),
]
