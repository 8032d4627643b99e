"""Session logs coding agents write themselves: Claude Code and Codex CLI (JSON lines).

Only what the person and the assistant said to each other becomes turns: the human's
prompts and the assistant's visible replies. Everything else an agent logs is machinery
or injected context, left out of the session note as well as the memories: it is bulky
(a file read, a test run, the whole AGENTS.md again in every session), it would fill the
vault's search with the same boilerplate, and none of it is the person's speech.

Claude Code (`~/.claude/projects/<project>/<session-uuid>.jsonl`): lines
`{"type": "user"|"assistant", "message": {"role", "content"}, "uuid", "timestamp",
"sessionId", "isSidechain", "isMeta", ...}` beside `summary`, `system`, `progress` and
`file-history-snapshot` lines. Left out: tool_use, tool_result, thinking blocks; sidechain
(subagent) lines; `isMeta` lines (the local-command caveat); slash commands and their
output (`<command-name>`, `<local-command-stdout>`, ...); `<system-reminder>` blocks;
API-error and synthetic replies. One reply streamed over several lines (one content block
each, same `message.id`) is one turn. A `summary` line titles the session.

Codex CLI (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines `{"timestamp", "type":
"session_meta"|"response_item"|"event_msg"|"turn_context"|"compacted", "payload"}`; the
turns are the `response_item` messages of role user or assistant (their `input_text` /
`output_text` parts), except the context Codex injects as user messages
(`<environment_context>`, `# AGENTS.md instructions for ...`, `<user_instructions>`, ...).
Developer and system messages, function calls and their output, reasoning: left out.
`event_msg` repeats the same messages for the UI and is not read. The older rollout
opened with `{"id", "timestamp", "instructions"}` followed by bare items: read too.

Message ids: Claude Code's `uuid` verbatim (already a valid block id); Codex messages have
none, so they are numbered `m-1`, `m-2`, ... in file order. Times: each line's
`timestamp`, converted to naive local time as every importer does. Titles: Claude Code's
`summary` line, Codex's `thread_name_updated` event, else the first words of the person's
first turn (the session id is a UUID, no name for a note). Where the session ran: Claude Code's
`cwd` on its lines, Codex's in `session_meta` (or `turn_context`); the session note records it,
and its last folder names the session's project (`--project`).
"""

from __future__ import annotations

import re
from pathlib import Path

from vaultmem.errors import TranscriptError
from vaultmem.extract.records import content_text, jsonl_records, time_or_error
from vaultmem.store.session_note import Session, Turn

AGENT_HINT = "the log may be cut short or edited: copy it again from the agent's folder"

# Claude Code user texts that are the app talking, not the person.
_CLAUDE_INJECTED = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
                    "<local-command-stderr>", "<local-command-caveat>", "caveat: the messages below were generated",
                    "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
                    "[request interrupted by user", "this session is being continued from a previous conversation")
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_NO_REPLY = ("(no content)", "no response requested.")

# Codex's contextual user fragments (codex-rs core/src/contextual_user_message.rs).
_CODEX_INJECTED = ("<environment_context>", "# agents.md instructions for ", "<user_instructions>",
                   "<skill", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
                   "<additional_context>")


# ---- Claude Code -------------------------------------------------------------------------

def load_claude_code(path: Path, text: str) -> list[Session]:
    """One session per file: its turns, titled by its last `summary` line. A line whose
    `uuid` came before is skipped: Claude Code has been seen writing a message twice."""
    turns: list[Turn] = []
    seen: set[str] = set()
    title = session_id = cwd = None
    reply_of: str | None = None  # the API message id the last assistant turn came from
    sidechain = 0
    for number, record in jsonl_records(path, text, AGENT_HINT):
        kind = record.get("type")
        if kind == "summary" and isinstance(record.get("summary"), str):
            title = record["summary"].strip() or title
            continue
        if kind not in ("user", "assistant") or not isinstance(record.get("message"), dict):
            continue  # system, progress, file-history-snapshot, queue-operation, ...
        if record.get("isSidechain"):
            sidechain += 1
            continue
        session_id = str(record.get("sessionId") or session_id or path.stem)
        cwd = cwd or _str(record.get("cwd"))   # where the session began: its project
        body = _claude_code_text(record)
        uuid = _str(record.get("uuid"))
        if not body or uuid in seen:
            continue
        if uuid:
            seen.add(uuid)
        message = record["message"]
        when = time_or_error(path, number, record.get("timestamp"))
        if kind == "assistant" and turns and turns[-1].role == "assistant" and message.get("id") \
                and message.get("id") == reply_of:
            last = turns[-1]  # the same reply, streamed one content block per line
            turns[-1] = Turn(last.session, last.id, last.time, last.speaker, last.role,
                             f"{last.text}\n\n{body}", last.line)
            continue
        reply_of = message.get("id") if kind == "assistant" else None
        message_id = uuid or f"m-{len(turns) + 1}"
        turns.append(Turn("", message_id, when, kind, kind, body, number))
    if not turns and sidechain:
        raise TranscriptError(path, None, "only subagent (sidechain) messages — import the session's "
                              "main file, ~/.claude/projects/<project>/<session-id>.jsonl")
    session_id = session_id or path.stem
    turns = [Turn(session_id, t.id, t.time, t.speaker, t.role, t.text, t.line) for t in turns]
    return [Session(session_id, title or _opening(turns) or session_id, turns, path.name, cwd=cwd)]


