"""Session notes (SPEC §3): one note per conversation, one linkable block per turn.

A turn is one Markdown paragraph: a `**Speaker** · YYYY-MM-DD HH:MM` line, the turn's
text (secrets redacted), and a block id at the end of its last line, so that Obsidian's
`[[Sessions/2026-11-29 chat-3f2a#^m-12]]` opens the whole turn. Obsidian attaches a
` ^id` to the paragraph it ends, and a paragraph ends at a blank line, so blank lines
inside a turn are dropped and lines that Markdown would read as a new block (headings,
lists, quotes, fences, rules) are escaped with a backslash; `parse_session_turns` undoes it.

    ---
    id: 01JDQ7ZK3M8X2V4N6P9R0S1T2U
    type: session
    ...
    ---
    **Alice** · 2026-11-29 10:29
    I'm cutting back on coffee. ^m-12
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import NamedTuple

from vaultmem import clock
from vaultmem.extract.importers import Session, Turn
from vaultmem.ids import new_id
from vaultmem.redact import redact

SESSION_TAG = "vaultmem/session"


@dataclass(frozen=True)
class SessionNote:
    title: str                  # "2026-11-29 chat-3f2a": pass through vault.safe_title/unique_path
    text: str                   # the whole file: frontmatter + one block per turn, redacted
    note_id: str                # the frontmatter id (a ULID)
    block_ids: dict[str, str]   # original message id -> block id in this note
    redactions: list[str]       # one kind per secret redacted, in turn order


class SessionTurn(NamedTuple):
    block_id: str
    speaker: str
    time: str   # "2026-11-29 10:29", or "" when the turn had no time
    text: str


def session_title(session: Session) -> str:
    """`<YYYY-MM-DD> <session id>`: the session's start date, else today."""
    start = session.start or clock.now()
    return f"{start:%Y-%m-%d} {session.id}"


def block_id(message_id: str) -> str:
    """An original message id as an Obsidian block id (only `[A-Za-z0-9-]`).

    >>> block_id("m-12"), block_id("D1:3"), block_id("msg_7")
    ('m-12', 'D1-3', 'msg-7')
    """
    cleaned = re.sub(r"[^A-Za-z0-9-]", "-", str(message_id)).strip("-")
    return cleaned or "m"


def block_ids(message_ids: list[str]) -> list[str]:
    """Block ids for a note's message ids, in order, made unique (`-2`, `-3`, ...) where
    two ids clean to the same one. Deterministic: the frontmatter's `message_ids` give
    back the same block ids, so a block id maps to its original message id."""
    taken: set[str] = set()
    out = []
    for message_id in message_ids:
        base = candidate = block_id(message_id)
        n = 1
        while candidate.lower() in taken:  # Obsidian matches block ids case-insensitively
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate.lower())
        out.append(candidate)
    return out


def message_link(session_path: str, block: str) -> str:
    """`("Sessions/2026-11-29 chat-3f2a", "m-12")` -> `[[Sessions/2026-11-29 chat-3f2a#^m-12]]`.

    `session_path` is the note's vault path (or shortest unique path) without `.md`."""
    return f"[[{session_path}#^{block}]]"


def redact_session(session: Session) -> tuple[Session, list[str]]:
    """The session with every turn's text redacted, and the kinds redacted (in order).

    Extractors should read the redacted session, so secrets cannot reach memory notes."""
    kinds: list[str] = []

    def clean(text):
        if not text:
            return text
        text, found = redact(text)
        kinds.extend(found)
        return text

    session_id, title = clean(session.id), clean(session.title)  # they name the note's file
    turns = []
    for turn in session.turns:
        text, speaker = clean(turn.text), clean(turn.speaker)
        turns.append(replace(turn, text=text, speaker=speaker)
                     if (text, speaker) != (turn.text, turn.speaker) else turn)
    return replace(session, id=session_id, title=title, turns=turns), kinds


