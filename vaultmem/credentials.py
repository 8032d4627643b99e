"""Credentials named by a keyword, in the words people use: prose and code, English and Chinese.

A token with a provider's shape (`ghp_…`, `sk_live_…`) needs no keyword and is found by the
rules in `secret_rules`; everything here is a *value that a keyword names*:

- prose: a password, passcode, PIN, passphrase, wifi key, door code, 密码, 口令, PIN码 …
  whose value follows within the clause — "my password for the clinic portal is X",
  "the deploy user's ssh password on the server is X", "X's password: Y", "我家wifi密码是X",
  "服务器的root密码我改成了X" — or precedes it ("X is my password");
- tokens, keys and secrets named the same way ("the session token for staging is X");
- code and config: `.env` lines and assignments with a secret-looking name
  (`DB_PASSWORD=…`, `api_key = "…"`), `Authorization:` headers, cookies, and credentials
  inside URLs and connection strings (`postgres://user:pw@host`, `Password=…;`).

The other half is what is *not* a credential: shell parameter expansions and command
substitutions (`${CF_API_TOKEN:?set it}`, `$(cat ~/.token)`), references to variables and
calls (`os.environ["API_KEY"]`, `getpass()`), placeholders (`YOUR_API_KEY`, `<token>`, `xxx`,
`****`, `changeme`), type annotations, and plain words ("the password is on the sticky note").

Each detector yields `(kind, start, end)` spans of the value alone.
"""

from __future__ import annotations

import re
from typing import Iterator

Span = tuple[str, int, int]

# ---- what a value must not be ----------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"(?i)^(?:x+|\*+|•+|\.+|-+|_+|#+|\?+|0+|"
    r"test(?:ing)?|example|sample|dummy|fake|foo|bar|baz|placeholder|changeme|change[_-]?me|"
    r"redacted|hidden|secret|password|passwd|pass|token|key|apikey|api[_-]?key|none|null|nil|"
    r"true|false|undefined|str|string|bytes|int|bool|any|optional\[.*\]|secretstr|required|"
    r"your[_ -].*|my[_-].*|<.*>|\{.*\}|\[.*\]|\(.*\)|.*[_-]here|.*[_-]goes[_-]here|"
    r"(?:x{3,}|\*{3,}).*|.*(?:x{4,}|\*{3,}))$")
_REFERENCE = re.compile(
    r"^(?:\$|%[A-Za-z_]|@[A-Za-z_]|\{\{|<|os\.|env\.|process\.env|secrets\.|settings\.|config\.|"
    r"self\.|this\.|ENV\[|getenv|input\(|getpass|\[REDACTED)|\($|\)\W*$|[(){}]")
_ENGLISH_WORDS = {
    "a", "an", "the", "not", "too", "very", "so", "strong", "weak", "required", "wrong",
    "incorrect", "correct", "long", "short", "expired", "same", "different", "changed", "gone",
    "reset", "secure", "insecure", "empty", "set", "still", "now", "saved", "stored", "my",
    "your", "his", "her", "their", "our", "in", "on", "at", "for", "of", "to", "and", "or",
    "hard", "easy", "simple", "complicated", "invalid", "valid", "needed", "missing", "case",
    "sensitive", "safe", "unsafe", "known", "unknown", "forgotten", "written", "shared",
    "updated", "old", "new", "good", "bad", "fine", "ok", "okay", "it", "this", "that", "what",
    "something", "nothing", "hidden", "protected", "encrypted", "hashed", "used", "just",
    "literally", "also", "only", "probably", "somewhere", "here", "there", "below", "above",
    "attached", "included", "inside", "under", "taped", "printed", "posted", "listed", "same",
    "weird", "annoying", "ridiculous", "terrible", "awful", "great", "like", "basically", "one",
    "mine", "yours", "theirs", "ours", "his", "hers", "same-ish", "complex", "random", "generated",
    "temporary", "temp", "default", "blank", "none", "null", "unchanged", "back", "locked",
    "working", "broken", "stuck", "visible", "obvious", "easier", "harder", "longer", "shorter",
    "stronger", "weaker", "enough", "sufficient", "there's", "in", "written", "same", "case",
    "what's", "whatever", "wrong.", "expiring", "due", "rotated", "different", "compromised",
    "leaked", "correct.", "no", "yes", "true", "false", "unique", "special", "tricky", "all",
    "lowercase", "uppercase", "numeric", "numbers", "digits", "letters", "characters", "chars",
}
_STOP_SUFFIX = re.compile(r"(?i)^[a-z]+(?:ed|ing|ly|able|ible|ful|less|ous|ive)$")


