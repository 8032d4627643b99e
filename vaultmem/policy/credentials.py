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

from vaultmem.policy.secret_rules import shannon_entropy

Span = tuple[str, int, int]

# ---- what a value must not be ----------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"(?i)^(?:x+|\*+|•+|\.+|-+|_+|#+|\?+|0+|"
    r"test(?:ing)?|example|sample|dummy|fake|foo|bar|baz|placeholder|changeme|change[_-]?me|"
    r"redacted|hidden|secret|password|passwd|pass|token|key|apikey|api[_-]?key|none|null|nil|todo|tbd|fixme|"
    r"bearer|basic|"
    r"true|false|undefined|str|string|bytes|int|bool|any|optional\[.*\]|secretstr|required|"
    r"your[_ -].*|my[_-].*|<.*>|\{.*\}|\[.*\]|\(.*\)|.*[_-]here|.*[_-]goes[_-]here|"
    r"(?:x{3,}|\*{3,}).*|.*(?:x{4,}|\*{3,}|\.{3}|…))$")
_REFERENCE = re.compile(
    r"^(?:\$|%[A-Za-z_]|@[A-Za-z_]|\{\{|<|os\.|env\.|process\.env|secrets\.|settings\.|config\.|"
    r"self\.|this\.|ENV\[|getenv|input\(|getpass|\[REDACTED)|\($|\)\W*$|[(){}]|^[a-z][a-z0-9+.-]*://")
_NOT_VALUE = re.compile(
    r"(?i)^(?:[a-z][a-z0-9+.-]*://\S*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:localhost|(?:[\w-]+\.)+[a-z]{2,})(?::\d+)?(?:/\S*)?|"
    r"[A-Za-z_]\w{0,23}(?:\.[A-Za-z_]\w{0,23})+|\d+-[a-z]+(?:-[a-z]+)*|"
    r"[~.]?/\S*|[a-z]:\\\S*|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|\d{4}-\d{2}-\d{2}\S*|\d{1,2}:\d{2}(?::\d{2})?|"
    r"v?\d+(?:\.\d+)+\S*|\$\w+|%\w+%|(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:[_-][a-z]+)+)|\w+\.(?:json|ya?ml|"
    r"toml|ini|env|txt|md|py|js|ts|sh|conf|cfg|jks|p12|pem|key|pdf|csv|log)|\d+(?:st|nd|rd|th|px|ms|s|"
    r"mb|gb|kb|k|%)|\d+[+x]|\d+[.,]\d+|https?:\S*)$")
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
    # where passwords are kept, named in the same breath
    "1password", "bitwarden", "lastpass", "keepass", "keepassxc", "dashlane", "keychain", "authy",
    "yubikey", "vaultwarden", "proton", "okta", "doppler",
}
_STOP_SUFFIX = re.compile(r"(?i)^[a-z]+(?:ed|ing|ly|able|ible|ful|less|ous|ive)$")


def placeholder(value: str) -> bool:
    """A value that stands for a secret without being one (or refers to one elsewhere), or
    is something else a sentence about secrets holds: a URL, an address, a path, a date."""
    value = value.strip().strip("\"'`“”‘’")
    return (len(value) < 2 or bool(_PLACEHOLDER.match(value)) or bool(_REFERENCE.search(value))
            or len(set(value.lower())) == 1 or bool(_NOT_VALUE.match(value)))


def _has_shape(value: str) -> bool:
    """Looks made up rather than a word: digits with letters, a symbol, or inner capitals."""
    letters = re.search(r"[A-Za-z]", value)
    return bool((letters and re.search(r"\d", value)) or re.search(r"[!@#$%^&*+=~?|]", value.strip(".,!?")))


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
    cjk = re.compile(r"[\u4e00-\u9fff]")
    if m.re is _ZH and not cjk.search(key + m.group("gap") + m.group("sep")):
        return False  # "token: …" in English text is the English pattern's to judge
    if m.group("qv"):
        if m.group("q") == "`" and " " in value.strip():
            return False  # a command in backticks, not a value
        return not placeholder(value) and value.lower() not in _ENGLISH_WORDS
    if key.startswith("pin") or key.endswith(" code") or key in ("门禁码", "开锁码"):
        return bool(re.fullmatch(r"\d{4,10}|[A-Za-z]?\d{3,10}[A-Za-z#*]?", value)) and not placeholder(value)
    if _kind(key) != "password":
        return _token_value_ok(value)
    if m.group("sep").strip() in (":", "=", "：", "->", "=>") and not m.group("gap"):
        return not placeholder(value) and value.lower() not in _ENGLISH_WORDS
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


