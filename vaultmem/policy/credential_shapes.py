"""Secrets known by their shape: seed phrases, IBANs, random tokens, and credential-shaped values.

A seed phrase, an IBAN whose check digits hold, a long random token pasted without its name,
a password given bare or a code said before the word "code" (`phrases_and_codes`); and in a
message that speaks of a credential, any value shaped like one (`credential_message`).
"""

from __future__ import annotations

import re
from typing import Iterator

from vaultmem.policy.credential_values import ENGLISH_WORDS, Span, has_shape, placeholder
from vaultmem.policy.secret_rules import shannon_entropy

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


def phrases_and_codes(text: str) -> Iterator[Span]:
    for m in _BARE_PASSWORD.finditer(text):
        value = m.group("v")
        if value.lower() not in ENGLISH_WORDS and not placeholder(value) \
                and (has_shape(value) or len(value) >= 10) and not re.fullmatch(r"[a-z]+(?:ing|ed|s)", value):
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


def credential_message(text: str) -> Iterator[Span]:
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
        if placeholder(value) or value.lower() in ENGLISH_WORDS or re.match(r"0x", value, re.I):
            continue
        yield "secret", m.start("v"), m.end("v")