def placeholder(value: str) -> bool:
    """A value that stands for a secret without being one (or refers to one elsewhere)."""
    value = value.strip().strip("\"'`“”‘’")
    return (len(value) < 2 or bool(_PLACEHOLDER.match(value)) or bool(_REFERENCE.search(value))
            or len(set(value.lower())) == 1)


def _has_shape(value: str) -> bool:
    """Looks made up rather than a word: digits with letters, a symbol, or inner capitals."""
    letters = re.search(r"[A-Za-z]", value)
    return bool((letters and re.search(r"\d", value)) or re.search(r"[^\w\s]", value.strip(".,!?"))
                or re.search(r"[a-z][A-Z]", value))


def _word_value_ok(value: str, follows: str) -> bool:
    """A bare prose value: made-up looking, or a single plain word that ends the clause."""
    low = value.lower()
    if low in _ENGLISH_WORDS or placeholder(value):
        return False
    if _has_shape(value) or re.fullmatch(r"\d{4,}", value):
        return True
    clause_ends = re.match(r"\s*(?:$|[.,;!?)\n]|(?:by the way|btw|if|and|but|so|for|just|lol|haha|"
                           r"please|thanks|now|until|because|which|though|ok)\b)", follows, re.I)
    return bool(clause_ends) and len(value) >= 4 and not _STOP_SUFFIX.match(value)


def _token_value_ok(value: str) -> bool:
    """A named token, key or secret: long and random-looking, never a plain word."""
    if placeholder(value) or value.lower() in _ENGLISH_WORDS:
        return False
    if re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", value):  # a slug or identifier, not a token
        return False
    return (len(value) >= 16 and not re.fullmatch(r"[A-Za-z]+", value)) or (len(value) >= 6 and _has_shape(value))


# ---- prose: a keyword, a few words, a copula, the value ---------------------------------------

