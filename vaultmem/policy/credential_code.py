"""Credentials in code and config: assignments, headers, cookies, URLs, command lines.

`.env` lines and assignments with a secret-looking name (`DB_PASSWORD=…`, `api_key = "…"`),
`Authorization:` headers, cookies, passwords given to command-line tools (`mysql -p…`,
`--password …`), and credentials inside URLs and connection strings
(`postgres://user:pw@host`, `Password=…;`).
"""

from __future__ import annotations

import re
from typing import Iterator

from vaultmem.policy.credential_values import ENGLISH_WORDS, Span, has_shape, looks_made_up, placeholder, token_value_ok

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


SETTING_NAME = re.compile(
    r"(?i)(?:^|[_.-])(?:timeout|ttl|length|len|size|min|max|count|expir\w*|age|type|name|id|file|path|dir|"
    r"url|uri|host|port|user|username|header|field|prefix|endpoint|enabled|required|policy|hasher|"
    r"algorithm|format|mode|validators?|reset\w*)$")


def code(text: str) -> Iterator[Span]:
    for m in _ASSIGN.finditer(text):
        group = "qv" if m.group("qv") is not None else "v"
        value = m.group(group)
        if (placeholder(value) or value.lower() in ENGLISH_WORDS or m.group("q") == "`"
                or SETTING_NAME.search(m.group("name"))):
            continue
        env_line = m.group("name").isupper() and m.group("lead").strip() in ("", "export", "set", "-")
        quoted = group == "qv"
        if quoted or env_line or token_value_ok(value) or _name_kind(m.group("name")) == "password" and has_shape(value):
            if quoted and not env_line and " " in value.strip() and not has_shape(value):
                continue  # a sentence in quotes ("secret": "the party is on friday")
            yield _name_kind(m.group("name")), m.start(group), m.end(group)
    for m in _HEADER.finditer(text):
        if not placeholder(m.group("v")):
            yield "token", m.start("v"), m.end("v")
    for line in _COOKIE_LINE.finditer(text):
        for m in _COOKIE_PAIR.finditer(line.group("body")):
            value = m.group("v")
            if m.group("name").lower() in _COOKIE_ATTRS or not looks_made_up(value, "tok"):
                continue
            offset = line.start("body")
            yield "cookie", offset + m.start("v"), offset + m.end("v")
    for m in _CLI.finditer(text):
        group = next(g for g in "abcdefgh" if m.group(g))
        if not placeholder(m.group(group)) and has_shape(m.group(group)):
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
