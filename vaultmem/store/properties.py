"""Fast property readers: a note's properties read as strings, for code that reads many notes
and never writes back (`read_properties`, `read_head`, `scan_properties`, `merged_ids`). They
split the text as `note.parse_note` does and keep its size, depth and alias limits.
"""

from __future__ import annotations

import re
from pathlib import Path

from vaultmem.errors import NoteParseError
from vaultmem.store.limits import MAX_FRONTMATTER_BYTES
from vaultmem.store.note import check_frontmatter_text, check_frontmatter_values, split_frontmatter
from vaultmem.store.values import as_list

_STRING_LOADER = None


def _load_strings(yaml_text: str):
    """libyaml with every scalar left a string: ~27x faster than the round-trip parser,
    and readers want strings anyway (dates, ids and numbers stay as written). ValueError
    on bad YAML."""
    global _STRING_LOADER
    import yaml

    if _STRING_LOADER is None:
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        _STRING_LOADER = type("StringLoader", (base,), {"yaml_implicit_resolvers": {}})
    try:
        return yaml.load(yaml_text, Loader=_STRING_LOADER)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def read_properties(text: str, path=None) -> tuple[dict, str] | None:
    """(properties, body) of note text (BOM and CRLF removed), read fast with every scalar a
    string, for code that reads and never writes back. None when there is no frontmatter
    or one only `parse_note` should judge (bad YAML, not a mapping, empty), so that the
    caller can fall back to it and its error messages. The same size, depth and alias
    limits as `parse_note` (NoteParseError). Known difference: duplicate keys, which the
    round-trip parser rejects and this one lets the last win."""
    parts = split_frontmatter(text)
    if parts is None:
        return None
    yaml_text, body = parts
    check_frontmatter_text(yaml_text, path)
    try:
        meta = _load_strings(yaml_text)
    except ValueError:
        return None
    if not isinstance(meta, dict):
        return None
    check_frontmatter_values(meta, path)
    return meta, body


_HEAD_BYTES = 4096


def _unix_text(data: bytes) -> str:
    return data.decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n")


def read_head(path: Path | str) -> dict[str, str]:
    """The scalar properties of the note at `path`, as written (strings), reading the file
    only as far as its closing `---`: fast enough to scan thousands of notes. {} when the
    note has no frontmatter or it cannot be read or parsed.

        >>> read_head("Memory/Facts/Tea.md")                       # doctest: +SKIP
        {'id': '01J...', 'type': 'fact', 'status': 'active', 'user': 'default', ...}
    """
    try:
        with open(path, "rb") as handle:
            data, at_end = b"", False
            while not at_end and len(data) <= MAX_FRONTMATTER_BYTES:
                want = max(_HEAD_BYTES, len(data))
                more = handle.read(want)
                data, at_end = data + more, len(more) < want
                # Read on to the closing `---` (a long session's `message_ids` outgrow the
                # first read), judging whole lines only: a cut `----` is no closing line.
                text = _unix_text(data if at_end else data[:data.rfind(b"\n") + 1])
                parts = split_frontmatter(text)
                if parts or not text.startswith("---"):
                    break
    except OSError:
        return {}
    if parts is None or len(parts[0]) > MAX_FRONTMATTER_BYTES:
        return {}
    scanned = _scan_scalars(parts[0])
    if scanned is not None:
        return scanned
    try:
        found = read_properties(text, path)
    except NoteParseError:
        return {}
    return {str(key): value for key, value in found[0].items() if isinstance(value, str)} if found else {}


def merged_ids(path: Path | str) -> list[str]:
    """The ids of notes merged into this one (`merged_ids`: the same memory created on two
    devices, see `vaultmem.sync.merge`), which name it as well as its `id` does."""
    try:
        with open(path, "rb") as handle:
            head = _unix_text(handle.read(MAX_FRONTMATTER_BYTES))
    except OSError:
        return []
    if "merged_ids:" not in head:
        return []
    parts = split_frontmatter(head)
    found = scan_properties(parts[0]) if parts else None
    return [str(v) for v in as_list((found or {}).get("merged_ids"))]


_SCAN_LINE = re.compile(r"([A-Za-z_][\w.-]*):(?: +(.*?))? *")
_SCAN_ITEM = re.compile(r"( *)- +(.*?) *")
# Tabs, control characters and the characters YAML takes for line breaks: left to YAML.
_ODD = "\t\x00-\x1f\x7f-\x9f\u2028\u2029"
# A one-line plain scalar: no indicator first, no ": " or " #" inside, no ":" last.
_PLAIN = re.compile(f"[^-?:,\\[\\]{{}}#&*!|>'\"%@`\\s{_ODD}](?:(?!: | #)[^{_ODD}])*(?<!:)")
_QUOTED = re.compile(f"\"[^\"\\\\{_ODD}]*\"|'[^'{_ODD}]*'")


def _scan_scalars(yaml_text: str) -> dict[str, str] | None:
    """The top-level scalar properties of a properties block, read line by line: several
    times faster than libyaml (whose constructor is Python) and the same strings wherever
    it answers. It answers for `key: value` lines with plain or simply quoted one-line
    values and lists of such values under a bare `key:`; anything else (a comment after a
    value, an anchor, a multi-line or escaped string...) returns None: ask YAML."""
    found = scan_properties(yaml_text)
    return None if found is None else {k: v for k, v in found.items() if isinstance(v, str)}


def scan_properties(yaml_text: str) -> dict[str, str | list[str]] | None:
    """`_scan_scalars` with the lists too (each a list of strings), for the same simple
    blocks; None for anything else."""
    found: dict = {}
    list_key, indent = None, None  # the bare `key:` whose list items follow, and their indent
    for line in yaml_text.split("\n"):
        if not line.strip(" ") or line.lstrip(" ").startswith("#"):
            continue
        item = _SCAN_ITEM.fullmatch(line)
        if item:
            if list_key is None or indent not in (None, item.group(1)) or not _scalar(item.group(2)):
                return None
            if indent is None:
                found[list_key] = []  # a list, not a scalar
            indent = item.group(1)
            value = item.group(2)
            found[list_key].append(value[1:-1] if _QUOTED.fullmatch(value) else value)
            continue
        match = _SCAN_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.group(1), match.group(2) or ""
        list_key, indent = (None if value else key), None
        if value and not _scalar(value):
            return None
        found[key] = value[1:-1] if _QUOTED.fullmatch(value) else value
    return found


def _scalar(value: str) -> bool:
    return bool(_QUOTED.fullmatch(value) or _PLAIN.fullmatch(value))
