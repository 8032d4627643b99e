"""A conversation (`Session`, `Turn`) and the turn format of its session notes: rendering one turn, reading turns back, and where
each turn is in a note's body (`turn_spans`, for whoever rewrites a turn in place).

A turn is a `**Speaker** · YYYY-MM-DD HH:MM` line, the turn's text (secrets redacted
before it gets here), and a block id `^m-12` at the end of its last line, or on a line of
its own after a blank line when the text ends in code:

    **Alice** · 2026-11-29 10:29
    Run this:

    ```bash
    pytest -x
    ```

    ^m-12

The text is kept as written, blank lines and fenced code blocks included, so one turn may
span several Markdown paragraphs: find a turn by `turn_spans`, never by cutting a note at
blank lines. Obsidian attaches a ` ^id` to the paragraph it ends; a turn of one paragraph
(most are) is one block, linked whole. Lines that Markdown would read as the start of another block (headings,
lists, quotes, rules, an unclosed fence), and lines that would be misread as a turn header
or a block id, are escaped with a backslash; `parse_session_turns` undoes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


@dataclass(frozen=True)
class Turn:
    session: str
    id: str
    time: datetime | None
    speaker: str
    role: str
    text: str
    line: int


@dataclass(frozen=True)
class Session:
    id: str
    title: str
    turns: list[Turn]
    source: str  # the transcript's file name
    started: datetime | None = None  # a start time the source gives beside its turns' times
    cwd: str | None = None  # the working directory an agent's session ran in (its project)

    @property
    def start(self) -> datetime | None:
        """When the session began: the given start, else the first turn that has a time."""
        if self.started:
            return self.started
        return next((t.time for t in self.turns if t.time), None)


def project_name(where: str) -> str:
    """The project a working directory is: its last folder.

    >>> project_name("/home/ana/code/tidepool/"), project_name("C:\\src\\harbor")
    ('tidepool', 'harbor')
    """
    return re.split(r"[\\/]", where.strip().rstrip("\\/"))[-1] or where.strip()


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



class SessionTurn(NamedTuple):
    block_id: str
    speaker: str
    time: str   # "2026-11-29 10:29", or "" when the turn had no time
    text: str


def render_turn(turn: Turn, block: str) -> str:
    """One turn as it stands in a session note (no blank line around it); `block` is its id."""
    header = "**" + _escape_speaker(turn.speaker) + "**"
    if turn.time:
        header += f" · {turn.time:%Y-%m-%d %H:%M}"
    lines = turn.text.split("\n")
    code = _fenced_lines(lines)
    lines = [line if is_code else _escape_line(line.rstrip()) for line, is_code in zip(lines, code)]
    while lines and not lines[0].strip():
        lines, code = lines[1:], code[1:]
    while lines and not lines[-1].strip():
        lines, code = lines[:-1], code[:-1]
    if not lines:
        return f"{header} ^{block}"
    if code[-1] or _indent(lines[-1]) >= 4:
        # A block id on a fence or an indented code line would show inside the code:
        # it gets a line of its own, which Obsidian gives to the block above it.
        lines += ["", f"^{block}"]
    else:
        lines[-1] += f" ^{block}"
    return "\n".join([header, *lines])


# ---- reading turns back ------------------------------------------------------------------

_HEADER = re.compile(r"^\*\*(?P<speaker>(?:\\.|[^*\\])+)\*\*(?: · (?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}))?"
                     r"(?: \^(?P<block>[A-Za-z0-9-]+))?\s*$")
_BLOCK_END = re.compile(r"\s\^(?P<block>[A-Za-z0-9-]+)\s*$")
_BLOCK_LINE = re.compile(r"\^(?P<block>[A-Za-z0-9-]+)\s*")


def parse_session_turns(body: str) -> list[SessionTurn]:
    """The turns of a session note body, in order: `(block_id, speaker, time, text)`.

    A turn opens with its header line at the start of a paragraph and ends at its block
    id (at the end of a paragraph's last line, or on a line of its own); fenced code in
    between is read verbatim. Paragraphs that are not turns (a heading, text the user
    added) are skipped."""
    return [turn for turn, _start, _end in turn_spans(body)]


def turn_spans(body: str) -> list[tuple[SessionTurn, int, int]]:
    """Each turn of a session note body with where it is: `(turn, first, end)`, the lines
    `body.split("\\n")[first:end]` (its header line to its block id, both included)."""
    lines = body.replace("\r\n", "\n").split("\n")
    found, i = [], 0
    while i < len(lines):
        header = _HEADER.match(lines[i]) if i == 0 or not lines[i - 1].strip() else None
        if header is None:
            i += 1
            continue
        speaker = re.sub(r"\\(.)", r"\1", header["speaker"])
        if header["block"] and (i + 1 == len(lines) or not lines[i + 1].strip()):
            found.append((SessionTurn(header["block"], speaker, header["time"] or "", ""), i, i + 1))
            i += 1
            continue
        block, text, end = _read_turn(lines, i + 1)
        if block is not None:
            found.append((SessionTurn(block, speaker, header["time"] or "", text), i, end))
        i = end
    return found


def _read_turn(lines: list[str], start: int) -> tuple[str | None, str, int]:
    """The turn whose text starts at `lines[start]`: (block id, text, index after it);
    block id None when another turn's header (or the end) comes before a block id."""
    text: list[tuple[str, bool]] = []  # (line, is fenced code)
    fence, j = None, start
    while j < len(lines):
        line = lines[j]
        if fence:
            text.append((line, True))
            fence = None if _closes_fence(line, fence) else fence
            j += 1
            continue
        after_blank = j > start and not lines[j - 1].strip()
        ends_paragraph = j + 1 == len(lines) or not lines[j + 1].strip()
        fence = _opens_fence(line)
        if fence is None and after_blank and _HEADER.match(line):
            return None, "", j
        if fence is None and after_blank and ends_paragraph and (own := _BLOCK_LINE.fullmatch(line)):
            return own["block"], _turn_text(text), j + 1
        if fence is None and ends_paragraph and (end := _BLOCK_END.search(line)):
            text.append((line[:end.start()], False))
            return end["block"], _turn_text(text), j + 1
        text.append((line, fence is not None))
        j += 1
    return None, "", j


def _turn_text(lines: list[tuple[str, bool]]) -> str:
    text = [line if is_code else _unescape_line(line) for line, is_code in lines]
    return "\n".join(text).strip("\n")


# ---- escaping ----------------------------------------------------------------------------
# A turn's text is kept as written, blank lines and fenced code included, but for lines
# that would end its paragraph early or be misread when reading it back: a line Markdown
# would read as another block (heading, list, quote, rule, table, HTML, an unclosed fence),
# a line like a turn header, a block id alone or at a line's end. A backslash keeps such a
# line literal; lines already starting with `\` (or ending in `\^id`) get one more, so
# `_unescape_line` gives back exactly the line written. Fenced code is never escaped.
_BLOCK_START = re.compile(r"^(\s*)(?=#{1,6}(?:\s|$)|>|[-+*](?:\s|$)|```|~~~|[-=_*]{3,}\s*$|\||<|\\"
                          r"|\^[A-Za-z0-9-]+\s*$)")
_ORDERED = re.compile(r"^(\s*\d{1,9})(?=\\*[.)](?:\s|$))")
_TRAILING_ID = re.compile(r"(?<=\s)(?=\\*\^[A-Za-z0-9-]+\s*$)")


def _escape_line(line: str) -> str:
    line = _TRAILING_ID.sub(r"\\", line, count=1)
    if _HEADER.match(line):
        return "\\" + line
    if _ORDERED.match(line):
        return _ORDERED.sub(r"\1\\", line, count=1)
    return _BLOCK_START.sub(r"\1\\", line, count=1)


def _unescape_line(line: str) -> str:
    line = re.sub(r"(?<=\s)\\(?=\\*\^[A-Za-z0-9-]+\s*$)", "", line, count=1)
    ordered = re.match(r"^(\s*\d{1,9})\\(?=\\*[.)](?:\s|$))", line)
    if ordered:
        return line[:ordered.end() - 1] + line[ordered.end():]
    return re.sub(r"^(\s*)\\", r"\1", line, count=1)


_FENCE_OPEN = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})[ \t]*")