_PW_KEY = (r"(?:pass(?:word|wd|code|phrase)s?|pwd|pw|pin(?:\s*(?:code|number|no\.?|#))?|"
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

_PROSE = re.compile(r"(?i)\b(?P<key>" + _PW_KEY + "|" + _TOKEN_KEY + r")\b" + _GAP + _COPULA + _VALUE)
_REVERSED = re.compile(
    r"(?i)(?<![\w@./-])(?P<v>[^\s\"'“”‘’`<>]{6,64}?)[.,]?\s+(?:is|was|as|=)\s+(?:(?:my|the|our|his|her|their|"
    r"your|a|new|old|current)\s+)+(?:[\w'’-]+\s+){0,3}?(?P<key>" + _PW_KEY + "|" + _TOKEN_KEY + r")\b")

_ZH_KEY = (r"(?P<key>密码|密碼|口令|暗码|PIN\s*码|pin\s*码|门禁码|开锁码|密钥|秘钥|令牌|访问令牌|"
           r"API\s*密钥|api\s*key|token|Token|TOKEN)")
_ZH = re.compile(
    _ZH_KEY + r"(?P<gap>[^\n。！？；!?;，,]{0,12}?)"
    r"(?P<sep>\s*(?:就是|也是|都是|是|为|為|[:：=]|(?:改|换|变|设|设置|重置|更新)(?:成|为|到)了?)\s*)"
    r"(?:(?P<q>[\"“‘'「『`])(?P<qv>[^\"”’'」』`\n]{2,64})[\"”’'」』`]"
    r"|(?P<v>[!-~]{3,64}?)(?=[\"”’'」』`]|[.,;!?)]*(?:\s|$)|[，。；！？、）)：]|[\u3000-\u9fff]))")


def _prose(text: str) -> Iterator[Span]:
    for pattern in (_PROSE, _ZH):
        for m in pattern.finditer(text):
            group = "qv" if m.group("qv") else "v"
            value = m.group(group)
            if not _prose_value_ok(m, value, text[m.end(group):]):
                continue
            yield _kind(m.group("key")), m.start(group), m.end(group)
    for m in _REVERSED.finditer(text):
        value = m.group("v")
        if _has_shape(value) and not placeholder(value) and not re.fullmatch(r"[\d,.:/-]+", value):
            yield _kind(m.group("key")), m.start("v"), m.end("v")


def _prose_value_ok(m: re.Match, value: str, follows: str) -> bool:
    key = m.group("key").lower()
    if m.group("qv"):
        return not placeholder(value) and value.lower() not in _ENGLISH_WORDS
    if key.startswith("pin") or key.endswith(" code") or key in ("门禁码", "开锁码"):
        return bool(re.fullmatch(r"\d{4,10}|[A-Za-z]?\d{3,10}[A-Za-z#*]?", value)) and not placeholder(value)
    if _kind(key) != "password":
        return _token_value_ok(value)
    if m.group("sep").strip() in (":", "=", "：", "->", "=>") and not m.group("gap"):
        return not placeholder(value) and value.lower() not in _ENGLISH_WORDS
    if re.search(r"[\u4e00-\u9fff]", key):
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


# ---- code and config --------------------------------------------------------------------------

_SECRET_NAME = (r"[A-Za-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
                r"private[_-]?key|access[_-]?key|credentials?|cookie|session[_-]?(?:id|key)|sessid|"
                r"dsn|salt|auth)[A-Za-z0-9_.-]*")
_ASSIGN = re.compile(
    r"(?im)(?P<lead>^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?|[\s{,(\"'])"
    r"(?P<name>" + _SECRET_NAME + r")[\"']?[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/]))[ \t]*"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200})(?P=q)|(?P<v>[^\s\"'`;,)}\]]{1,200}))")
_HEADER = re.compile(r"(?im)\b(?:authorization|x-api-key|x-auth-token|api-key|private-token)[\"']?\s*[:=]\s*"
                     r"[\"']?(?:(?:bearer|basic|token|digest|apikey)\s+)?(?P<v>[A-Za-z0-9._~+/=:-]{8,})")
_COOKIE_LINE = re.compile(r"(?im)\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?(?P<body>[^\n\"']+)")
_COOKIE_PAIR = re.compile(r"(?:^|;)\s*(?P<name>[\w.-]+)=(?P<v>[^;\s]+)")
_COOKIE_ATTRS = {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
_URL_CREDS = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://(?P<user>[^\s:/@\"'<>]*):(?P<v>[^\s/@\"'<>]+)@[\w\[.-]")
_CONN = re.compile(r"(?i)(?:^|[;\s\"'])(?:password|pwd|passwd)\s*=\s*(?P<v>[^;\"'\s]+)")


def _code(text: str) -> Iterator[Span]:
    for m in _ASSIGN.finditer(text):
        group = "qv" if m.group("qv") is not None else "v"
        value = m.group(group)
        if placeholder(value) or value.lower() in _ENGLISH_WORDS:
            continue
        env_line = m.group("name").isupper() and m.group("lead").strip() in ("", "export", "set", "-")
        quoted = group == "qv"
        if quoted or env_line or _token_value_ok(value) or _name_kind(m.group("name")) == "password" and _has_shape(value):
            if quoted and not env_line and " " in value.strip() and not _has_shape(value):
                continue  # a sentence in quotes ("secret": "the party is on friday")
            yield _name_kind(m.group("name")), m.start(group), m.end(group)
    for m in _HEADER.finditer(text):
        if not placeholder(m.group("v")):
            yield "token", m.start("v"), m.end("v")
    for line in _COOKIE_LINE.finditer(text):
        for m in _COOKIE_PAIR.finditer(line.group("body")):
            value = m.group("v")
            if m.group("name").lower() in _COOKIE_ATTRS or placeholder(value) or len(value) < 6:
                continue
            offset = line.start("body")
            yield "cookie", offset + m.start("v"), offset + m.end("v")
    for pattern, kind in ((_URL_CREDS, "url-credential"), (_CONN, "password")):
        for m in pattern.finditer(text):
            if not placeholder(m.group("v")) and m.group("v").lower() not in ("pass", "pw", "pwd"):
                yield kind, m.start("v"), m.end("v")


def _name_kind(name: str) -> str:
    name = name.lower()
    if "token" in name or "cookie" in name or "sess" in name:
        return "token"
    if "api" in name:
        return "api-key"
    if "pass" in name or "pwd" in name:
        return "password"
    return "secret"


def credentials(text: str) -> Iterator[Span]:
    """Every keyword-named credential value in `text` (spans may overlap; the caller picks)."""
    masked = [m.span() for m in re.finditer(r"\$\{[^}\n]*\}|\$\([^)\n]*\)|`[^`\n]*\$[^`\n]*`", text)]
    for kind, start, end in (*_code(text), *_prose(text)):
        if start < end and not any(s < end and start < e for s, e in masked):
            yield kind, start, end
