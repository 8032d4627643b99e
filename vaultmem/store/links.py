r"""Wikilinks as Obsidian reads them: where they are in a note, and what they open.

    >>> [link.target for link in wikilinks(r"See [[Tea]], not `[[Code]]`. | ![[pic.png\|100]] |")]
    ['Tea', 'pic.png']
    >>> resolver = LinkResolver(vault_root)                 # doctest: +SKIP
    >>> resolver.resolve("properties")                      # doctest: +SKIP
    'Help/Properties.md'

Obsidian does not treat as links what sits in fenced code blocks, inline code or `%%comments%%`;
in a table row `\|` separates a link's target from its label. A target resolves by its
vault path (with or without `.md`), by a path's tail, else by file name, case-insensitively;
of several notes with one name the one in the linking note's folder wins, else the shortest
path. An alias alone does not resolve: Obsidian writes `[[Artificial Intelligence|AI]]`, not
`[[AI]]` (help.obsidian.md, "Aliases"). Standard library only: doctor and every write use it.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """One `[[target#anchor|label]]` (or `![[...]]`, an embed) as written (`raw`)."""

    target: str
    anchor: str = ""  # "Heading", "H1#H2" or "^block-id"; "" when none
    label: str = ""
    embed: bool = False
    raw: str = ""


# A fence opens a line (after indentation or `>` of a quote); its closing line is a run of
# the same character at least as long, and nothing else.
_FENCE = re.compile(r"[ \t>]*(`{3,}|~{3,})(.*)")
_TOKEN = re.compile(r"(`+)|%%|(!?)\[\[([^\[\]\n]*)\]\]")
_BLANK_LINE = re.compile(r"\n[ \t>]*\n")


def _without_fences(text: str) -> str:
    """`text` with every fenced code block's lines emptied (line breaks kept)."""
    out, fence = [], ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not match.group(2).strip():
                fence = ""
            out.append("")
        elif match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def parse_link(raw: str) -> Link:
    r"""`"![[Note#^b\|label]]"` -> Link("Note", "^b", "label", True); a bare target
    (a property value written without brackets) is read as `[[raw]]`."""
    raw = raw.strip()
    embed = raw.startswith("!")
    inner = raw[1:] if embed else raw
    if inner.startswith("[[") and inner.endswith("]]"):
        inner = inner[2:-2]
    else:
        raw, embed = f"[[{raw}]]", False
    destination, _, label = inner.replace("\\|", "|").partition("|")
    target, _, anchor = destination.partition("#")
    return Link(target.strip(), anchor.strip(), label.strip(), embed, raw)


def wikilinks(text: str) -> list[Link]:
    """Every `[[...]]` and `![[...]]` of Markdown `text` that Obsidian takes for a link:
    none in fenced code, inline code or `%%comments%%` (an unclosed `%%` hides the rest)."""
    prose = _without_fences(text or "")
    links, pos = [], 0
    while True:
        match = _TOKEN.search(prose, pos)
        if match is None:
            return links
        pos = match.end()
        ticks = match.group(1)
        if ticks:
            # A code span closes at the next run of exactly as many backticks in its paragraph.
            closing = re.compile(f"(?<!`){ticks}(?!`)").search(prose, pos)
            paragraph = _BLANK_LINE.search(prose, pos)
            if closing and (paragraph is None or closing.start() < paragraph.start()):
                pos = closing.end()
        elif match.group(0) == "%%":
            end = prose.find("%%", pos)
            pos = len(prose) if end < 0 else end + 2
        elif match.group(3).strip():
            links.append(parse_link(match.group(0)))


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower()


def _heading_key(text: str) -> str:
    """Headings compare without case, spaces and punctuation: Obsidian drops `: # | ^` and
    the like from the links it writes to a heading."""
    text = re.sub(r"\[\[([^\]|]*\|)?([^\]]*)\]\]", r"\2", text)
    return re.sub(r"[\W_]+", "", _key(text))


_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
# The frontmatter head read for aliases: enough for any sane properties block.
_HEAD_BYTES, _MAX_HEAD_BYTES = 4096, 256 * 1024


