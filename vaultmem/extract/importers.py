"""Transcript importers (SPEC §4): jsonl, ChatGPT and Claude exports, Markdown chat logs,
and the session logs coding agents write (Claude Code, Codex CLI: `agent_transcripts`).

Every format becomes a list of `Session`s holding `Turn`s with the original message ids
verbatim. Bad input raises `TranscriptError(path, line, reason)`; the reason says what to do.

Times: naive ISO strings are taken as local time; ISO strings with an offset (or `Z`) and
epoch numbers are converted to the machine's local time zone and the offset dropped, so
every time is naive local like `vaultmem.clock.now()`.

    >>> sessions = load_transcript("chat.jsonl")          # doctest: +SKIP
    >>> sessions[0].turns[0].id, sessions[0].turns[0].role  # doctest: +SKIP
    ('m-1', 'user')
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

from vaultmem.errors import NoteParseError, TranscriptError
from vaultmem.extract.agent_transcripts import load_claude_code, load_codex
from vaultmem.extract.chat_exports import load_chatgpt, load_claude
from vaultmem.extract.records import content_text, jsonl_records, parse_time, read_text, time_or_error
from vaultmem.store.note import split_frontmatter
from vaultmem.store.properties import read_properties
from vaultmem.store.session_note import Session, Turn

FORMATS = ("jsonl", "chatgpt", "claude", "markdown", "claude-code", "codex")
ROLES = ("user", "assistant", "system")
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant"}
# OpenAI-style roles that are tools or the app's prompt, not speech: dropped (see `load_jsonl`).
_NOT_SPEECH_ROLES = ("tool", "function", "ipython", "developer")
FORMAT_HINT = "pass --format " + "|".join(FORMATS)


def load_transcript(path: str | Path, fmt: str | None = None) -> list[Session]:
    """Read one transcript file; `fmt` None sniffs it. Raises TranscriptError."""
    path = Path(path)
    text = read_text(path)
    fmt = fmt or sniff_format(path, text)
    loaders = {"jsonl": load_jsonl, "chatgpt": load_chatgpt, "claude": load_claude,
               "markdown": _load_markdown, "claude-code": load_claude_code, "codex": load_codex}
    if fmt not in loaders:
        raise TranscriptError(path, None, f"unknown format {fmt!r} — {FORMAT_HINT}")
    sessions = [s for s in loaders[fmt](path, text) if s.turns]
    if not sessions:
        raise TranscriptError(path, None, f"no messages found in this {fmt} transcript — "
                              "check the file, or pass the right --format")
    return sessions


def sniff_format(path: str | Path, text: str | None = None) -> str:
    """Guess the format from the file name and content; TranscriptError when it cannot."""
    path = Path(path)
    text = read_text(path) if text is None else text
    suffix = path.suffix.lower()
    head = text.lstrip()
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_kind(text)
    if suffix in (".md", ".markdown"):
        return "markdown"
    if head.startswith("[") or (suffix == ".json" and head.startswith("{")):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # the loader reports the error with its line
            data = None
        if data is not None:
            kind = _json_export_kind(data)
            if kind:
                return kind
            if suffix == ".json" or head.startswith("["):
                raise TranscriptError(path, None, "JSON, but neither a ChatGPT nor a Claude "
                                      f"conversations.json — {FORMAT_HINT}")
    if head.startswith("{"):
        first = head.splitlines()[0]
        try:
            if isinstance(json.loads(first), dict):
                return _jsonl_kind(text)
        except (ValueError, RecursionError):
            pass
    if suffix in (".txt", "") and _markdown_turns(text.splitlines()):
        return "markdown"
    raise TranscriptError(path, None, f"cannot tell the transcript format — {FORMAT_HINT}")


SNIFF_LINES = 30  # an agent's log opens with snapshots and hook progress before any message


def _jsonl_kind(text: str) -> str:
    """Which JSON-lines format: a Claude Code or Codex session log by the keys their lines
    carry, else vaultmem's own jsonl (messages, plain or OpenAI-style)."""
    seen = 0
    for raw in text.split("\n"):
        if seen >= SNIFF_LINES:
            break
        if not raw.strip():
            continue
        seen += 1
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        if "sessionId" in record or "parentUuid" in record or "leafUuid" in record:
            return "claude-code"
        if isinstance(record.get("payload"), dict) and record.get("type") in _CODEX_LINES:
            return "codex"
        if seen == 1 and "instructions" in record and "id" in record and "text" not in record:
            return "codex"  # the older rollout: a header {id, timestamp, instructions}, then items
    return "jsonl"


_CODEX_LINES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def _json_export_kind(data) -> str | None:
    items = data if isinstance(data, list) else [data]
    items = [item for item in items if isinstance(item, dict)]
    if not items:
        return None
    if "mapping" in items[0]:
        return "chatgpt"
    if "chat_messages" in items[0]:
        return "claude"
    return None


