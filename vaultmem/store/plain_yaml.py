"""The frontmatter vaultmem writes, emitted without ruamel where ruamel's output is certain.

ruamel's round-trip emitter took ~2.5 ms to write a memory note's dozen properties: 7 % of
extracting a LoCoMo conversation, more than any other step but the model. Most properties
vaultmem writes are flat: ids, dates, numbers, simple words, quoted wikilinks and lists of
them. For those `dump` writes the same bytes ruamel would (tests/test_plain_yaml.py holds
it to that over generated properties); anything it is not sure of - a comment, an anchor, a
flow-style list, a nested mapping, a string ruamel might quote or escape, a style it does
not know - returns None, and the caller lets ruamel write the whole block as before.

    >>> dump({"id": "a1", "tags": ["vaultmem/fact"], "importance": 0.5}, (4, 2))
    'id: a1\\ntags:\\n  - vaultmem/fact\\nimportance: 0.5\\n'
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache

# A string ruamel writes plain in a block mapping or list, and YAML reads back as the same
# string: it opens with a letter, digit or `_`, has no `: `, ` #` or line break, no
# leading or trailing space and only characters ruamel prints as they are (what
# `Emitter.analyze_scalar` allows with allow_unicode). Whether it reads as another type
# (`no`, `1.0`, `2026-01-02`) is asked of the resolvers separately.
_PRINTABLE = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
_PLAIN = re.compile(rf"(?=[^\W])(?!.*(?:: | #|:$| $))[{_PRINTABLE}]+", re.DOTALL)
# What ruamel writes inside quotes without an escape (double) or doubling (single: `'`).
_DOUBLE_QUOTED = re.compile(r'[\x20-\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*')
_SINGLE_QUOTED = re.compile(rf"[{_PRINTABLE}]*")
_FLOAT = re.compile(r"-?\d+\.\d+")


def dump(meta, seq_indent: tuple[int, int]) -> str | None:
    """The YAML block of the mapping `meta` as ruamel's round-trip dumper configured by
    `note._yaml(seq_indent)` writes it, or None when that is not certain."""
    if not _bare(meta):
        return None
    sequence, offset = seq_indent
    if sequence != offset + 2:
        return None
    dash = " " * offset + "- "
    lines = []
    for key, value in meta.items():
        if type(key) is not str or not _plain(key):
            return None
        if isinstance(value, list):
            if not _bare(value) or getattr(value, "fa", None) is not None and value.fa.flow_style():
                return None
            if not value:
                lines.append(f"{key}: []")
                continue
            lines.append(f"{key}:")
            for item in value:
                text = _scalar(item)
                if text is None:
                    return None
                lines.append(dash + text)
            continue
        text = _scalar(value)
        if text is None:
            return None
        lines.append(f"{key}: {text}" if text else f"{key}:")
    return "".join(line + "\n" for line in lines)


def datetime_text(value: datetime) -> str:
    """Obsidian's date-time property form: no space, no offset, no fraction (ruamel writes
    it through `note._represent_datetime`)."""
    return value.replace(tzinfo=None, microsecond=0).isoformat(timespec="seconds")


def _bare(node) -> bool:
    """A dict or list with nothing ruamel keeps beside its items: no comment, anchor, tag
    or merge key."""
    comments = getattr(node, "ca", None)
    if comments is not None and (comments.comment or comments.items or getattr(comments, "end", None)):
        return False
    anchor = getattr(node, "anchor", None)
    if anchor is not None and anchor.value:
        return False
    tag = getattr(node, "tag", None)
    if tag is not None and getattr(tag, "value", None):
        return False
    return not getattr(node, "merge", None)


def _scalar(value) -> str | None:
    kind = type(value)
    if kind is str:
        return value if _plain(value) else None
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        text = repr(value)
        return text if _FLOAT.fullmatch(text) else None
    if kind is datetime:
        return datetime_text(value)
    if kind is date:
        return value.isoformat()
    name = kind.__name__
    if getattr(value, "anchor", None) is not None and value.anchor.value:
        return None
    if name == "DoubleQuotedScalarString" and _DOUBLE_QUOTED.fullmatch(value):
        return f'"{value}"'
    if name == "SingleQuotedScalarString" and "\n" not in value and _SINGLE_QUOTED.fullmatch(value):
        return "'" + str(value).replace("'", "''") + "'"
    return None


def _plain(text: str) -> bool:
    if not _PLAIN.fullmatch(text) or text.startswith(("---", "...")):
        return False
    return not reads_as_other_type(text)


_YAML11_EXTRA = re.compile(r"[yYnN]")  # booleans in the YAML 1.1 spec that PyYAML leaves out
_RESOLVERS = None


@lru_cache(maxsize=8192)  # asked of every value a note is written with; values repeat
def reads_as_other_type(text: str) -> bool:
    """True when `text`, written as a plain scalar, is not read back as a string by YAML
    1.1 (PyYAML, Obsidian's older readers) or YAML 1.2 (ruamel): `no`, `on`, `~`, `1.0`,
    `0x1f`, `12:30`, `2026-11-29`, `=`...

        >>> reads_as_other_type("no"), reads_as_other_type("Porto")
        (True, False)
    """
    global _RESOLVERS
    if _RESOLVERS is None:
        import ruamel.yaml.nodes
        import ruamel.yaml.resolver
        import yaml

        _RESOLVERS = ((yaml.resolver.Resolver(), yaml.nodes.ScalarNode),
                      (ruamel.yaml.resolver.VersionedResolver(), ruamel.yaml.nodes.ScalarNode))
    if not text or _YAML11_EXTRA.fullmatch(text):
        return True
    return any(resolver.resolve(node, text, (True, False)) != "tag:yaml.org,2002:str"
               for resolver, node in _RESOLVERS)
