"""Memory notes: parse and render Markdown files with YAML frontmatter (SPEC §3).

This is vaultmem's one frontmatter reader. python-frontmatter's handler splits the `---`
block from the body; under it, round-trip YAML (ruamel) keeps what the user wrote: unknown
keys, key order, comments, quoting, list indentation, CRLF line ends and a BOM. Code that
only reads properties (indexing, scanning many notes) uses `properties.read_properties` or
`properties.read_head`, the same split with a fast loader that leaves every scalar a
string. A note that cannot be read raises NoteParseError naming the path and the reason,
and is never rewritten.

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
from datetime import datetime
from pathlib import Path

from vaultmem.errors import NoteParseError
from vaultmem.store import plain_yaml
from vaultmem.store.limits import MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_VALUES, note_too_large

# The frontmatter's opening and closing lines: `---`, maybe trailing blanks, nothing else.
_FENCE_LINE = re.compile(r"^---[ \t]*(?:\n|\Z)", re.MULTILINE)


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
        if properties and not properties.endswith("\n"):
            # ruamel keeps a comment's trailing whitespace as it read it: a block that ended in
            # a blank line and a tab came back as "\n\t", and the closing line as "\t---".
            properties += "\n"
        out = "---\n" + note.blank_head + properties + "---\n"
    out += note.body
    if note.newline == "\r\n":
        out = out.replace("\r\n", "\n").replace("\n", "\r\n")
    return ("\ufeff" if note.bom else "") + out


def content_hash(text: str | bytes) -> str:
    """sha256 of a note's text: the index re-embeds a note only when this changes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
