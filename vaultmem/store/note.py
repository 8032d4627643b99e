"""Memory notes: parse and render Markdown files with YAML frontmatter (SPEC §3).

This is vaultmem's one frontmatter reader. python-frontmatter's handler splits the `---`
block from the body; under it, round-trip YAML (ruamel) keeps what the user wrote: unknown
keys, key order, comments, quoting, list indentation, CRLF line ends and a BOM. Code that
only reads properties (indexing, scanning many notes) uses `read_properties` or
`read_head`, the same split with a fast loader that leaves every scalar a string. A note
that cannot be read raises NoteParseError naming the path and the reason, and is never
rewritten.

    >>> note = parse_note("---\\nid: A1\\ntype: fact\\n# mine\\nmood: fine\\n---\\nBody\\n")
    >>> note.meta["type"] = "preference"
    >>> print(render_note(note), end="")
    ---
    id: A1
    type: preference
    # mine
    mood: fine
    ---
    Body
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from vaultmem.errors import NoteParseError
from vaultmem.store import plain_yaml
from vaultmem.store.layout import NOTE_TYPES
from vaultmem.store.limits import MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_VALUES, note_too_large

STATUSES = ("active", "superseded", "archived")
REQUIRED_KEYS = ("id", "type", "created", "updated", "status", "user")
LINK_KEYS = ("entities", "sources", "supersedes", "superseded_by")

# The frontmatter's opening and closing lines: `---`, maybe trailing blanks, nothing else.
_FENCE_LINE = re.compile(r"^---[ \t]*(?:\n|\Z)", re.MULTILINE)
_TAG_OK = re.compile(r"^[^\s#,]+$")


@dataclass
class Note:
    """A parsed note. `meta` is a ruamel CommentedMap: edit it in place, then render."""

    meta: dict
    body: str
    path: Path | None = None
    newline: str = "\n"
    bom: bool = False
    had_frontmatter: bool = True
    seq_indent: tuple[int, int] = (4, 2)  # ruamel (sequence, offset): "  - item"
    blank_head: str = ""  # blank lines above the first property, which ruamel would thin out
    raw: str = field(default="", repr=False)

    def get(self, key, default=None):
        return self.meta.get(key, default) if self.meta else default

    @property
    def id(self) -> str:
        return str(self.get("id") or "")

    @property
    def type(self) -> str:
        return str(self.get("type") or "")

    @property
    def status(self) -> str:
        return str(self.get("status") or "active")

    @property
    def user(self) -> str:
        return str(self.get("user") or "default")

    @property
    def title(self) -> str:
        return self.path.stem if self.path else ""

    def statement(self) -> str:
        """The body without a leading `# heading` and surrounding blank lines."""
        return statement_of(self.body)


def statement_of(body: str) -> str:
    """A note body without a leading `# heading` and surrounding blank lines."""
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip()


def _yaml(seq_indent=(4, 2)):
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1_000_000  # never fold long values: Obsidian shows them as written
    yaml.indent(mapping=2, sequence=seq_indent[0], offset=seq_indent[1])
    yaml.allow_duplicate_keys = False
    yaml.representer.add_representer(datetime, _represent_datetime)
    yaml.representer.add_representer(type(None), _represent_empty)
    yaml.representer.add_representer(_AsWritten, _represent_as_written)
    # Obsidian's property editor does not understand anchors/aliases: never emit them.
    yaml.representer.ignore_aliases = lambda *args: True
    return yaml


_HANDLER = None


def _handler():
    """python-frontmatter's YAML handler with vaultmem's `---` lines and ruamel underneath.
    Only the handler is used: `frontmatter.parse`, `loads` and `dumps` strip the text and
    the body, which would change a note's bytes. Built on first use, since
    python-frontmatter imports PyYAML and `import vaultmem.store.note` should stay cheap."""
    global _HANDLER
    if _HANDLER is None:
        import frontmatter

        class RoundTripYAML(frontmatter.YAMLHandler):
            FM_BOUNDARY = _FENCE_LINE

            def load(self, fm: str, seq_indent=(4, 2)):
                return _yaml(seq_indent).load(fm)

            def export(self, metadata, seq_indent=(4, 2)) -> str:
                buf = io.StringIO()
                _yaml(seq_indent).dump(metadata, buf)
                return buf.getvalue()

        _HANDLER = RoundTripYAML()
    return _HANDLER


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(properties block, body) of note text without its BOM and with `\n` line ends, split
    at the `---` lines; None when the text does not open with a whole frontmatter.

        >>> split_frontmatter("---\\ntype: fact\\n---\\nBody\\n")
        ('type: fact\\n', 'Body\\n')
    """
    handler = _handler()
    if not handler.detect(text):
        return None
    try:
        yaml_text, body = handler.split(text)
    except ValueError:  # an opening line and no closing one
        return None
    return yaml_text, body


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


