"""The person's own notes as index chunks: read-only reference beside the memories.

A note a person writes is not a memory: it has any frontmatter or none (broken YAML too),
long sections, callouts, embeds, tables and code. It is cut by heading, then into groups of
paragraphs of up to NOTE_CHUNK_WORDS; each chunk remembers its heading path and links to the
exact place (`[[Note#Heading]]`, or `[[Note#^block]]` when its block has an id). What a hit
shows is readable text: callouts as "Tip: …", embeds and links by their names, tables as
rows, code without its fences. The embedded text carries the note's title and heading path
(and its aliases); its tags and folder go to full-text search.

    >>> chunks = chunk_user_note(b"# Tea\\n\\nGreen tea, no sugar.", "Food/Tea.md")
    >>> chunks[0].type, chunks[0].text, chunks[0].sources
    ('note', 'Green tea, no sugar.', ['[[Tea]]'])
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from vaultmem.index.chunking import Chunk, as_list, as_text, bar_list
from vaultmem.store.links import parse_link
from vaultmem.text.script import CJK as _CJK_CHAR

NOTE_TYPE = "note"
# Words per chunk of a person's note: a section longer than this is cut at paragraphs, a
# paragraph longer than this at sentences. Chinese counts a character as 2/3 of a word.
NOTE_CHUNK_WORDS = 120
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$")
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")
_CALLOUT = re.compile(r"^\[!([A-Za-z0-9_-]+)\][+-]?[ \t]*(.*)$")
_LINK = re.compile(r"!?\[\[[^\]]*?\]\]")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_COMMENT = re.compile(r"%%.*?%%|<!--.*?-->", re.S)
_HTML_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_EMPHASIS = re.compile(r"(\*\*|__|==|~~)(?=\S)(.+?)(?<=\S)\1")
_TABLE_RULE = re.compile(r"^\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_RULE = re.compile(r"^[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；])\s*")
_ATTACHMENT = re.compile(r"\.(?:png|jpe?g|gif|bmp|svg|webp|avif|pdf|mp3|mp4|m4a|wav|ogg|webm|mov|"
                         r"mkv|flac|3gp|canvas|base|excalidraw)$", re.I)


def words(text: str) -> float:
    """Length in words; a CJK character counts 2/3 of one (Chinese has no spaces)."""
    cjk = len(_CJK_CHAR.findall(text))
    return len(_CJK_CHAR.sub(" ", text).split()) + cjk * 2 / 3


def read_user_note(data: bytes) -> tuple[dict, str]:
    """(properties, body) of a note's bytes. Never raises for what a person may write: bad
    YAML leaves the properties empty (the body is still read), a file that is not UTF-8 is
    read with replacement characters."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n"):
        return {}, text
    end = re.search(r"^(?:---|\.\.\.)[ \t]*$", text[4:], re.M)
    if end is None:
        return {}, text
    head, body = text[4:4 + end.start()], text[4 + end.end():].lstrip("\n")
    try:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        meta = yaml.load(head, Loader=loader)  # noqa: S506  (a safe loader)
    except Exception:  # yaml.YAMLError, or a recursion/size error on odd input
        meta = None
    if not isinstance(meta, dict):   # not properties after all: keep its words searchable
        return {}, head + "\n\n" + body
    return meta, body


def readable(line: str) -> str:
    """One line of Markdown as the text a reader sees (code spans as they are written)."""
    parts = _INLINE_CODE.split(line)
    # split() yields text, fence, code, text, …: every third piece from 2 is code.
    return " ".join(" ".join((_prose(p) if n % 3 == 0 else p.strip() if n % 3 == 2 else "")
                             for n, p in enumerate(parts)).split())


def _prose(line: str) -> str:
    line = _LINK.sub(lambda m: _shown(m.group(0)), line)
    line = _MD_IMAGE.sub(lambda m: m.group(1), line)
    line = _MD_LINK.sub(lambda m: m.group(1), line)
    line = _HTML_TAG.sub(" ", line)
    line = _EMPHASIS.sub(lambda m: m.group(2), line)
    return " ".join(line.split())