class LinkResolver:
    """Every file of a vault (dot-folders left out), to resolve links as Obsidian does.

    Built once (one directory walk); notes' `aliases` are read on first need. `add(rel)`
    tells it of a file written since."""

    def __init__(self, root):
        self.root = os.fspath(root)
        self.files: set[str] = set()
        self._by_path: dict[str, list[str]] = {}
        self._by_name: dict[str, list[str]] = {}
        self._aliases: dict[str, list[str]] | None = None
        self._anchors: dict[str, tuple[set, set]] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            folder = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            for filename in sorted(filenames):
                if not filename.startswith("."):
                    self.add(filename if folder == "." else f"{folder}/{filename}")

    def add(self, rel: str) -> None:
        """Know the file at vault-relative `rel` (a note or attachment written since)."""
        if rel in self.files:
            return
        self.files.add(rel)
        self._by_path.setdefault(_key(rel), []).append(rel)
        self._by_name.setdefault(_key(rel.rsplit("/", 1)[-1]), []).append(rel)
        if self._aliases is not None and rel.endswith(".md"):
            self._read_aliases(rel)

    # --- names and paths -------------------------------------------------------------
    def resolve(self, target: str, from_rel: str | None = None) -> str | None:
        """The vault-relative path `[[target]]` opens from the note `from_rel`, or None.

            >>> resolver.resolve("alice chen", "Memory/Facts/x.md")   # doctest: +SKIP
            'People/Alice Chen.md'
        """
        target = target.strip().replace("\\", "/")
        if not target:
            return from_rel
        folder = posixpath.dirname(from_rel) if from_rel else ""
        if target.startswith(("./", "../")):
            target = posixpath.normpath(posixpath.join(folder, target))
        target = _key(target.lstrip("/"))
        for key in (target + ".md", target):
            found = self._by_path.get(key)
            if found:
                return self._pick(found, from_rel)
        name = target.rsplit("/", 1)[-1]
        for key, tail in ((name + ".md", "/" + target + ".md"), (name, "/" + target)):
            found = [rel for rel in self._by_name.get(key, ()) if "/" not in target
                     or _key(rel).endswith(tail)]
            if found:
                return self._pick(found, from_rel)
        return None

    def _pick(self, rels: list[str], from_rel: str | None) -> str:
        if len(rels) > 1 and from_rel is not None:
            folder = posixpath.dirname(from_rel)
            here = [rel for rel in rels if posixpath.dirname(rel) == folder]
            if here:
                rels = here
        return min(rels, key=lambda rel: (rel.count("/"), len(rel), rel))

    def linktext(self, rel: str, from_rel: str | None = None) -> str:
        """What `[[...]]` to write for `rel`: its name when that resolves to it, else its
        path (`.md` dropped), as Obsidian's "shortest path when possible" does."""
        text = rel[:-3] if rel.endswith(".md") else rel
        name = text.rsplit("/", 1)[-1]
        return name if self.resolve(name, from_rel) == rel else text

    def note_named(self, name: str) -> tuple[str, bool] | None:
        """`(rel, is_alias)` of the note called `name` (a name or path), else of the note
        with that alias; None when there is neither."""
        rel = self.resolve(name)
        if rel is not None and rel.endswith(".md"):
            return rel, False
        rel = self.by_alias(name)
        return (rel, True) if rel is not None else None

    # --- aliases ---------------------------------------------------------------------
    def by_alias(self, name: str) -> str | None:
        """The note that lists `name` among its `aliases` (any case), or None."""
        if self._aliases is None:
            self._aliases = {}
            for rel in sorted(self.files):
                if rel.endswith(".md"):
                    self._read_aliases(rel)
        found = self._aliases.get(_key(name.strip()))
        return self._pick(found, None) if found else None

    def _read_aliases(self, rel: str) -> None:
        for alias in note_aliases(os.path.join(self.root, rel)):
            rels = self._aliases.setdefault(_key(alias), [])
            if rel not in rels:
                rels.append(rel)

    # --- anchors ---------------------------------------------------------------------
    def has_anchor(self, rel: str, anchor: str) -> bool:
        """Whether note `rel` has the heading (`H`, nested `H1#H2`) or block (`^id`)
        `anchor`; an empty anchor always exists."""
        anchor = anchor.strip()
        if not anchor:
            return True
        if rel not in self._anchors:
            self._anchors[rel] = _anchors_of(os.path.join(self.root, rel))
        headings, blocks = self._anchors[rel]
        if anchor.startswith("^"):
            return anchor[1:].lower() in blocks
        return all(_heading_key(part) in headings for part in anchor.split("#") if part.strip())

    def problem(self, link: Link, from_rel: str | None = None) -> str | None:
        """Why `link` in note `from_rel` opens nothing in Obsidian; None when it does."""
        rel = self.resolve(link.target, from_rel)
        if rel is None:
            owner = self.by_alias(link.target)
            if owner is not None:
                name = self.linktext(owner, from_rel)
                return f"links to an alias of {name}; write [[{name}|{link.target}]]"
            return "no such note"
        if link.anchor and rel.endswith(".md") and not self.has_anchor(rel, link.anchor):
            return "no such block" if link.anchor.startswith("^") else "no such heading"
        return None