def _opening(turns: list[Turn]) -> str | None:
    """A title for a log that gives none: the first words the person said, as a chat app
    titles a conversation (the id is a UUID, no name for a note; redacted as every title)."""
    first = next((t.text for t in turns if t.role == "user"), None)
    return " ".join(first.split()[:TITLE_WORDS]) if first else None


TITLE_WORDS = 10


def _claude_code_text(record: dict) -> str:
    """The visible text of a user or assistant line; "" for the app's own lines."""
    if record.get("isMeta") or record.get("isCompactSummary") or record.get("isApiErrorMessage") \
            or record.get("isVisibleInTranscriptOnly"):
        return ""
    message = record["message"]
    if record.get("type") == "assistant" and message.get("model") == "<synthetic>":
        return ""
    content = message.get("content")
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    texts = []
    for block in blocks:
        # Only text blocks: tool_use, tool_result, thinking, images are not speech.
        piece = block if isinstance(block, str) else block.get("text") \
            if isinstance(block, dict) and block.get("type") == "text" else None
        if not isinstance(piece, str):
            continue
        piece = _SYSTEM_REMINDER.sub("", piece).strip()
        if piece and not piece.lower().startswith(_CLAUDE_INJECTED) and piece.lower() not in _NO_REPLY:
            texts.append(piece)
    return "\n\n".join(texts)


# ---- Codex CLI ---------------------------------------------------------------------------

def load_codex(path: Path, text: str) -> list[Session]:
    """One session per rollout file, its id from `session_meta` (or the old header line)."""
    turns: list[Turn] = []
    session_id = title = started = cwd = None
    for index, (number, record) in enumerate(jsonl_records(path, text, AGENT_HINT)):
        kind, payload = record.get("type"), record.get("payload")
        if kind in ("session_meta", "turn_context") and isinstance(payload, dict):
            cwd = cwd or _str(payload.get("cwd"))   # where the session began: its project
        if kind == "session_meta" and isinstance(payload, dict):
            session_id = session_id or _str(payload.get("id"))
            started = started or time_or_error(path, number, payload.get("timestamp") or record.get("timestamp"))
            continue
        if index == 0 and "instructions" in record and "id" in record:  # the older header
            session_id = _str(record.get("id"))
            started = time_or_error(path, number, record.get("timestamp"))
            continue
        if kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "thread_name_updated":
            title = _str(payload.get("thread_name")) or title
            continue
        item = payload if kind == "response_item" else record if "payload" not in record else None
        turn = _codex_turn(path, number, item, record, len(turns) + 1) if isinstance(item, dict) else None
        if turn:
            turns.append(turn)
    session_id = session_id or path.stem
    turns = [Turn(session_id, t.id, t.time, t.speaker, t.role, t.text, t.line) for t in turns]
    return [Session(session_id, title or _opening(turns) or session_id, turns, path.name, started, cwd=cwd)]


def _codex_turn(path: Path, number: int, item: dict, record: dict, n: int) -> Turn | None:
    """A user or assistant message item as a turn; None for every other item."""
    role = item.get("role")
    if item.get("type", "message") != "message" or role not in ("user", "assistant"):
        return None  # developer/system prompts, function calls and output, reasoning
    content = item.get("content")
    parts = content if isinstance(content, list) else [content]
    if role == "user":  # the context Codex injects rides in user messages, part by part
        parts = [p for p in parts if not _injected(p)]
    body = content_text(parts)
    if not body:
        return None
    message_id = _str(item.get("id")) or f"m-{n}"
    return Turn("", message_id, time_or_error(path, number, record.get("timestamp")), role, role, body, number)


def _injected(part) -> bool:
    text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
    return isinstance(text, str) and text.lstrip().lower().startswith(_CODEX_INJECTED)


def _str(value) -> str | None:
    return str(value) if value not in (None, "") else None
