"""Find and redact secrets and exact personal identifiers before anything is written.

Session notes, memories, entity names, requests to an LLM endpoint and printed output are all
built from redacted text, so secrets never reach the vault, git or the index. Three sources
of detectors, in order of precedence where two overlap:

1. token shapes that need no keyword: vaultmem's own (AWS, GitHub, OpenAI, Anthropic, Slack,
   Google, JWT, PEM private keys) and then gitleaks' maintained rule set (`secret_rules`:
   ~220 providers, with its keyword, entropy and allowlist checks);
2. exact personal identifiers, each with a checksum where numbers could be anything (Luhn for
   cards, ISO 7064 for Chinese resident ids), so that dates, versions and message ids such
   as `D1:3` stay untouched: card, national id, SSN, phone, street address;
3. values that a keyword names, in prose and code, English and Chinese (`credentials`):
   "my password for the clinic portal is …", "我家wifi密码是…", `DB_PASSWORD=…`,
   `postgres://u:pw@host`, cookies and `Authorization:` headers; placeholders and shell
   expansions are not secrets.

    >>> redact("my password is hunter2, key AKIAIOSFODNN7EXAMPLE")
    ('my password is [REDACTED:password], key [REDACTED:aws-access-key]', ['password', 'aws-access-key'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from vaultmem.policy.credential_values import placeholder
from vaultmem.policy.credentials import credentials
from vaultmem.policy.secret_rules import scan as gitleaks_scan

REDACTED = "[REDACTED:{kind}]"
_ALREADY = re.compile(r"\[REDACTED:[\w-]+\]")
# A token's shape filled in with a placeholder run ("AKIAXXXXXXXXXXXXXXXX", "sk_test_...").
_SHAPE_ONLY = re.compile(r"(?i)x{8,}|\*{4,}|\.{3}$|…$|<[^>]*>")


@dataclass(frozen=True)
class Secret:
    kind: str
    start: int
    end: int


# Texts found to hold no secret, the latest CLEAN_TEXTS of them: an extraction redacts each
# turn when it reads the session and again when it writes the session note (whatever the
# caller did), and the detectors are fixed, so the second look at a clean turn is a lookup.
# (Only clean texts are kept: a text with a secret in it is not held any longer than its use.)
CLEAN_TEXTS = 8192
_clean: dict[str, None] = {}


def find_secrets(text: str) -> list[Secret]:
    """Every secret in `text`, in order, without overlaps (the earlier detector wins, then
    the longer span)."""
    if text in _clean:
        return []
    chosen = _find_secrets(text)
    if not chosen:
        if len(_clean) >= CLEAN_TEXTS:
            _clean.clear()
        _clean[text] = None
    return chosen


def _find_secrets(text: str) -> list[Secret]:
    found: list[tuple[int, int, int, str]] = []
    done = [m.span() for m in _ALREADY.finditer(text)]
    for rank, detector in enumerate(_DETECTORS):
        for kind, start, end in _spans(detector, text):
            if (start < end and not any(s <= start and end <= e for s, e in done)
                    and not _SHAPE_ONLY.search(text[start:end])):
                found.append((rank, start, end, kind))
    chosen: list[Secret] = []
    for rank, start, end, kind in sorted(found, key=lambda f: (f[0], f[1] - f[2], f[1])):
        start, end = _whole_keypad_code(text, start, end)
        if all(end <= s.start or start >= s.end for s in chosen):
            chosen.append(Secret(kind, start, end))
    return sorted(chosen, key=lambda s: s.start)


# A keypad code found as digits may go on past a star or a hash ("5931*7", "4471*9#"): the
# detectors' value shapes end at the first one, which left "*7" of a door code in the note.
_DIGIT_CODE = re.compile(r"[#*＃]?\d+(?:[#*＃]\d+)*[#*＃]?")
_KEYPAD_TAIL = re.compile(r"(?:(?<=[#*＃])\d{1,8}|[#*＃]\d{1,8})(?:[#*＃]\d{1,8})*[#*＃]?(?![\w.])")
_KEYPAD_HEAD = re.compile(r"(?<![\w#*＃])[#*＃]?(?:\d{1,8}[#*＃])+$")


def _whole_keypad_code(text: str, start: int, end: int) -> tuple[int, int]:
    """`(start, end)` of a digit code carried over the stars, hashes and digits around it."""
    if not _DIGIT_CODE.fullmatch(text, start, end):
        return start, end
    tail = _KEYPAD_TAIL.match(text, end)   # it begins at a mark or just after one
    head = _KEYPAD_HEAD.search(text, max(0, start - 40), start)   # it ends with a mark
    return (head.start() if head else start), (tail.end() if tail else end)


def _spans(detector, text: str) -> Iterable[tuple[str, int, int]]:
    if callable(detector):
        yield from detector(text)
        return
    kind, pattern, group, check = detector
    for match in pattern.finditer(text):
        start, end = match.span(group)
        if check is not None and not check(match.group(group), match):
            continue
        yield (kind if isinstance(kind, str) else kind(match)), start, end


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


@lru_cache(maxsize=64)
def _gitleaks_findings(text: str) -> tuple:
    """One gitleaks scan per text, shared by the two ranks below."""
    return tuple(gitleaks_scan(text))


def _gitleaks(text: str):
    """gitleaks' provider rules (its catch-all `generic-api-key` rule runs last, below)."""
    for finding in _gitleaks_findings(text):
        if finding.rule != "generic-api-key":
            yield finding.rule, finding.start, finding.end


def _gitleaks_generic(text: str):
    for finding in _gitleaks_findings(text):
        if finding.rule == "generic-api-key" and not placeholder(text[finding.start:finding.end]):
            yield "secret", finding.start, finding.end


# ---- detectors: (kind, pattern, group to redact, check); earlier rank wins overlaps -------

_B = r"(?<![A-Za-z0-9_-])"  # token start: not inside a longer word
_E = r"(?![A-Za-z0-9_-])"   # token end

_STREET_SUFFIX = (r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|"
                  r"Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Square|Sq|Crescent|Close)")
_STREET_WORD = r"(?:[A-Z][A-Za-z'-]*\.?|\d{1,3}(?:st|nd|rd|th))"
_CJK_NAME = r"(?:(?![在住于是到我你他她的了和去从往搬址家送寄])[\u4e00-\u9fff])"
_CJK_NUM = r"(?:\d{1,5}|[一二三四五六七八九十百零]{1,5})"

_DETECTORS: list[tuple[str | Callable, re.Pattern, int | str, Callable | None] | Callable] = [
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
    ("telegram-bot-token", re.compile(r"(?<![\w:])\d{8,10}:AA[A-Za-z0-9_-]{30,}" + _E), 0, None),
    ("google-api-key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E), 0, None),
    ("jwt", re.compile(_B + r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"), 0, None),
    _gitleaks,
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
    credentials,
    _gitleaks_generic,
]