def entity_link(resolver: LinkResolver, name: str, from_rel: str | None = None) -> str:
    """The `[[...]]` a memory writes for entity `name`: `[[name]]`, or `[[Alice Chen|Alice]]`
    when `name` is only an alias of a note (Obsidian resolves no bare alias)."""
    found = resolver.note_named(name)
    if found is not None and found[1]:
        return f"[[{resolver.linktext(found[0], from_rel)}|{name}]]"
    return f"[[{name}]]"


def _anchors_of(path: str) -> tuple[set, set]:
    """(heading keys, lower-case block ids) of the note at `path`, code blocks left out."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return set(), set()
    headings, blocks = set(), set()
    for line in _without_fences(text.replace("\r\n", "\n")).split("\n"):
        heading = _HEADING.fullmatch(line)
        if heading:
            headings.add(_heading_key(heading.group(2)))
        block = _BLOCK_ID.search(line)
        if block:
            blocks.add(block.group(1).lower())
    return headings, blocks


# --- frontmatter aliases, read without a YAML library ---------------------------------
_TOP_KEY = re.compile(r"([^\s#:\-\"'][^:]*?|\"[^\"]*\"|'[^']*'):(?:[ \t]+(.*?))?[ \t]*")
_ITEM = re.compile(r"[ \t]*-(?:[ \t]+(.*?))?[ \t]*")
_COMMENT = re.compile(r"[ \t]+#.*$")


def note_aliases(path: str) -> list[str]:
    """The `aliases` (or `alias`) property of the note at `path`, a list or one string,
    reading only its frontmatter. [] when there is none or the properties do not parse."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_HEAD_BYTES)
            if not data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
                return []
            while b"\n---" not in data and b"\n..." not in data and len(data) < _MAX_HEAD_BYTES:
                more = handle.read(_HEAD_BYTES)
                if not more:
                    break
                data += more
    except OSError:
        return []
    if b"alias" not in data:  # the key is `aliases` or `alias`: most notes have neither
        return []
    lines = data.decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        return []
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            return _aliases_in(lines[1:end]) or []
    return []


def _aliases_in(lines: list[str]) -> list[str] | None:
    """The aliases of a properties block's lines; None when a line is not YAML we know."""
    found, key = {}, None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("\t"):
            return None  # YAML allows no tab indentation
        item = _ITEM.fullmatch(line)
        if item and key is not None:
            if isinstance(found.get(key), list):
                value = _scalar(item.group(1) or "")
                if value is None:
                    return None
                found[key].append(value)
            continue
        if line[0] in " \t":
            continue  # a nested value of the key above
        top = _TOP_KEY.fullmatch(line)
        if top is None:
            return None
        key, value = top.group(1).strip("\"'"), (top.group(2) or "").strip()
        value = _COMMENT.sub("", value) if not value.startswith(("'", '"')) else value
        if not value:
            found[key] = []
        elif value.startswith("["):
            if not value.endswith("]"):
                return None
            items = [_scalar(v) for v in _split_flow(value[1:-1])]
            if None in items:
                return None
            found[key] = items
        else:
            found[key] = _scalar(value)
            if found[key] is None:
                return None
    for name in ("aliases", "alias"):
        value = found.get(name)
        if value:
            values = value if isinstance(value, list) else [value]
            return [str(v).strip() for v in values if str(v).strip()]
    return []


def _split_flow(text: str) -> list[str]:
    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ",":
            parts.append(current)
            current = ""
            continue
        current += char
    if current.strip() or parts:
        parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _scalar(text: str) -> str | None:
    """A one-line YAML scalar's string; None when it is broken (an unclosed quote)."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        if len(text) < 2 or text[-1] != text[0]:
            return None
        inner = text[1:-1]
        return inner.replace("''", "'") if text[0] == "'" else inner.replace('\\"', '"')
    if text[:1] in ("[", "{") and not text.endswith(("]", "}")):
        return None
    return text