# ---- code and config --------------------------------------------------------------------------

_SECRET_NAME = (r"[A-Za-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
                r"private[_-]?key|access[_-]?key|[_-]key|credentials?|session|sessid|psk|"
                r"dsn|salt|auth)[A-Za-z0-9_.-]*")
_ASSIGN = re.compile(
    r"(?im)(?P<lead>^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?|[\s{,(\"'?&])"
    r"(?P<name>" + _SECRET_NAME + r")[\"']?[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/]))[ \t]*"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200})(?P=q)|(?P<v>[^\s\"'`;,)}\]]{1,200}))")
_HEADER = re.compile(r"(?im)\b(?:authorization|x-api-key|x-auth-token|api-key|private-token)[\"']?\s*[:=]\s*"
                     r"[\"']?(?:(?:bearer|basic|token|digest|apikey)\s+)?(?P<v>[A-Za-z0-9._~+/=:-]{8,})")
_COOKIE_LINE = re.compile(r"(?im)\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?(?P<body>[^\n\"']+)")
_COOKIE_PAIR = re.compile(r"(?:^|;)\s*(?P<name>[\w.-]+)=(?P<v>[^;\s]+)")
_COOKIE_ATTRS = {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
_URL_CREDS = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://(?P<user>[^\s:/@\"'<>]*):(?P<v>[^\s/\"'<>]+)@[\w\[.-]")
_URL_TOKEN = re.compile(r"(?i)https?://\S*?/(?:api/)?webhooks?/\d+/(?P<v>[\w-]{30,})")
_CLI = re.compile(
    r"(?i)(?:\b(?:mysql|mariadb|mysqldump|mysqladmin)\b[^\n|;`]*?\s-p(?P<a>[^\s'\"-][^\s'\"`]*)"
    r"|\b(?:sshpass|(?:docker|podman|nerdctl|helm\s+registry)\s+login|mongo\w*|psql)\b[^\n|;`]*?\s-p\s+"
    r"(?P<q1>['\"]?)(?P<b>[^\s'\"`]+)(?P=q1)"
    r"|\bredis-cli\b[^\n|;`]*?\s-a\s+(?P<q2>['\"]?)(?P<c>[^\s'\"`]+)(?P=q2)"
    r"|(?<!\S)(?:--password|--passwd|--pass|--passphrase|--token|--auth-token|--api-key|-storepass|-keypass|"
    r"-srcstorepass|-deststorepass|-srckeypass|-destkeypass|-passin\s+pass:|-passout\s+pass:)(?:[ =]|(?<=pass:))"
    r"(?P<q3>['\"]?)(?P<d>[^\s'\"`]+)(?P=q3)"
    r"|\becho\s+(?P<q4>['\"]?)(?P<e>[^\s'\"|]+)(?P=q4)\s*\|\s*sudo\s+-S"
    r"|\bnet\s+use\b[^\n]*?/user:\S+\s+(?P<f>[^\s/]+)"
    r"|(?m:^[ \t]*[\w.-]+:(?:\d+|\*):[\w*.-]+:[\w.@-]+:(?P<g>\S+))"  # a ~/.pgpass line
    r"|(?<![\w/])[\w.@-]{2,32} / (?P<h>(?=\S*[A-Za-z])(?=\S*\d)(?=\S*[!@#$%^&*+=~?])[^\s/,，]{6,64}))")
_CONN = re.compile(r"(?i)(?:^|[;\s\"'])(?:password|pwd|passwd)\s*=\s*(?P<v>[^;\"'\s]+)")


_SETTING_NAME = re.compile(
    r"(?i)(?:^|[_.-])(?:timeout|ttl|length|len|size|min|max|count|expir\w*|age|type|name|id|file|path|dir|"
    r"url|uri|host|port|user|username|header|field|prefix|endpoint|enabled|required|policy|hasher|"
    r"algorithm|format|mode|validators?|reset\w*)$")


def _code(text: str) -> Iterator[Span]:
    for m in _ASSIGN.finditer(text):
        group = "qv" if m.group("qv") is not None else "v"
        value = m.group(group)
        if (placeholder(value) or value.lower() in _ENGLISH_WORDS or m.group("q") == "`"
                or _SETTING_NAME.search(m.group("name"))):
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
            if m.group("name").lower() in _COOKIE_ATTRS or not _looks_made_up(value, "tok"):
                continue
            offset = line.start("body")
            yield "cookie", offset + m.start("v"), offset + m.end("v")
    for m in _CLI.finditer(text):
        group = next(g for g in "abcdefgh" if m.group(g))
        if not placeholder(m.group(group)) and _has_shape(m.group(group)):
            yield "password", m.start(group), m.end(group)
    for m in _URL_TOKEN.finditer(text):
        yield "token", m.start("v"), m.end("v")
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
    for kind, start, end in (*_code(text), *_prose(text), *_near_keyword(text), *_access_codes(text),
                             *_security_answers(text), *_identifiers(text), *_phrases_and_codes(text),
                             *_credential_message(text)):
        if start < end and not any(s < end and start < e for s, e in masked):
            yield kind, start, end


# ---- near a keyword: a made-up looking value in the same clause ---------------------------------
# People put the value anywhere after the word ("I use the same password everywhere, X, which
# I know is bad"; "密码还是老样子，X，你别再问了"). A value there is redacted when it looks made up
# (letters with digits or symbols, a long random string, digits for a PIN or lock code) and is
# none of the things a clause about passwords also holds: URLs, e-mail addresses, host names,
# paths, dates, versions, variable names, plain words.

_NEAR_PW = (r"pas+w(?:or|ro|r|o)?d|passphrase|passcode|(?:ssh|pg|store|key|src|dest)pass|log(?:ged|ging)?\s?in(?:to)?|"
            r"sign(?:ed)?\s?in|"
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


def _looks_made_up(value: str, family: str) -> bool:
    if placeholder(value) or _NOT_VALUE.match(value) or value.lower() in _ENGLISH_WORDS:
        return family == "pin" and bool(re.fullmatch(r"\d{4,10}", value))
    if family == "pin" or (family == "pw" and re.fullmatch(r"\d+#?", value)):
        return bool(re.fullmatch(r"\d{4,10}#?|\d{1,3}(?:-\d{1,3}){2,5}", value))
    if re.fullmatch(r"\d{4,8}(?:-\d{4,8}){3,}", value):  # recovery keys in groups of digits
        return True
    letters, digits = re.search(r"[A-Za-z]", value), re.search(r"\d", value)
    symbol = re.search(r"[!@#$%^&*+=~?|<>]", value[:-1])  # inside, not a final "!" or "?"
    if letters and (digits or symbol) and len(value) >= 6:
        return True
    return len(value) >= 12 and shannon_entropy(value) >= (3.5 if value.isalpha() else 3.3)


def _quoted_made_up(value: str, family: str) -> bool:
    if placeholder(value) or value.lower() in _ENGLISH_WORDS:
        return False
    words = value.split()
    if value != value.strip():
        return False
    if len(words) == 1:
        return _looks_made_up(value, family)
    return family == "pw" and (_has_shape(value) or len(words) >= 3) and len(words) <= 24


def _near_keyword(text: str) -> Iterator[Span]:
    for key in _NEAR.finditer(text):
        family = key.lastgroup
        ident = re.match(r"[\w.-]*", text[key.start():]).group(0)
        if _SETTING_NAME.search(ident):  # PASSWORD_RESET_TIMEOUT = 259200: a setting, no secret
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
            if rest and re.fullmatch(r"[A-Za-z_][\w.-]{0,31}", name) and not _looks_made_up(name, family):
                lead += len(name) + 1 + len(rest) - len(rest.lstrip(_OPENERS))
                value = rest.lstrip(_OPENERS)
            value = value.rstrip(".,;:)]}>'\"”’")
            if value and "[REDACTED" not in value and _looks_made_up(value, family):
                yield kind, start + m.start("v") + lead, start + m.start("v") + lead + len(value)


# ---- access codes said without the word "code", and security-question answers -------------------
# "the garage keypad is 4471", "the gate is 4471#", "door at the office: 8812*", "bike lock is
# 0729", 车库门禁 4471#: digits right after what they open. A year-shaped number (19xx, 20xx)
# or a short one needs a code's own marks (#, *, "punch in", "disarm", "enter"), so "the
# garage was built in 1994" and "locker 12" stay as they are.

_OPENS = (r"(?:garage|gate|front door|back door|side door|door|keypad|alarm|lock\s?box|key\s?safe|key\s?box|safe|"
          r"locker|padlock|bike lock|combination lock|lock|intercom|buzzer|entry|building|storage unit|shed|"
          r"mailbox|gym locker|panel)")
_ACCESS = re.compile(r"(?i)\b" + _OPENS + r"\b(?P<gap>(?:[ \t]+(?!(?:and|but|because|then)\b)[^\s.;!?,:=\d]+){0,5}?)"
                     r"(?:\s*(?:[:=：]|is|'s|’s|uses|takes|opens with|was changed to|changed to|now)\s*|\s+)"
                     r"(?:(?:now|still|just|the|same|new)\s+)*(?P<v>\d{3,10}[#*]?|[#*]\d{3,10}|\d{1,3}(?:-\d{1,3}){2,4})"
                     r"(?![\d:./%]|\s*(?:m|km|ft|feet|meters?|metres?|minutes?|mins?|hours?|am|pm|people|years?|"
                     r"kg|lbs?|sq|square|percent|dollars?|euros?|yuan|元|块)\b)")
_ZH_OPENS = r"(?:车库|大门|门禁|单元门|楼下门|入户门|房门|家门|门锁|密码锁|指纹锁|保险柜|保险箱|储物柜|柜子|自行车锁|车锁|报警器|电子锁|快递柜|信箱|智能锁)"
_ZH_ACCESS = re.compile(_ZH_OPENS + r"(?:的)?(?:密码|码|号码)?[^\n。！？；，,\d]{0,6}?(?:是|为|：|:|=|\s)*\s*"
                        r"(?P<v>\d{3,10}[#*＃]?|[#*]\d{3,10})(?![\d:./%]|\s*(?:米|分钟|小时|点|号楼|楼|层|岁|年|元|块|个|人|平))")
_CODE_MARKS = re.compile(r"(?i)[#*]|\b(?:punch|enter|type|key in|disarm|arm|unlock|open|code|combo|combination)\b|"
                         r"输入|按|解锁|开门|密码")


_ACCESS_OBJECT = re.compile(r"(?i)\b(?:garage|gate|door|keypad|alarm|lock\s?box|key\s?safe|safe|locker|padlock|lock|"
                            r"intercom|buzzer|entrance|entry|bin store|storage|shed|mailbox|panel|building)\b|"
                            r"车库|大门|门禁|单元门|门锁|密码锁|号码锁|指纹锁|电子锁|智能锁|保险柜|保险箱|储物柜|柜子|车锁|报警器|快递柜|信箱|"
                            r"报警|警报|撤防|布防|挂锁|衣柜|更衣柜|行李箱|锁")
_CODE_NUMBER = re.compile(r"(?<![A-Za-z0-9_.:/-])(?P<v>\d{4,10}[#*＃]?|[#*]\d{3,10}|\d{1,3}(?:[ -]\d{1,3}){2,5}(?![ -]?\d))(?![\w.:/%-]|\s*(?:m|km|ft|feet|metres?|meters?|"
                          r"minutes?|mins?|hours?|am|pm|people|years?|kg|lbs?|sq|percent|dollars?|euros?|yuan|"
                          r"米|分钟|小时|点|号楼|楼|层|岁|年|元|块|个|人|平|月|日|号)\b)")
_SENTENCE_END = re.compile(r"[.!?。！？\n](?=\s|$)|[。！？\n]")


# A dial lock's combination said as turns: "22 right, 8 left, 31 right", 右转 15 左转 27 右转 4,
# 左三圈到 18，右两圈到 42
_COMBINATION = re.compile(r"(?i)(?P<v>(?:\d{1,2}\s*(?:right|left|R|L)\b[,; ]*){3,}|"
                          r"(?:(?:right|left)\s+(?:to\s+)?\d{1,2}\b[,; ]*){3,}|"
                          r"(?:[左右](?:转|[一二两三四五六七八九\d]+圈)?(?:到)?\s*\d{1,2}[，,、 ]*){2,})")


def _access_codes(text: str) -> Iterator[Span]:
    """Also: an access object and, later in its sentence, a number shaped like a code that a
    code's marks or words of setting one surround ("the after-hours entrance wants a code,
    9931", "the garage keypad … so I changed it to 90817", 储物柜是那种号码锁，我设了4082)."""
    for obj in _ACCESS_OBJECT.finditer(text):
        end = _SENTENCE_END.search(text, obj.end())
        window_end = end.start() if end else len(text)
        starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, obj.start())]
        begin = starts[-1] if starts else 0
        if re.search(r"(?i)\benter\b|\btype\b|\bpunch\b|输入|按", text[begin:obj.start()]):
            window_start = begin   # "进门要在30秒内输入 8864 解除警报": the code before what it opens
        else:
            window_start = obj.end()
        window = text[window_start:window_end]
        if not re.search(r"(?i)\bcode\b|\bcombo\b|\bcombination\b|\bpin\b|changed (?:it )?to|set (?:it )?to|reset|"
                         r"\bis set\b|\benter\b|\btype\b|\bdisarm|[#*]|密码|码|改成|设了|设成|设置|输入|输|撤防|解除|挂锁|柜",
                         text[max(0, obj.start() - 30):window_end]):
            continue
        for m in _CODE_NUMBER.finditer(window):
            digits = re.sub(r"\D", "", m.group("v"))
            if len(digits) < 3:
                continue
            if re.fullmatch(r"(?:19|20)\d\d", digits) and not re.search(r"[#*]", m.group("v")):
                continue
            yield "password", window_start + m.start("v"), window_start + m.end("v")
    for m in _COMBINATION.finditer(text):
        yield "password", m.start("v"), m.end("v")
    for pattern in (_ACCESS, _ZH_ACCESS):
        for m in pattern.finditer(text):
            value = m.group("v")
            digits = re.sub(r"\D", "", value)
            year_like = bool(re.fullmatch(r"(?:19|20)\d\d", digits))
            labelled = bool(re.search(r"[:=：]\s*[#*]?\d", m.group(0)))
            if (year_like or len(digits) < 4) and not labelled \
                    and not _CODE_MARKS.search(value + " " + text[max(0, m.start() - 40):m.end() + 40]):
                continue
            yield "password", m.start("v"), m.end("v")


_SECURITY = re.compile(r"(?i)\b(?:security|secret|memorable|verification|challenge|recovery)\s+(?:question|answer|word|phrase|q)s?\b|"
                       r"\bmother'?s maiden name\b|\bmaiden name\b|密保(?:问题|答案)?|安全问题|安全提示问题|验证问题|预留问题")
_ANSWER = re.compile(r"(?i)(?:\b(?:it's|it is|is|was|answer(?:ed)?(?:\s+is)?|set (?:it )?to|put)\b|[:：=]|答案(?:是|为)?|是|填的是|填了|写的是|叫)\s*"
                     r"(?P<v>[\"“‘'「]?[^\s\"“”‘’'「」.,;:：!?。，；！？][^\n.,;!?。，；！？\"”’'」]{0,40})")


_ANSWER_GIVEN = re.compile(
    r"(?i)(?:\b(?:called|named|answer(?:ed)?(?:\s+is|:)?|is|was|it's|set (?:it )?to|put)\s+|[—:：=]\s*|"
    r"(?:填的|填了|写的|写了|设的|设了|答案是|答案为|答案写的|是|叫)\s*)"
    r"(?P<v>\d{4,12}|[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,3}(?:\s*[\u4e00-\u9fff]{2,6})?|"
    r"(?<=[的了是为叫])\s*[\u4e00-\u9fff]{2,8}(?=[，。！？,.!?\s]|$))")
_NOT_ANSWERS = frozenset("""I I'm The A An It Is Was My Gmail Google Yahoo Apple Microsoft Facebook Instagram Amazon
Omron Chase Visa Mastercard Amex PayPal Venmo Zelle What Which Who How Kind Like Also Just Anyway""".split())


def _security_answers(text: str) -> Iterator[Span]:
    """The answer to a security question, anywhere in a message that speaks of one: "my bank's
    security question is my first school, it's Hillcrest Elementary", "my first pet was a
    hamster called Nibbles McGee and that's the answer to every security question", 密保问题
    …我填的 19620514. What such a message names after "called", "is", "—" or 填的 goes."""
    if not _SECURITY.search(text) and not re.search(r"(?i)security (?:q|answer)|recovery question|找回问题", text):
        return
    for m in _ANSWER_GIVEN.finditer(text):
        value = m.group("v").strip()
        if not value or value.split()[0] in _NOT_ANSWERS or len(value) < (2 if re.match(r"[\u4e00-\u9fff]", value) else 3):
            continue
        if re.fullmatch(r"[\u4e00-\u9fff]+", value) and re.search(r"问题|密码|答案|什么|哪|重置|登录|登不上|不对", value):
            continue
        start = m.start("v") + m.group("v").find(value)
        yield "secret-answer", start, start + len(value)


# ---- identifiers named by what they are --------------------------------------------------------
# "member ID XGH448219077", "microchip number 985112004567321", "confirmation code K7QXRM",
# "verification code 318846", 身份证号110105199203154421 (with or without a valid checksum):
# whatever follows such a name, shaped like an identifier (digits, or letters with digits),
# is the person's and stays out.

_ID_NAME = re.compile(
    r"(?i)\b(?:member(?:ship)?\s*(?:id|number|no\.?|#)|policy\s*(?:number|no\.?|#)|insurance\s+(?:id|number|card)|"
    r"account\s*(?:number|no\.?|#)|(?:micro)?chip\s*(?:number|no\.?|id)?|confirmation\s*code|"
    r"booking\s*(?:reference|ref|code|number)|reservation\s*(?:code|number)|pnr|record\s+locator|"
    r"verification\s*code|one[- ]time\s*(?:code|password|passcode)|otp|2fa\s*code|security\s*code|"
    r"passport\s*(?:number|no\.?)|license\s*(?:number|no\.?)|licence\s*(?:number|no\.?)|"
    r"cvv2?|cvc|cid|security\s*code|one[- ]time\s*pass\s*code|passcode|authenticator(?:\s+(?:code|shows|says))?|"
    r"steam\s*guard|backup\s*codes?|recovery\s*(?:codes?|keys?)|"
    r"(?:nhs|ssn|sin|tax|patient|customer|student|employee|staff)\s*(?:id|number|no\.?))\b|"
    r"身份证(?:号码|号)?|证件号(?:码)?|护照号(?:码)?|会员(?:号|卡号)|保单号|医保(?:卡)?号|社保(?:卡)?号|学号|工号|"
    r"验证码|动态码|校验码|确认码|芯片号|驾驶证号|安全码|恢复代码|恢复码|备用验证码|备用码|账号|卡号|户号")
_ID_VALUE = re.compile(r"(?<![A-Za-z0-9_-])(?P<v>\d{2,6}(?: \d{2,6}){1,5}(?![ ]?\d)|"
                       r"(?=[A-Za-z0-9-]*[0-9A-Z])[A-Za-z0-9][A-Za-z0-9-]{2,40}[A-Za-z0-9])(?![A-Za-z0-9_-])")


def _identifiers(text: str) -> Iterator[Span]:
    for key in _ID_NAME.finditer(text):
        end = _SENTENCE_END.search(text, key.end())
        window_end = min(end.start() if end else len(text), key.end() + 60)
        m = _ID_VALUE.search(text, key.end(), window_end)
        if m is None:
            continue
        value = m.group("v")
        digits = sum(c.isdigit() for c in value)
        code_like = len(value) >= 5 and digits >= 1 and not value.islower()
        short_code = re.fullmatch(r"\d{3,4}", value) and re.search(r"(?i)cvv|cvc|cid|security code|安全码", key.group(0))
        if not (digits >= 4 or code_like or short_code) or re.fullmatch(r"(?:19|20)\d\d(?:-\d{1,2}){0,2}", value):
            continue   # a year or date, a word: not an identifier
        yield "identifier", m.start("v"), m.end("v")


# ---- shapes that are secrets wherever they stand ----------------------------------------------
# A seed phrase (12, 18 or 24 plain words said as a wallet's, a ledger's or a recovery's words),
# an IBAN (its check digits hold), a long random token of upper and lower case letters and
# digits (an API key pasted without its name: "ak 填成 Gh7Pq2Wm9Zx4…").

_SEED_CONTEXT = re.compile(r"(?i)seed (?:phrase|words)|mnemonic|recovery (?:phrase|words)|bip-?39|backup (?:phrase|words)|"
                           r"(?:wallet|metamask|ledger|trezor)\b.{0,40}\b(?:words|phrase|backup)|"
                           r"(?:words|phrase|backup)\b.{0,40}\b(?:wallet|metamask|ledger|trezor)|words?, in order|助记词")
# words a seed phrase never holds (BIP-39's list has none of them): a sentence is not a seed phrase
_NOT_SEED_WORDS = frozenset("the and then that this with from have there their they them what when which".split())
_SEED = re.compile(r"(?<![A-Za-z])(?P<v>[a-z]{3,8}(?:[ ,]+[a-z]{3,8}){11,23})(?![A-Za-z])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])(?P<v>[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)(?![A-Za-z0-9])")
_RANDOM_TOKEN = re.compile(r"(?<![\w/.=+-])(?P<v>(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*\d)"
                           r"[A-Za-z0-9]{20,80})(?![\w/.=+-])")
_PUBLIC = re.compile(r"(?i)ssh-(?:ed25519|rsa|dss)|ecdsa-sha2|BEGIN (?:PUBLIC KEY|CERTIFICATE)|\bintegrity\b|"
                     r"\bsha(?:1|256|384|512)-|\bchecksum\b|\bdigest\b")


def _iban_ok(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


_BARE_PASSWORD = re.compile(r"(?i)\b(?:password|passcode|pw|pwd)\s+(?P<v>[^\s,.;!?，。]{6,64})(?=[\s,.;!?，。]|$)")
_BEFORE_CODE = re.compile(r"(?i)(?<![\d-])(?P<v>\d{2,3}(?: \d{2,3}){1,3})(?![\d-])\s+(?:\w+\s+){0,3}?"
                          r"(?:one-time|otp|passcode|verification|2fa|code)\b")


def _phrases_and_codes(text: str) -> Iterator[Span]:
    for m in _BARE_PASSWORD.finditer(text):
        value = m.group("v")
        if value.lower() not in _ENGLISH_WORDS and not placeholder(value) \
                and (_has_shape(value) or len(value) >= 10) and not re.fullmatch(r"[a-z]+(?:ing|ed|s)", value):
            yield "password", m.start("v"), m.end("v")
    for m in _BEFORE_CODE.finditer(text):
        yield "password", m.start("v"), m.end("v")
    for m in re.finditer(r"(?:密码|口令)(?:是|为|：|:)\s*(?P<v>[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)+)", text):
        yield "password", m.start("v"), m.end("v")   # 密码是 meimei.loves.cats: dotted, still a password
    if _SEED_CONTEXT.search(text):
        for m in _SEED.finditer(text):
            words = re.split(r"[ ,]+", m.group("v"))
            if len(words) >= 12 and not _NOT_SEED_WORDS.intersection(words):
                yield "secret", m.start("v"), m.end("v")
    for m in _IBAN.finditer(text):
        if _iban_ok(m.group("v")):
            yield "bank-account", m.start("v"), m.end("v")
    for m in ([] if _PUBLIC.search(text) else _RANDOM_TOKEN.finditer(text)):
        if shannon_entropy(m.group("v")) >= 3.8:
            yield "token", m.start("v"), m.end("v")


# ---- a message about a credential ---------------------------------------------------------------
# Held-out phrasings kept showing values the rules above miss because they stand a sentence away
# from their name ("i keep mixing up my pins. visa is 2290"). In a message that speaks of a
# credential, any value shaped like one goes: 4 to 12 digits (not a year, a time, an amount or
# a measure), digits in groups, letters mixed with digits, a long token that is no word.

_CREDENTIAL_WORDS = re.compile(
    r"(?i)\b(?:pass(?:word|code|phrase)s?|pins?|pin code|otp|2fa|one[- ]time|verification|authenticator|"
    r"(?<!error )(?<!zip )(?<!postal )(?<!promo )(?<!discount )(?<!coupon )(?<!dress )(?<!country )(?<!area )"
    r"(?<!source )(?<!status )(?<!exit )(?<!qr )(?<!bar )(?<!reference )(?<!product )(?<!sku )codes?|"
    r"combo|combination|keypad|alarm|lockbox|padlock|locker|(?:the|a|my|our|wall|gun|hotel) safe|wi-?fi|login|log in|sign in|"
    r"security (?:question|answer|q)|maiden name|recovery|backup codes?|seed|cvv|cvc|account number|"
    r"routing|iban|card number|ssn|passport|licen[cs]e number|member id)\b|"
    r"密码|口令|验证码|校验码|动态码|门禁|密码锁|保险柜|储物柜|卡号|账号|身份证|护照|密保|安全码|恢复码")
_VALUE_IN_MESSAGE = re.compile(
    r"(?<![\w.:/$€£¥#-])(?P<v>\d{4,12}[#*]?|\d{2,4}(?:[ -]\d{2,4}){1,4}|(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])"
    r"[A-Za-z0-9]{5,40})(?![\w.:/%-]|\s*(?:am|pm|m|km|mi|ft|kg|lbs?|mins?|minutes?|hours?|hrs?|days?|weeks?|"
    r"months?|years?|people|percent|dollars?|euros?|yuan|rmb|usd|gb|mb|元|块|米|分钟|小时|天|岁|人|年|月|号|点|楼|层|平))")


def _credential_message(text: str) -> Iterator[Span]:
    if not _CREDENTIAL_WORDS.search(text) or _PUBLIC.search(text) \
            or re.search(r"(?i)\b(?:most common|weakest|worst|top \d+|list of|leaked)\b.{0,40}\bpasswords\b", text):
        return
    for m in _VALUE_IN_MESSAGE.finditer(text):
        value = m.group("v")
        digits = re.sub(r"\D", "", value)
        if re.fullmatch(r"(?:19|20)\d\d", digits) and not value.endswith(("#", "*")):
            continue   # a year
        if re.fullmatch(r"\d{1,2}-\d{1,2}(?:-\d{2,4})?|\d{4}-\d{2}-\d{2}", value):
            continue   # a date
        if re.fullmatch(r"[A-Za-z]+\d{1,2}|[A-Za-z]{1,3}\d{1,4}", value) and not re.search(r"\d{3,}", value):
            continue   # a model or route name: iPhone15, RTX4090-ish short forms, A3
        if placeholder(value) or value.lower() in _ENGLISH_WORDS or re.match(r"0x", value, re.I):
            continue
        yield "secret", m.start("v"), m.end("v")