def _represent_datetime(representer, value: datetime):
    return representer.represent_scalar("tag:yaml.org,2002:timestamp", plain_yaml.datetime_text(value))


def _represent_empty(representer, value):
    # Obsidian writes an empty property as `key:`; ruamel would write `key: null`.
    return representer.represent_scalar("tag:yaml.org,2002:null", "")


def _guess_seq_indent(yaml_text: str) -> tuple[int, int]:
    match = re.search(r"^[^\s#][^\n]*:\s*\n( *)- ", yaml_text, re.MULTILINE)
    if match is None:
        return (4, 2)
    offset = len(match.group(1))
    return (offset + 2, offset)


def parse_note(text: str, path: Path | str | None = None) -> Note:
    """Parse note text. Raises NoteParseError (with path and reason) on bad frontmatter."""
    where = Path(path) if path else None
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    unix = text.replace("\r\n", "\n")
    parts = split_frontmatter(unix)
    if parts is None:
        if unix.startswith("---\n"):
            raise NoteParseError(where, "frontmatter starts with '---' but has no closing '---' line")
        return Note(meta={}, body=unix, path=where, newline=newline, bom=bom,
                    had_frontmatter=False, raw=text)
    yaml_text, body = parts
    check_frontmatter_text(yaml_text, where)
    blank_head = _BLANK_HEAD.match(yaml_text).group(0)
    yaml_text = yaml_text[len(blank_head):]
    seq_indent = _guess_seq_indent(yaml_text)
    try:
        meta = _handler().load(yaml_text, seq_indent) if yaml_text.strip() else None
    except Exception as exc:  # ruamel raises many error types; all mean "bad YAML"
        raise NoteParseError(where, _yaml_error_reason(exc, 2 + blank_head.count("\n"))) from None
    check_frontmatter_values(meta, where)
    if meta is None:
        from ruamel.yaml.comments import CommentedMap

        meta = CommentedMap()
    if not isinstance(meta, dict):
        raise NoteParseError(where, "frontmatter is not a mapping of properties (key: value)")
    _keep_spaced_datetimes(meta)
    _keep_plain_strings(meta)
    return Note(meta=meta, body=body, path=where, newline=newline, bom=bom,
                seq_indent=seq_indent, blank_head=blank_head, raw=text)


def check_frontmatter_text(yaml_text: str, path=None) -> None:
    """NoteParseError for a properties block too large or too deeply nested to parse fast.
    Brackets are counted without regard to quoting: only a value holding dozens of
    unbalanced `[` or `{` could be refused wrongly."""
    if len(yaml_text) > MAX_FRONTMATTER_BYTES:
        raise NoteParseError(path, f"frontmatter is over {MAX_FRONTMATTER_BYTES // 1024} KB — "
                             "move long text into the note's body")
    depth = deepest = 0
    for bracket in _BRACKETS.findall(yaml_text):
        depth = depth + 1 if bracket in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
        if deepest > MAX_FRONTMATTER_DEPTH:
            raise NoteParseError(path, f"frontmatter nests over {MAX_FRONTMATTER_DEPTH} levels deep "
                                 "— flatten the properties")


_BRACKETS = re.compile(r"[\[\]{}]")
_BLANK_HEAD = re.compile(r"(?:[ \t]*\n)*")


def check_frontmatter_values(meta, path=None) -> None:
    """NoteParseError when anchors and aliases expand the properties to more than
    MAX_FRONTMATTER_VALUES values (a "billion laughs") or make them contain themselves.
    Shared nodes are counted once per reference without being expanded: linear time."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node, depth=0) -> int:
        if not isinstance(node, (dict, list, tuple)):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if depth > MAX_FRONTMATTER_DEPTH:  # block-style nesting the bracket count missed
            raise NoteParseError(path, f"frontmatter nests over {MAX_FRONTMATTER_DEPTH} levels deep "
                                 "— flatten the properties")
        if key in open_nodes:
            raise NoteParseError(path, "frontmatter has an alias that contains itself — "
                                 "remove the YAML anchor (&) and alias (*)")
        open_nodes.add(key)
        items = [v for pair in node.items() for v in pair] if isinstance(node, dict) else node
        total = 1
        for item in items:
            total += size(item, depth + 1)
            if total > MAX_FRONTMATTER_VALUES:
                raise NoteParseError(path, f"frontmatter expands to over {MAX_FRONTMATTER_VALUES:,} "
                                     "values (YAML anchors and aliases?) — simplify the properties")
        open_nodes.discard(key)
        sizes[key] = total
        return total

    size(meta)


def _yaml_error_reason(exc: Exception, first_line: int = 2) -> str:
    """ruamel's message, with the line counted in the file (not in the YAML block, whose
    first line is the file's `first_line`) so that the user can go straight to it."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or not problem:
        detail = " ".join(str(exc).split("To suppress")[0].split()).replace('in "<unicode string>", ', "")
        return f"invalid YAML frontmatter: {detail[:300]} — fix the properties block"
    return (f"invalid YAML frontmatter at line {mark.line + first_line}, column {mark.column + 1}: "
            f"{' '.join(str(problem).split())[:200]} — fix the properties block")