def _shown(raw: str) -> str:
    """What a reader sees of a `[[link]]` or `![[embed]]` (read by `links.parse_link`): its
    label, else its note's name and heading; an embedded image or file shows nothing (its
    size label is not text either)."""
    link = parse_link(raw)
    if link.embed and _ATTACHMENT.search(link.target):
        return ""
    if link.label:
        return link.label
    heading = "" if link.anchor.startswith("^") else link.anchor.replace("#", " › ")
    return " › ".join(x for x in (link.target.rsplit("/", 1)[-1], heading) if x)


def _blocks(body: str) -> list[tuple[tuple, str, str]]:
    """(heading path, text, block id) for each block of the body, in order: a paragraph
    (with the list it introduces), a list, a table, a callout or quote, a code block.
    Headings open sections; a `^id` on its own line names the block before it."""
    path: list[tuple[int, str]] = []
    lines = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), body).split("\n")
    blocks: list[tuple[tuple, str, str]] = []
    current: list[str] = []
    kind = fence = None

    def flush():
        nonlocal current, kind
        if current:
            text, block_id = _render(kind, current)
            if text:
                blocks.append((tuple(h for _, h in path), text, block_id))
            elif block_id and blocks and not blocks[-1][2]:
                blocks[-1] = (*blocks[-1][:2], block_id)
        current, kind = [], None

    for line in lines:
        if fence is not None:
            if re.match(rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", line):
                fence = None
                flush()
            else:
                current.append(line)
            continue
        opened = _FENCE.match(line)
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            flush()
            fence, kind = opened.group(1), "code"
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            path = [(n, h) for n, h in path if n < level] + [(level, readable(heading.group(2)))]
            continue
        if not line.strip() or _RULE.match(line):   # a thematic break (---, ***) ends a block too
            flush()
            continue
        stripped = line.lstrip()
        line_kind = "quote" if stripped.startswith(">") else "table" if stripped.startswith("|") \
            else "list" if re.match(r"^(?:[-*+]|\d+[.)])\s", stripped) else "text"
        if current and line_kind != kind and {kind, line_kind} != {"text", "list"}:
            flush()
        kind = kind or line_kind
        current.append(line)
    flush()
    return blocks


def _render(kind, lines) -> tuple[str, str]:
    """(readable text, block id) of one block's lines."""
    block_id = ""
    if kind != "code" and lines:
        found = _BLOCK_ID.search(lines[-1])
        if found:
            block_id = found.group(1)
            lines = lines[:-1] + [lines[-1][:found.start()]]
    if kind == "code":
        return "\n".join(line.rstrip() for line in lines if line.strip()), ""
    out = []
    for line in lines:
        if kind == "quote":
            line = re.sub(r"^\s*(?:>\s?)+", "", line)
            callout = _CALLOUT.match(line)
            if callout:
                label = callout.group(1).capitalize()
                line = f"{label}: {callout.group(2)}" if callout.group(2).strip() else f"{label}:"
        elif kind == "table":
            if _TABLE_RULE.match(line.strip()):
                continue
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            line = " · ".join(readable(c.replace("\\|", "|")) for c in cells if c.strip())
            out.append(line)
            continue
        text = readable(line)
        if text:
            out.append(text)
    return "\n".join(out), block_id


def _pieces(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most ~`limit` words, cut at sentence ends (CJK ones too)."""
    if words(text) <= limit:
        return [text]
    pieces, current = [], ""
    for sentence in (s for s in _SENTENCE_END.split(text) if s.strip()):
        if current and words(current) + words(sentence) > limit:
            pieces.append(current.strip())
            current = ""
        while words(sentence) > limit:
            head = sentence.split()
            if len(head) > 1:
                cut = max(1, int(limit))
                pieces.append(" ".join(head[:cut]))
                sentence = " ".join(head[cut:])
            else:   # one long run without spaces (Chinese): cut by characters
                cut = max(1, int(limit * 1.5))
                pieces.append(sentence[:cut])
                sentence = sentence[cut:]
        joiner = "" if current.endswith(tuple("。！？；")) or not current else " "
        current += joiner + sentence.strip()
    if current.strip():
        pieces.append(current.strip())
    return pieces


def chunk_user_note(data: bytes, rel: str, content_hash: str = "", user: str = "default",
                    mtime: float | None = None) -> list[Chunk]:
    """The chunks of one of the person's notes (bytes as on disk) stored at vault path `rel`."""
    meta, body = read_user_note(data)
    title = rel.rsplit("/", 1)[-1]
    title = title[:-3] if title.endswith(".md") else title
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    aliases = [a for a in as_list(meta.get("aliases") or meta.get("alias")) if a][:8]
    tags = [t.lstrip("#") for t in as_list(meta.get("tags") or meta.get("tag"))]
    tags += re.findall(r"(?<![\w/#&])#([^\s#,.;:!?()\[\]{}\"'`]+)", _COMMENT.sub(" ", body))
    tags = list(dict.fromkeys(t for t in tags if t and not t.isdigit()))
    updated = _day(meta.get("updated") or meta.get("modified") or meta.get("date")) or _day_of(mtime)
    created = _day(meta.get("created")) or updated
    base = dict(note_id=rel, path=rel, title=title, type=NOTE_TYPE, status="active", user=user,
                tags=bar_list(tags), entities="", created=created, updated=updated,
                valid_from="", valid_to="", importance=0.5, content_hash=content_hash)
    named = title + (f" ({', '.join(aliases)})" if aliases else "")
    keywords = " ".join([title, *aliases, *tags, folder.replace("/", " ")])

    sections: list[tuple[tuple, list[tuple[str, str]]]] = []
    for heading, text, block_id in _blocks(body):
        if not sections or sections[-1][0] != heading:
            sections.append((heading, []))
        sections[-1][1].append((text, block_id))
    chunks: list[Chunk] = []

    def add(heading, text, block_id):
        anchor = f"#^{block_id}" if block_id else (f"#{heading[-1]}" if heading else "")
        trail = " › ".join((named, *heading))
        chunks.append(Chunk(chunk_id=f"{rel}#{len(chunks)}", text=text,
                            search_text=f"{trail}\n{text}", keywords=keywords,
                            source_messages=[], sources=[f"[[{title}{_anchor(anchor)}]]"], **base))

    for heading, blocks in sections:
        if heading and heading[0].casefold() == title.casefold():
            heading = heading[1:]   # the note's own title as its first heading says nothing new
        group, ids, size = [], [], 0.0
        for text, block_id in blocks:
            length = words(text)
            if group and size + length > NOTE_CHUNK_WORDS:
                add(heading, "\n".join(group), ids[0] if len(ids) == 1 and len(group) == 1 else "")
                group, ids, size = [], [], 0.0
            if length > NOTE_CHUNK_WORDS:
                for piece in _pieces(text, NOTE_CHUNK_WORDS):
                    add(heading, piece, block_id)
                continue
            group.append(text)
            if block_id:
                ids.append(block_id)
            size += length
        if group:
            add(heading, "\n".join(group), ids[0] if len(ids) == 1 and len(group) == 1 else "")
    if not chunks:   # a note with a title only (or only images) is still found by its name
        add((), title, "")
    return chunks


def _anchor(anchor: str) -> str:
    """A heading anchor as Obsidian links it: `[` `]` `|` `#` `^` cannot stand in a link."""
    if anchor.startswith("#^"):
        return anchor
    return anchor if not anchor else "#" + re.sub(r"[\[\]|#^]", " ", anchor[1:]).strip()


def _day(value) -> str:
    text = as_text(value)
    return text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", text) else ""


def _day_of(mtime) -> str:
    if mtime is None:
        return ""
    return datetime.fromtimestamp(mtime, tz=timezone.utc).date().isoformat()
