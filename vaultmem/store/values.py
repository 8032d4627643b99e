"""Property values of memory notes (SPEC §3): read (`as_date`, `as_datetime`, `as_list`,
`link_target`), written for a new memory (`new_memory_meta`, `link`, `clean_tag`) and checked
(`validate_memory`).
"""

from __future__ import annotations

import re
from datetime import date, datetime

from vaultmem.store.layout import NOTE_TYPES
from vaultmem.store.note import Note

STATUSES = ("active", "superseded", "archived")
REQUIRED_KEYS = ("id", "type", "created", "updated", "status", "user")
LINK_KEYS = ("entities", "sources", "supersedes", "superseded_by")

_TAG_OK = re.compile(r"^[^\s#,]+$")


def link(target: str) -> str:
    """A wikilink as a property value, double-quoted as Obsidian writes it."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    inner = target if target.startswith("[[") else f"[[{target}]]"
    return DoubleQuotedScalarString(inner)


def new_memory_meta(*, id: str, type: str, created: datetime, user: str,
                    importance: float | None = None, tags=(), entities=(), sources=(),
                    source_messages=(), valid_from: date | None = None,
                    valid_to: date | None = None, run: str | None = None,
                    confidence: float | None = None, extra: dict | None = None):
    """Frontmatter for a new memory note, keys in SPEC §3 order, Obsidian-typed values."""
    from ruamel.yaml.comments import CommentedMap

    meta = CommentedMap()
    meta["id"] = id
    meta["type"] = type
    meta["created"] = created
    meta["updated"] = created
    if valid_from:
        meta["valid_from"] = valid_from
    if valid_to:
        meta["valid_to"] = valid_to
    meta["status"] = "active"
    if importance is not None:
        meta["importance"] = round(float(importance), 2)
    if confidence is not None:
        meta["confidence"] = round(float(confidence), 2)
    meta["user"] = user
    meta["tags"] = [clean_tag(t) for t in dict.fromkeys([f"vaultmem/{type}", *tags]) if clean_tag(t)]
    if entities:
        meta["entities"] = [link(e) for e in dict.fromkeys(entities)]
    if sources:
        meta["sources"] = [link(s) for s in dict.fromkeys(sources)]
    if source_messages:
        meta["source_messages"] = [str(m) for m in dict.fromkeys(source_messages)]
    if run:
        meta["run"] = run
    for key, value in (extra or {}).items():
        meta[key] = value
    return meta


def clean_tag(tag: str) -> str:
    """Obsidian tags: no leading '#', no spaces or commas."""
    tag = str(tag).strip().lstrip("#")
    return re.sub(r"[\s,#]+", "-", tag).strip("-")


def as_date(value) -> date | None:
    """A frontmatter date or date-time value (or its string) as a date; None if absent/bad."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return datetime.fromisoformat(str(value).strip().replace(" ", "T")).date()
    except ValueError:
        return None


def as_datetime(value) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, value.hour, value.minute, value.second)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    try:
        return datetime.fromisoformat(str(value).strip().replace(" ", "T")).replace(tzinfo=None)
    except ValueError:
        return None


def link_target(value) -> str:
    """`"[[Sessions/x#^m-1|alias]]"` -> `Sessions/x#^m-1`."""
    text = str(value).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    return text.split("|", 1)[0]


def link_note(value) -> str:
    """The name of the note a link points into: `"[[Sessions/x#^m-1|alias]]"` -> `x`."""
    return link_target(value).split("#", 1)[0].rsplit("/", 1)[-1]


def as_list(value) -> list:
    if value in (None, ""):
        return []
    if isinstance(value, (list, tuple)):
        return [v for v in value if v not in (None, "")]
    return [value]


def validate_memory(note: Note) -> list[str]:
    """Problems that keep a note from being a valid memory note (SPEC §3); [] when fine."""
    problems = []
    meta = note.meta or {}
    for key in REQUIRED_KEYS:
        if meta.get(key) in (None, ""):
            problems.append(f"missing required property '{key}'")
    if meta.get("type") not in (None, "") and meta.get("type") not in NOTE_TYPES:
        problems.append(f"type '{meta.get('type')}' is not one of {', '.join(NOTE_TYPES)}")
    if meta.get("status") not in (None, "") and meta.get("status") not in STATUSES:
        problems.append(f"status '{meta.get('status')}' is not one of {', '.join(STATUSES)}")
    for key in ("created", "updated"):
        if meta.get(key) not in (None, "") and as_datetime(meta.get(key)) is None:
            problems.append(f"'{key}' is not a date-time (YYYY-MM-DDTHH:mm:ss)")
        elif getattr(meta.get(key), "tzinfo", None) is not None:
            problems.append(f"'{key}' has a time-zone offset; Obsidian wants YYYY-MM-DDTHH:mm:ss")
    for key in ("valid_from", "valid_to"):
        if meta.get(key) not in (None, "") and as_date(meta.get(key)) is None:
            problems.append(f"'{key}' is not a date (YYYY-MM-DD)")
    for key in ("importance", "confidence"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 <= value <= 1):
            problems.append(f"'{key}' must be a number from 0 to 1")
    for tag in as_list(meta.get("tags")):
        if not _TAG_OK.match(str(tag)):
            problems.append(f"tag '{tag}' has spaces, commas or '#'")
    for key in LINK_KEYS:
        for value in as_list(meta.get(key)):
            # An unquoted [[X]] is a YAML nested list whose str() also looks like "[['X']]".
            if not (isinstance(value, str) and value.startswith("[[") and value.endswith("]]")):
                hint = " (quote it: \"[[...]]\")" if isinstance(value, list) else ""
                problems.append(f"'{key}' value '{value}' is not a [[wikilink]]{hint}")
    return problems
