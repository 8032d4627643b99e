"""Write transcripts in the four formats of SPEC §4 for tests that plant text in them.

A turn is `(role, text)` with role "user" or "assistant"; ids are `<prefix>-<n>` and times
step 30 s from `start`, so any number of turns gets valid, distinct ones.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

START = datetime(2026, 12, 1, 10, 0, 0)


def _times(turns, start: datetime):
    return [start + timedelta(seconds=30 * n) for n in range(len(turns))]


def write_jsonl(path: Path, session: str, turns, *, prefix: str = "j", speaker: str = "Alice",
                start: datetime = START) -> Path:
    lines = [json.dumps({"session": session, "id": f"{prefix}-{n}", "time": when.isoformat(),
                         "speaker": speaker if role == "user" else "assistant", "role": role, "text": text},
                        ensure_ascii=False)
             for n, ((role, text), when) in enumerate(zip(turns, _times(turns, start)))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_chatgpt(path: Path, conversation: str, title: str, turns, *, prefix: str = "g",
                  start: datetime = START) -> Path:
    """A ChatGPT `conversations.json` with one conversation whose mapping is a single branch."""
    mapping, parent = {}, None
    epoch = int(start.timestamp())
    for n, (role, text) in enumerate(turns):
        node = f"{prefix}-{n}"
        mapping[node] = {"id": node, "parent": parent,
                         "children": [f"{prefix}-{n + 1}"] if n + 1 < len(turns) else [],
                         "message": {"id": node, "author": {"role": role}, "create_time": epoch + 30 * n,
                                     "content": {"content_type": "text", "parts": [text]}}}
        parent = node
    path.write_text(json.dumps([{"id": conversation, "title": title, "create_time": epoch,
                                 "mapping": mapping, "current_node": parent}], ensure_ascii=False),
                    encoding="utf-8")
    return path


def write_claude(path: Path, conversation: str, name: str, turns, *, prefix: str = "c",
                 start: datetime = START) -> Path:
    """A Claude `conversations.json` with one conversation."""
    messages = [{"uuid": f"{prefix}-{n}", "sender": "human" if role == "user" else "assistant",
                 "created_at": when.isoformat(), "content": [{"type": "text", "text": text}]}
                for n, ((role, text), when) in enumerate(zip(turns, _times(turns, start)))]
    path.write_text(json.dumps([{"uuid": conversation, "name": name, "created_at": start.isoformat(),
                                 "chat_messages": messages}], ensure_ascii=False), encoding="utf-8")
    return path


def write_markdown(path: Path, session: str, turns, *, speaker: str = "Alice",
                   start: datetime = START) -> Path:
    """`**Name:** text` turns under a front matter naming the session."""
    blocks = [f"**{speaker if role == 'user' else 'Assistant'}:** {text}" for role, text in turns]
    path.write_text(f"---\nsession: {session}\ndate: {start.date().isoformat()}\n---\n\n"
                    + "\n\n".join(blocks) + "\n", encoding="utf-8")
    return path
