"""The chat apps' exports: ChatGPT's `conversations.json` (the branch the person last saw)
and Claude's (`chat_messages`), each read into `Session`s of `Turn`s.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.errors import TranscriptError
from vaultmem.extract.records import line_of, load_json, time_or_error
from vaultmem.store.session_note import Session, Turn


def load_chatgpt(path: Path, text: str) -> list[Session]:
    data = load_json(path, text)
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
        started = time_or_error(path, line_of(text, sid), conv.get("create_time"))
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


def as_dict(value) -> dict:
    """An export's object, or {} where the export holds something else."""
    return value if isinstance(value, dict) else {}


def _chatgpt_turn(path: Path, text: str, sid: str, node: dict) -> Turn | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    author = as_dict(message.get("author"))
    role = author.get("role")
    if role not in ("user", "assistant") or as_dict(message.get("metadata")).get("is_visually_hidden_from_conversation"):
        return None  # system prompts, tool output and hidden context are not conversation
    if message.get("recipient") not in (None, "all"):
        return None  # an assistant call to a tool, not a reply
    content = as_dict(message.get("content"))
    if content.get("content_type", "text") not in ("text", "multimodal_text"):
        return None  # code, browsing, reasoning traces
    parts = content.get("parts")
    parts = [p for p in parts if isinstance(p, str)] if isinstance(parts, list) else []
    body = "\n".join(parts).strip()
    if not body:
        return None
    message_id = str(message.get("id") or node.get("id"))
    line = line_of(text, message_id)
    name = author.get("name")
    return Turn(sid, message_id, time_or_error(path, line, message.get("create_time")),
                str(name or role), role, body, line or 0)


def load_claude(path: Path, text: str) -> list[Session]:
    data = load_json(path, text)
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
        started = time_or_error(path, line_of(text, sid), conv.get("created_at"))
        sessions.append(Session(sid, str(conv.get("name") or sid), turns, path.name, started))
    return sessions


def _claude_turn(path: Path, text: str, sid: str, number: int, message) -> Turn | None:
    if not isinstance(message, dict):
        raise TranscriptError(path, None, f"conversation {sid}: message {number} is not an object")
    message_id = str(message.get("uuid") or f"m-{number}")
    line = line_of(text, message_id)
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
    return Turn(sid, message_id, time_or_error(path, line, message.get("created_at")),
                role, role, body, line or 0)