def _keep_spaced_datetimes(meta) -> None:
    """ruamel loads `2026-11-29 10:30:00` (space, no offset) as a plain datetime, which
    vaultmem's representer would write back as `2026-11-29T10:30:00`: wrap such values in
    ruamel's TimeStamp (remembers the space) so that a user's own values render as written."""
    from ruamel.yaml.timestamp import TimeStamp

    def spaced(value):
        if type(value) is not datetime:
            return value
        stamp = TimeStamp(value.year, value.month, value.day, value.hour, value.minute,
                          value.second, value.microsecond)
        stamp._yaml["t"] = False
        return stamp

    for key, value in meta.items():
        if isinstance(value, list):
            for i, item in enumerate(value):
                value[i] = spaced(item)
        else:
            meta[key] = spaced(value)


class _AsWritten(str):
    """A user's unquoted value that `render_note` would otherwise quote (`value: no`): kept
    plain, so that rewriting a note leaves what a person wrote as written. A value vaultmem
    sets in its place is a plain `str` again, and quoted. (Not ruamel's PlainScalarString:
    a CommentedMap gives a new value the old one's ScalarString type.)"""


def _represent_as_written(representer, value):
    return representer.represent_str(str(value))


def _keep_plain_strings(meta) -> None:
    _map_strings(meta, lambda text: _AsWritten(text) if plain_yaml.reads_as_other_type(text) else text)


def _quote_ambiguous_strings(meta) -> None:
    """Quote the string values vaultmem set that a YAML 1.1 or 1.2 reader would take for
    another type (`no` a boolean, `1.0` a number, `12:30` an integer), so that each key
    has one type across the vault (SPEC §3)."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    def quoted(text):
        if _YAML_BREAKS.search(text):  # ruamel writes them raw, and YAML reads them as a space
            return DoubleQuotedScalarString(text)
        return SingleQuotedScalarString(text) if plain_yaml.reads_as_other_type(text) else text

    _map_strings(meta, quoted)


# Characters YAML takes for line breaks besides \n and \r (NEL, LS, PS): a message id or a
# title holding one must be written escaped to read back as itself.
_YAML_BREAKS = re.compile("[\x85\u2028\u2029]")


def _map_strings(node, change, depth=0) -> None:
    """Replace every value of exact type str (not keys, not already-styled strings) in a
    mapping or list, nested ones included, by `change(value)`."""
    if depth > MAX_FRONTMATTER_DEPTH:
        return
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(items):
        if type(value) is str:
            node[key] = change(value)
        elif isinstance(value, (dict, list)):
            _map_strings(value, change, depth + 1)


def read_note(path: Path | str) -> Note:
    """Read and parse a note file; NoteParseError for directories, non-UTF-8, empty or huge files."""
    path = Path(path)
    if path.is_dir():
        raise NoteParseError(path, "is a directory, not a Markdown file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NoteParseError(path, "file no longer exists") from None
    except PermissionError:
        raise NoteParseError(path, "permission denied; check the file's owner and mode") from None
    except OSError as exc:
        raise NoteParseError(path, f"cannot be read: {exc.strerror}") from None
    return parse_note_bytes(data, path)


def parse_note_bytes(data: bytes, path: Path | str | None = None) -> Note:
    if not data.strip():
        raise NoteParseError(path, "file is empty")
    if (too_large := note_too_large(len(data))):
        raise NoteParseError(path, too_large)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise NoteParseError(path, "UTF-16 encoded; re-save the file as UTF-8")
    if b"\x00" in data[:8192]:
        raise NoteParseError(path, "binary content in a .md file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteParseError(path, f"not UTF-8 (byte {exc.start}); re-save the file as UTF-8") from None
    return parse_note(text, path)


def render_note(note: Note) -> str:
    """Render a note back to text, in the note's own newline style and BOM."""
    out = ""
    if note.meta or note.had_frontmatter:
        _quote_ambiguous_strings(note.meta)
        properties = "" if not note.meta else plain_yaml.dump(note.meta, note.seq_indent) \
            or _handler().export(note.meta, seq_indent=note.seq_indent)
        out = "---\n" + note.blank_head + properties + "---\n"
    out += note.body
    if note.newline == "\r\n":
        out = out.replace("\r\n", "\n").replace("\n", "\r\n")
    return ("\ufeff" if note.bom else "") + out


def content_hash(text: str | bytes) -> str:
    """sha256 of a note's text: the index re-embeds a note only when this changes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


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
