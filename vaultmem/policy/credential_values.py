"""What a credential's value must be and must not be: the checks every credential rule shares.

A value that stands for a secret without being one (a placeholder, a reference to a
variable or a call, a URL, a path, a date, a plain English word) is never redacted; one that
looks made up (letters with digits or symbols, a long random string, digits for a PIN) may be.
"""

from __future__ import annotations

import re

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
ENGLISH_WORDS = {
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


def placeholder(value: str) -> bool:
    """A value that stands for a secret without being one (or refers to one elsewhere), or
    is something else a sentence about secrets holds: a URL, an address, a path, a date."""
    value = value.strip().strip("\"'`“”‘’")
    return (len(value) < 2 or bool(_PLACEHOLDER.match(value)) or bool(_REFERENCE.search(value))
            or len(set(value.lower())) == 1 or bool(_NOT_VALUE.match(value)))


def has_shape(value: str) -> bool:
    """Looks made up rather than a word: digits with letters, a symbol, or inner capitals."""
    letters = re.search(r"[A-Za-z]", value)
    return bool((letters and re.search(r"\d", value)) or re.search(r"[!@#$%^&*+=~?|]", value.strip(".,!?")))


def token_value_ok(value: str) -> bool:
    """A named token, key or secret: long and random-looking, never a plain word."""
    if placeholder(value) or value.lower() in ENGLISH_WORDS:
        return False
    if re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", value):  # a slug or identifier, not a token
        return False
    return (len(value) >= 16 and not re.fullmatch(r"[A-Za-z]+", value)) or (len(value) >= 6 and has_shape(value))


def looks_made_up(value: str, family: str) -> bool:
    """Whether `value` looks made up for a keyword of `family` ("pin", "pw" or "tok")."""
    if placeholder(value) or _NOT_VALUE.match(value) or value.lower() in ENGLISH_WORDS:
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
