"""gitleaks' vendored rule set, read with Python's `re` (vaultmem/policy/secret_rules.py)."""

import re

import pytest

from vaultmem.policy.secret_rules import go_to_python, load_rules, scan, shannon_entropy


def test_every_rule_with_a_pattern_compiles():
    rules = load_rules()
    assert rules.skipped == ()
    assert len(rules.rules) >= 200
    assert {"github-pat", "stripe-access-token", "gitlab-pat", "npm-access-token",
            "generic-api-key"} <= {r.id for r in rules.rules}
    # Rules compile on first use (when a text holds a keyword): every one must compile.
    assert all(isinstance(rule.pattern, re.Pattern) for rule in rules.rules)


@pytest.mark.parametrize("go, python", [
    (r"\b(LTAI(?i)[a-z0-9]{20})(?:[\x60'\"\s;]|$)", r"\b(LTAI(?i:[a-z0-9]{20}))(?:[\x60'\"\s;]|$)"),
    (r"dp\.pt\.(?i)[a-z0-9]{43}", r"dp\.pt\.(?i:[a-z0-9]{43})"),
    (r"(?i)\b(pscale_pw_(?i)[\w=\.-]{32,64})", r"(?i)\b(pscale_pw_[\w=\.-]{32,64})"),
    (r"(?:[^\w-]|\z)", r"(?:[^\w-]|\Z)"),
    (r"\\z", r"\\z"),                                  # an escaped backslash, then a plain z
    (r"[(?i)]x", r"[(?i)]x"),                          # inside a class it is no flag group
])
def test_go_patterns_translate(go, python):
    assert go_to_python(go) == python
    re.compile(go_to_python(go))


@pytest.mark.parametrize("text, rule, secret", [
    ("deploy with glpat-Xy7Zk2Lm9Qr4Tv8Wn3Bc", "gitlab-pat", "glpat-Xy7Zk2Lm9Qr4Tv8Wn3Bc"),
    ("//registry.npmjs.org/:_authToken=npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6",
     "npm-access-token", "npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6"),
    ("hf token 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", "huggingface-access-token",
     "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"),
])
def test_provider_tokens_are_found(text, rule, secret):
    found = [f for f in scan(text) if f.rule == rule]
    assert found and text[found[0].start:found[0].end] == secret


def test_keywords_entropy_and_allowlists_hold():
    assert scan("nothing secret here, just a sentence about keys and tokens") == []
    low_entropy = "STRIPE_KEY=sk_live_aaaaaaaaaaaaaaaaaaaaaaaa"
    assert not [f for f in scan(low_entropy) if f.rule == "stripe-access-token"]
    assert shannon_entropy("aaaa") == 0 and shannon_entropy("abcd") == 2.0
