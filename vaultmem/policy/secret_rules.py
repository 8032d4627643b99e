"""gitleaks' rule set, read with Python's `re`: the provider token shapes (GitHub, Stripe,
Slack, AWS, GitLab, npm, PyPI, Twilio, SendGrid, …) that an established secret scanner
maintains, so vaultmem does not grow its own copy of each.

`data/gitleaks.toml` is gitleaks' default config, vendored unchanged (MIT licence beside it;
see `GITLEAKS_COMMIT`). gitleaks is written in Go, whose regexp syntax differs from Python's
in two ways that matter here: a flag group such as `(?i)` may stand in the middle of a
pattern (it then applies to the rest of its group), and `\\z` means end of text. Both are
translated; a rule that still does not compile is skipped and counted in `skipped`.

A rule matches as gitleaks matches it: its keywords (any, case-insensitive) must occur in the
text, the secret is the rule's `secretGroup`, else its first non-empty group, else the whole
match; the secret must reach the rule's Shannon entropy, and none of the rule's or the
global allowlists may let it through.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

GITLEAKS_COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
RULES_FILE = Path(__file__).parent / "data" / "gitleaks.toml"


@dataclass(frozen=True)
class Allow:
    """One allowlist: it lets a finding through when its regexes or stopwords say so."""
    target: str                     # "secret", "match" or "line"
    regexes: tuple[re.Pattern, ...]
    stopwords: tuple[str, ...]
    all_of: bool                    # condition = "AND"

    def allows(self, secret: str, match: str, line: str) -> bool:
        text = {"secret": secret, "match": match, "line": line}[self.target]
        checks = []
        if self.regexes:
            checks.append(any(r.search(text) for r in self.regexes))
        if self.stopwords:
            low = secret.lower()
            checks.append(any(w in low for w in self.stopwords))
        if not checks:
            return False
        return all(checks) if self.all_of else any(checks)


@dataclass(frozen=True)
class Rule:
    """One gitleaks rule. Its regex (`source`, already in Python's syntax) is compiled the
    first time a text holds one of its keywords: compiling all 221 took 0.2 CPU-s of every
    command that screens a text, and most texts hold no rule's keyword."""
    id: str
    source: str
    keywords: tuple[str, ...]
    entropy: float
    group: int | None
    allows: tuple[Allow, ...] = field(default=())
    _compiled: list = field(default_factory=list, compare=False, repr=False)

    @property
    def pattern(self) -> re.Pattern:
        if not self._compiled:
            self._compiled.append(_compile(self.source))
        return self._compiled[0]


def _compile(source: str) -> re.Pattern:
    with warnings.catch_warnings():  # RE2's `[[` is a plain bracket; Python warns of sets
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(source)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allows: tuple[Allow, ...]
    skipped: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    rule: str
    start: int
    end: int


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def go_to_python(pattern: str) -> str:
    """Translate a Go (RE2) pattern into Python's syntax: `\\z` → `\\Z`, and an inline flag
    group in mid-pattern, `(?i)rest`, into a scoped one, `(?i:rest)` up to its group's end."""
    pattern = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", pattern)
    if pattern.startswith("(?i)"):  # a global flag already: later ones are redundant
        return "(?i)" + pattern[4:].replace("(?i)", "")
    out, i, depth, opened = [], 0, 0, []  # opened: depths at which a scoped group was opened
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":
                out.append(pattern[i:i + (2 if pattern[i + 1] == "]" else 3)])
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif pattern.startswith("(?i)", i):
            out.append("(?i:")
            opened.append(depth)
            i += 4
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            while opened and opened[-1] == depth:
                out.append(")")
                opened.pop()
            depth -= 1
        out.append(c)
        i += 1
    out.extend(")" for _ in opened)
    return "".join(out)


def _allows(entries: list[dict]) -> tuple[Allow, ...]:
    allows = []
    for entry in entries:
        regexes = tuple(re.compile(go_to_python(r)) for r in entry.get("regexes", ()))
        stopwords = tuple(w.lower() for w in entry.get("stopwords", ()))
        if entry.get("paths") and entry.get("condition", "OR").upper() == "AND":
            continue  # needs a file path to match: never true for a conversation
        if regexes or stopwords:
            allows.append(Allow(entry.get("regexTarget", "secret"), regexes, stopwords,
                                entry.get("condition", "OR").upper() == "AND"))
    return tuple(allows)


@lru_cache(maxsize=1)
def load_rules(path: Path = RULES_FILE) -> RuleSet:
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    rules, skipped = [], []
    for raw in config.get("rules", ()):
        if "regex" not in raw:  # a rule on file names only (e.g. *.p12)
            continue
        keywords = tuple(k.lower() for k in raw.get("keywords", ()))
        source = go_to_python(raw["regex"])
        try:
            rule = Rule(raw["id"], source, keywords, float(raw.get("entropy", 0.0)),
                        raw.get("secretGroup"), _allows(raw.get("allowlists", ())))
            if not keywords:
                rule.pattern  # a rule tried on every text: compiled now
        except re.error:
            skipped.append(raw["id"])
            continue
        rules.append(rule)
    glob = config.get("allowlist", {})
    global_allows = _allows([{"regexes": glob.get("regexes", ())},
                             {"stopwords": glob.get("stopwords", ())}])
    return RuleSet(tuple(rules), global_allows, tuple(skipped))


def scan(text: str, rules: RuleSet | None = None) -> list[Finding]:
    """Every gitleaks finding in `text`, as the span of its secret."""
    rules = rules or load_rules()
    low = text.lower()
    found = []
    for rule in rules.rules:
        if rule.keywords and not any(k in low for k in rule.keywords):
            continue
        for match in rule.pattern.finditer(text):  # (test_secret_rules compiles every rule)
            group = rule.group or next((g for g in range(1, (match.re.groups or 0) + 1)
                                        if match.group(g)), 0)
            start, end = match.span(group)
            secret = text[start:end]
            if not secret or (rule.entropy and shannon_entropy(secret) < rule.entropy):
                continue
            line_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.end())
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            if any(a.allows(secret, match.group(0), line) for a in rule.allows + rules.allows):
                continue
            found.append(Finding(rule.id, start, end))
    return found