# ---- jsonl -------------------------------------------------------------------------------

def load_jsonl(path: Path, text: str) -> list[Session]:
    """vaultmem's jsonl, and OpenAI-style messages (`content` string or parts, `name`).

    Left out of the session note as well as the memories, as the ChatGPT importer does:
    tool results (`role: tool`/`function`) and an assistant's `tool_calls` (machine output,
    no one's speech), and the app's prompt, a `developer` message or a `system` message in
    the OpenAI shape (`content`): searched with the session, "the user lives in Madrid"
    from a prompt would read like something the user said. SPEC's own `role: system` line
    (`text`) is a line of the chat, such as "Alice joined": it stays in the session note
    and, like every system turn, never becomes a memory."""
    grouped: dict[str, list[Turn]] = {}
    seen: dict[str, set[str]] = {}
    for number, record in jsonl_records(path, text):
        role = _jsonl_role(path, number, record)
        body = _jsonl_text(path, number, record) if role else ""
        if role is None or (not body and (record.get("tool_calls") or record.get("function_call"))):
            continue  # a tool's output, or an assistant calling a tool: no one's words
        session = str(record.get("session") or path.stem)
        turns = grouped.setdefault(session, [])
        message_id = str(record["id"]) if record.get("id") not in (None, "") else f"m-{len(turns) + 1}"
        if message_id in seen.setdefault(session, set()):
            raise TranscriptError(path, number, f"duplicate message id {message_id!r} in session "
                                  f"{session!r} — message ids must be unique within a session")
        seen[session].add(message_id)
        speaker = str(record.get("speaker") or record.get("name") or role)
        turns.append(Turn(session, message_id, time_or_error(path, number, record.get("time")),
                          speaker, role, body, number))
    return [Session(sid, sid, [t for t in turns if t.text], path.name) for sid, turns in grouped.items()]


def _jsonl_text(path: Path, number: int, record: dict) -> str:
    """A line's text: `text` (a string), else OpenAI-style `content`; an assistant line
    that only calls tools (`tool_calls`, `function_call`, `content` null) has none."""
    if "text" in record:
        if not isinstance(record["text"], str):
            raise TranscriptError(path, number, "'text' must be a string")
        return record["text"].strip()
    if "content" in record and (record["content"] is None or isinstance(record["content"], (str, list))):
        return content_text(record["content"])
    if "content" in record:
        raise TranscriptError(path, number, "'content' must be a string or a list of parts like "
                              '{"type": "text", "text": "..."}')
    if record.get("tool_calls") or record.get("function_call"):
        return ""
    raise TranscriptError(path, number, "missing 'text' (or OpenAI-style 'content') — every message needs its text")


def _jsonl_role(path: Path, number: int, record: dict) -> str | None:
    """user, assistant or system; None for a tool's message or an OpenAI-style prompt."""
    role = record.get("role")
    if role in (None, ""):
        if record.get("speaker"):
            return "assistant" if _looks_like_assistant(str(record["speaker"])) else "user"
        raise TranscriptError(path, number, "missing 'role' — use user, assistant or system")
    role = _ROLE_ALIASES.get(str(role).lower(), str(role).lower())
    if role in _NOT_SPEECH_ROLES or (role == "system" and "content" in record and "text" not in record):
        return None
    if role not in ROLES:
        raise TranscriptError(path, number, f"unknown role {record.get('role')!r} — use user, assistant "
                              "or system (OpenAI's developer and tool messages are accepted and left out)")
    return role


# ---- Markdown chat log -------------------------------------------------------------------

_BOLD_TURN = re.compile(r"^\s*(?:[-*]\s+)?(?:\[(?P<t1>[^\]]{4,30})\]\s*)?\*\*(?P<name>[^*\n]{1,40}?)"
                        r"(?:\s*[:：]\s*\*\*|\*\*\s*(?:\((?P<t2>[^)]{4,30})\))?\s*[:：])\s*(?P<text>.*)$")
_PLAIN_TURN = re.compile(r"^(?:\[(?P<t1>[^\]]{4,30})\]\s*)?(?P<name>[^\s\d:：#>*\-|`\[][^:：\n]{0,30}?)"
                         r"\s*(?:\((?P<t2>[^)]{4,30})\))?\s*[:：](?!//)\s*(?P<text>.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_DATE_IN = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")
_ASSISTANT_NAMES = {"assistant", "ai", "claude", "chatgpt", "gpt", "gpt-4", "gpt-4o", "bot",
                    "gemini", "copilot", "model", "llm", "助手", "ai助手", "机器人"}
_SYSTEM_NAMES = {"system", "系统"}


def _looks_like_assistant(name: str) -> bool:
    lowered = name.strip().lower()
    return lowered in _ASSISTANT_NAMES or lowered.startswith(("claude", "chatgpt", "gpt-"))