def render_session(session: Session, *, user: str = "default", run: str | None = None,
                   note_id: str | None = None) -> SessionNote:
    """Render a session as a session note; turn texts are redacted here, whatever the caller did."""
    from ruamel.yaml.comments import CommentedMap

    from vaultmem.note import Note, render_note

    session, kinds = redact_session(session)
    start = session.start or clock.now()
    note_id = note_id or new_id()
    message_ids = [t.id for t in session.turns]
    blocks = block_ids(message_ids)

    meta = CommentedMap()
    meta["id"] = note_id
    meta["type"] = "session"
    meta["created"] = start
    meta["updated"] = start
    meta["status"] = "active"
    meta["user"] = user
    meta["session"] = session.id
    meta["source"] = session.source
    if run:
        meta["run"] = run
    meta["message_ids"] = [str(m) for m in message_ids]
    meta["tags"] = [SESSION_TAG]

    paragraphs = []
    if session.title and session.title != session.id:
        paragraphs.append("# " + " ".join(session.title.split()))
    paragraphs.extend(_render_turn(turn, block) for turn, block in zip(session.turns, blocks))
    body = "\n\n".join(paragraphs) + "\n"
    text = render_note(Note(meta=meta, body=body))
    return SessionNote(session_title(session), text, note_id, dict(zip(message_ids, blocks)), kinds)


def _render_turn(turn: Turn, block: str) -> str:
    header = "**" + _escape_speaker(turn.speaker) + "**"
    if turn.time:
        header += f" · {turn.time:%Y-%m-%d %H:%M}"
    lines = [_escape_line(line.rstrip()) for line in turn.text.split("\n") if line.strip()]
    if not lines:
        return f"{header} ^{block}"
    lines[-1] += f" ^{block}"
    return "\n".join([header, *lines])


# ---- reading turns back ------------------------------------------------------------------

_HEADER = re.compile(r"^\*\*(?P<speaker>(?:\\.|[^*\\])+)\*\*(?: · (?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}))?"
                     r"(?: \^(?P<block>[A-Za-z0-9-]+))?\s*$")
_BLOCK_END = re.compile(r"\s\^(?P<block>[A-Za-z0-9-]+)\s*$")


def parse_session_turns(body: str) -> list[SessionTurn]:
    """The turns of a session note body, in order: `(block_id, speaker, time, text)`.

    Paragraphs that are not turns (a heading, text the user added) are skipped."""
    turns = []
    for paragraph in re.split(r"\n[ \t]*\n", body.replace("\r\n", "\n")):
        lines = paragraph.strip("\n").split("\n")
        header = _HEADER.match(lines[0]) if lines and lines[0] else None
        if header is None:
            continue
        speaker = re.sub(r"\\(.)", r"\1", header["speaker"])
        if header["block"] and len(lines) == 1:
            turns.append(SessionTurn(header["block"], speaker, header["time"] or "", ""))
            continue
        end = _BLOCK_END.search(lines[-1]) if len(lines) > 1 else None
        if end is None:
            continue
        lines[-1] = lines[-1][:end.start()]
        text = "\n".join(_unescape_line(line) for line in lines[1:]).strip()
        turns.append(SessionTurn(end["block"], speaker, header["time"] or "", text))
    return turns


# A line Markdown would read as the start of another block ends the turn's paragraph;
# a leading backslash keeps it literal. Lines already starting with `\` get one more.
_BLOCK_START = re.compile(r"^(\s*)(?=#{1,6}(?:\s|$)|>|[-+*](?:\s|$)|```|~~~|[-=_*]{3,}\s*$|\||<|\\)")
_ORDERED = re.compile(r"^(\s*\d{1,9})(?=[.)](?:\s|$))")


def _escape_line(line: str) -> str:
    if _ORDERED.match(line):
        return _ORDERED.sub(r"\1\\", line, count=1)
    return _BLOCK_START.sub(r"\1\\", line, count=1)


def _unescape_line(line: str) -> str:
    ordered = re.match(r"^(\s*\d{1,9})\\(?=[.)])", line)
    if ordered:
        return line[:ordered.end() - 1] + line[ordered.end():]
    return re.sub(r"^(\s*)\\", r"\1", line, count=1)


def _escape_speaker(name: str) -> str:
    return re.sub(r"([*\\])", r"\\\1", " ".join(str(name).split())) or "unknown"


def turn_time(value: str) -> datetime | None:
    """A parsed turn's `time` string back as a datetime (None when empty)."""
    return datetime.strptime(value, "%Y-%m-%d %H:%M") if value else None