def _opens_fence(line: str) -> str | None:
    """The fence (```` ``` ````, `~~~~`...) a line opens as CommonMark reads it, or None."""
    match = _FENCE_OPEN.fullmatch(line)
    if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
        return None
    return match["fence"]


def _closes_fence(line: str, fence: str) -> bool:
    match = _FENCE_CLOSE.fullmatch(line)
    return bool(match) and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence)


def _fenced_lines(lines: list[str]) -> list[bool]:
    """Which lines of a turn are fenced code, fences included. A fence that is not closed
    within the turn is no fence (it is escaped): it would swallow the turns after it."""
    code = [False] * len(lines)
    i = 0
    while i < len(lines):
        fence = _opens_fence(lines[i])
        close = next((j for j in range(i + 1, len(lines)) if _closes_fence(lines[j], fence)),
                     None) if fence else None
        if close is None:
            i += 1
            continue
        code[i:close + 1] = [True] * (close + 1 - i)
        i = close + 1
    return code


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _escape_speaker(name: str) -> str:
    return re.sub(r"([*\\])", r"\\\1", " ".join(str(name).split())) or "unknown"


def turn_time(value: str) -> datetime | None:
    """A parsed turn's `time` string back as a datetime (None when empty)."""
    return datetime.strptime(value, "%Y-%m-%d %H:%M") if value else None