def _markdown_turns(lines: list[str]) -> list[tuple[int, str, str, str | None]]:
    """Candidate turn starts: (line index, name, first text, time text or None).

    Bold lines win: if any `**Name:**` line exists only those start turns. Plain `Name:`
    lines start turns only for names seen twice (or known roles), so that a line such as
    "Note: ..." inside an answer stays part of it."""
    bold, plain = [], []
    in_fence = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence:
            continue
        match = _BOLD_TURN.match(line)
        if match:
            bold.append((index, match["name"].strip(), match["text"], match["t1"] or match["t2"]))
            continue
        match = _PLAIN_TURN.match(line)
        if match and len(match["name"].split()) <= 4:
            plain.append((index, match["name"].strip(), match["text"], match["t1"] or match["t2"]))
    if bold:
        return bold
    counts = Counter(name for _, name, _, _ in plain)
    known = {n for n, c in counts.items()
             if c >= 2 or _looks_like_assistant(n) or n.lower() in _SYSTEM_NAMES | {"user", "human", "用户"}}
    if plain:
        known.add(plain[0][1])
    chosen = [p for p in plain if p[1] in known]
    return chosen if len(known) >= 2 or len(chosen) >= 2 else []


def _load_markdown(path: Path, text: str) -> list[Session]:
    lines = text.split("\n")
    meta, body_start = _front_matter(text)
    started = _loose_time(meta.get("date") or meta.get("created") or "")
    starts = _markdown_turns(lines)
    starts = [s for s in starts if s[0] >= body_start]
    if not starts:
        raise TranscriptError(path, None, "no '**Name:** text' or 'Name: text' lines found — "
                              "is this a chat transcript? Otherwise pass the right --format")
    title = meta.get("title") or ""
    for line in lines[body_start:starts[0][0]]:
        heading = _HEADING.match(line)
        if heading:
            title = title or heading.group(1).strip()
            when = _loose_time(heading.group(1))
            # A heading's date-time refines a front-matter date of the same day.
            if when and (started is None or (started == started.replace(hour=0, minute=0, second=0)
                                             and when.date() == started.date())):
                started = when
    sid = str(meta.get("session") or meta.get("id") or path.stem)
    turns = []
    for number, (index, name, first, when) in enumerate(starts, start=1):
        end = starts[number][0] if number < len(starts) else len(lines)
        body = "\n".join([first, *lines[index + 1:end]]).strip()
        if not body:
            continue
        time = _loose_time(when, started) if when else None
        turns.append(Turn(sid, f"m-{number}", time, name, _markdown_role(name), body, index + 1))
    return [Session(sid, str(title or sid), turns, path.name, started)]


def _markdown_role(name: str) -> str:
    """Assistant-looking names are `assistant`, System is `system`; every other speaker is a
    `user` (the first is the main user, the rest other people in the chat)."""
    if name.lower() in _SYSTEM_NAMES:
        return "system"
    return "assistant" if _looks_like_assistant(name) else "user"


def _front_matter(text: str) -> tuple[dict[str, str], int]:
    """A Markdown log's properties (scalars, keys in lower case) and the line its body starts
    on, read as notes are (`properties.read_properties`). Properties that are not valid YAML are
    left out; the block is still skipped."""
    parts = split_frontmatter(text)
    if parts is None:
        return {}, 0
    body_start = text.count("\n", 0, len(text) - len(parts[1]))
    try:
        found = read_properties(text)
    except NoteParseError:  # over the size, depth or alias limits
        found = None
    meta = found[0] if found else {}
    return {str(k).lower(): v for k, v in meta.items() if isinstance(v, str)}, body_start


def _loose_time(text: str, day: datetime | None = None) -> datetime | None:
    """A date-time found inside free text, or a bare `HH:MM` on `day`; None if none."""
    match = _DATE_IN.search(text or "")
    if match:
        try:
            return parse_time(match.group(0))
        except ValueError:
            return None
    clock = re.fullmatch(r"\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*", text or "")
    if clock and day and int(clock[1]) < 24 and int(clock[2]) < 60:
        return day.replace(hour=int(clock[1]), minute=int(clock[2]), second=int(clock[3] or 0))
    return None


def first_user_texts(paths, fmt: str | None = None, limit: int = 20000) -> list[str]:
    """The person's messages at the start of `paths`' transcripts, about `limit` characters
    of them (a file that cannot be read is skipped: the run itself names it)."""
    texts, size = [], 0
    for path in paths:
        try:
            sessions = load_transcript(path, fmt)
        except Exception:  # noqa: BLE001 (any reader's failure: extract reports it)
            continue
        for session in sessions:
            for turn in session.turns:
                if size >= limit:
                    return texts
                if (turn.role or "user").lower() == "user" and turn.text:
                    texts.append(turn.text)
                    size += len(turn.text)
    return texts
