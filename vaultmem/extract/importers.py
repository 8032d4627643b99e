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
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from vaultmem.errors import NoteParseError, TranscriptError
from vaultmem.note import read_properties, split_frontmatter

FORMATS = ("jsonl", "chatgpt", "claude", "markdown", "claude-code", "codex")
ROLES = ("user", "assistant", "system")
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant"}
# OpenAI-style roles that are tools or the app's prompt, not speech: dropped (see `_load_jsonl`).
_NOT_SPEECH_ROLES = ("tool", "function", "ipython", "developer")
# Parts of an OpenAI-style `content` list that hold visible text; images, audio, files go.
TEXT_PARTS = ("text", "input_text", "output_text")
FORMAT_HINT = "pass --format " + "|".join(FORMATS)


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

    @property
    def start(self) -> datetime | None:
        """When the session began: the given start, else the first turn that has a time."""
        if self.started:
            return self.started
        return next((t.time for t in self.turns if t.time), None)


def load_transcript(path: str | Path, fmt: str | None = None) -> list[Session]:
    """Read one transcript file; `fmt` None sniffs it. Raises TranscriptError."""
    path = Path(path)
    text = _read_text(path)
    fmt = fmt or sniff_format(path, text)
    from vaultmem.extract.agent_transcripts import load_claude_code, load_codex

    loaders = {"jsonl": _load_jsonl, "chatgpt": _load_chatgpt, "claude": _load_claude,
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
    text = _read_text(path) if text is None else text
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


def parse_time(value) -> datetime | None:
    """ISO string (offset optional, `Z` allowed) or epoch seconds/milliseconds -> naive local.

    Raises ValueError for anything else; None and "" give None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value  # epoch milliseconds
        return datetime.fromtimestamp(seconds, timezone.utc).astimezone().replace(tzinfo=None, microsecond=0)
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    text = value.strip()
    if re.fullmatch(r"\d{9,13}(\.\d+)?", text):
        return parse_time(float(text))
    match = _ISO.fullmatch(text)
    if not match:
        raise ValueError(f"not an ISO date-time: {value!r}")
    date, clock, zone = match.group("date"), match.group("clock") or "00:00:00", match.group("zone")
    if len(clock) == 5:
        clock += ":00"
    parsed = datetime.fromisoformat(f"{date}T{clock}")
    if zone:
        zone = "+00:00" if zone in ("Z", "z") else zone
        if len(zone) == 5:  # +0800
            zone = zone[:3] + ":" + zone[3:]
        parsed = datetime.fromisoformat(parsed.isoformat() + zone).astimezone().replace(tzinfo=None)
    return parsed


_ISO = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})(?:[T ](?P<clock>\d{2}:\d{2}(?::\d{2})?)(?:[.,]\d+)?)?"
                  r"\s*(?P<zone>[Zz]|[+-]\d{2}:?\d{2})?")


# ---- reading -----------------------------------------------------------------------------

def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TranscriptError(path, None, "file not found — check the path") from None
    except IsADirectoryError:
        raise TranscriptError(path, None, "is a directory — pass the transcript files in it") from None
    except OSError as exc:
        raise TranscriptError(path, None, f"cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise TranscriptError(path, line, "not UTF-8 — re-save the file as UTF-8") from None
    if not text.strip():
        raise TranscriptError(path, None, "file is empty — nothing to import")
    return text.replace("\r\n", "\n").replace("\r", "\n")


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


def _load_json(path: Path, text: str):
    try:
        return _no_lone_surrogates(json.loads(text))
    except json.JSONDecodeError as exc:
        raise TranscriptError(path, exc.lineno, f"not valid JSON ({exc.msg}: column {exc.colno}) — "
                              "fix the file or re-export it") from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, 10,000 nested arrays
        raise TranscriptError(path, None, f"not usable JSON ({_json_problem(exc)}) — fix the file "
                              "or re-export it") from None


def _json_problem(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]


def _no_lone_surrogates(value):
    """JSON may spell half a UTF-16 pair, which no file can hold as UTF-8: replace each
    with U+FFFD, as a decoder does with a bad byte."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_no_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_lone_surrogates(k): _no_lone_surrogates(v) for k, v in value.items()}
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _line_of(text: str, needle: str) -> int | None:
    """Best-effort line number of a JSON value, so errors in exports point somewhere useful."""
    at = text.find(json.dumps(needle)) if needle else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _time_or_error(path: Path, line: int | None, value) -> datetime | None:
    try:
        return parse_time(value)
    except (ValueError, OverflowError, OSError):  # OverflowError/OSError: a year past 9999
        raise TranscriptError(path, line, f"bad time {value!r} — use ISO 8601 "
                              "(2026-11-29T10:29:41) or epoch seconds") from None


# ---- jsonl -------------------------------------------------------------------------------

JSONL_HINT = 'each line must be one JSON object like {"id": "m-1", "role": "user", "text": "..."}'


def jsonl_records(path: Path, text: str, hint: str = JSONL_HINT):
    """(line number, object) for each non-blank line; TranscriptError for a line that is
    not one JSON object, with the parser's whole message (its column: the line is ours)."""
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = _no_lone_surrogates(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise TranscriptError(path, number, f"not JSON ({exc.msg}: column {exc.colno}) — {hint}") from None
        except (ValueError, RecursionError) as exc:
            raise TranscriptError(path, number, f"not usable JSON ({_json_problem(exc)}) — {hint}") from None
        if not isinstance(record, dict):
            raise TranscriptError(path, number, f"not a JSON object — {hint}")
        yield number, record


def content_text(content) -> str:
    """The visible text of a message's `content`: a string, or a list of parts of which the
    text ones (`{"type": "text"|"input_text"|"output_text", "text": ...}`, or bare strings)
    count; images, audio, files and tool parts are dropped."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    texts = [part if isinstance(part, str) else part.get("text")
             for part in content
             if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") in TEXT_PARTS)]
    return "\n\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())


def _load_jsonl(path: Path, text: str) -> list[Session]:
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
        turns.append(Turn(session, message_id, _time_or_error(path, number, record.get("time")),
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


# ---- ChatGPT export ----------------------------------------------------------------------

def _load_chatgpt(path: Path, text: str) -> list[Session]:
    data = _load_json(path, text)
    conversations = data if isinstance(data, list) else [data]
    sessions = []
    for index, conv in enumerate(conversations, start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise TranscriptError(path, None, f"conversation {index} has no 'mapping' — not a ChatGPT "
                                  "conversations.json; pass the right --format")
        sid = str(conv.get("conversation_id") or conv.get("id") or f"{path.stem}-{index}")
        turns = []
        for node in _active_branch(conv["mapping"], conv.get("current_node")):
            turn = _chatgpt_turn(path, text, sid, node)
            if turn:
                turns.append(turn)
        started = _time_or_error(path, _line_of(text, sid), conv.get("create_time"))
        sessions.append(Session(sid, str(conv.get("title") or sid), turns, path.name, started))
    return sessions


def _active_branch(mapping: dict, current: str | None) -> list[dict]:
    """The nodes from the root to `current_node` (the branch the user last saw)."""
    # Ids are strings; anything else (a list, a number) in an export names no node.
    current = current if isinstance(current, str) else None
    if current not in mapping:
        # No current node: follow the last child from the root, as the web UI shows it.
        roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
        node, seen = (roots[0] if roots else None), set()
        while node and id(node) not in seen and isinstance(node.get("children"), list) \
                and node["children"] and isinstance(node["children"][-1], str):
            seen.add(id(node))
            node = mapping.get(node["children"][-1])
        current = node.get("id") if isinstance(node, dict) else None
    chain, seen = [], set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        if not isinstance(node, dict):
            break
        chain.append(node)
        current = node.get("parent")
    return list(reversed(chain))


def _dict(value) -> dict:
    """An export's object, or {} where the export holds something else."""
    return value if isinstance(value, dict) else {}


def _chatgpt_turn(path: Path, text: str, sid: str, node: dict) -> Turn | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    author = _dict(message.get("author"))
    role = author.get("role")
    if role not in ("user", "assistant") or _dict(message.get("metadata")).get("is_visually_hidden_from_conversation"):
        return None  # system prompts, tool output and hidden context are not conversation
    if message.get("recipient") not in (None, "all"):
        return None  # an assistant call to a tool, not a reply
    content = _dict(message.get("content"))
    if content.get("content_type", "text") not in ("text", "multimodal_text"):
        return None  # code, browsing, reasoning traces
    parts = content.get("parts")
    parts = [p for p in parts if isinstance(p, str)] if isinstance(parts, list) else []
    body = "\n".join(parts).strip()
    if not body:
        return None
    message_id = str(message.get("id") or node.get("id"))
    line = _line_of(text, message_id)
    name = author.get("name")
    return Turn(sid, message_id, _time_or_error(path, line, message.get("create_time")),
                str(name or role), role, body, line or 0)


# ---- Claude export -----------------------------------------------------------------------

def _load_claude(path: Path, text: str) -> list[Session]:
    data = _load_json(path, text)
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    conversations = data if isinstance(data, list) else [data]
    sessions = []
    for index, conv in enumerate(conversations, start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise TranscriptError(path, None, f"conversation {index} has no 'chat_messages' — not a "
                                  "Claude conversations.json; pass the right --format")
        sid = str(conv.get("uuid") or f"{path.stem}-{index}")
        turns = []
        for number, message in enumerate(conv["chat_messages"], start=1):
            turn = _claude_turn(path, text, sid, number, message)
            if turn:
                turns.append(turn)
        started = _time_or_error(path, _line_of(text, sid), conv.get("created_at"))
        sessions.append(Session(sid, str(conv.get("name") or sid), turns, path.name, started))
    return sessions


def _claude_turn(path: Path, text: str, sid: str, number: int, message) -> Turn | None:
    if not isinstance(message, dict):
        raise TranscriptError(path, None, f"conversation {sid}: message {number} is not an object")
    message_id = str(message.get("uuid") or f"m-{number}")
    line = _line_of(text, message_id)
    sender = str(message.get("sender") or "")
    role = {"human": "user", "user": "user", "assistant": "assistant"}.get(sender)
    if role is None:
        raise TranscriptError(path, line, f"unknown sender {sender!r} in conversation {sid} — "
                              "expected human or assistant")
    content = message.get("content")
    blocks = [b.get("text", "") for b in (content if isinstance(content, list) else [])
              if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    body = "\n\n".join(b.strip() for b in blocks if b.strip()) or str(message.get("text") or "").strip()
    if not body:
        return None
    return Turn(sid, message_id, _time_or_error(path, line, message.get("created_at")),
                role, role, body, line or 0)


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
    on, read as notes are (`note.read_properties`). Properties that are not valid YAML are
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
