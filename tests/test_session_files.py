"""Session notes as files a person opens in Obsidian (issue 16): named by the export's title,
fenced code and blank lines kept as written, and read back exactly by `parse_session_turns`.
Real ChatGPT and Claude exports go through the real importers."""

import json
import random
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.helpers.clock import clock_at
from vaultmem.extract.importers import load_transcript
from vaultmem.extract.sessions import render_session, session_title
from vaultmem.store.note import parse_note, read_note
from vaultmem.store.session_note import Session, Turn, parse_session_turns

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from vault_audit import broken_fence_reason  # noqa: E402

CI_UUID = "28356f16-6677-5348-87a2-03501c432bd6"
BASH = "```bash\nset -euo pipefail\n\n# run the flaky test 20 times\nfor i in $(seq 20); do pytest -q tests/test_net.py; done\n```"
USER_TEXT = f"CI fails about one run in five. This is what I run locally:\n\n{BASH}\n\nIt never fails here."
REPLY_TEXT = ("Then it is probably the shared port. Give each run its own:\n\n"
              "```python\nimport socket\n\n\ndef free_port():\n    with socket.socket() as s:\n"
              "        s.bind((\"\", 0))\n        return s.getsockname()[1]\n```")
EPOCH = datetime(2026, 7, 14, 9, 30).timestamp()


def chatgpt_conversation(conversation_id: str, title: str | None, turns, start: float = EPOCH) -> dict:
    """One conversation as a ChatGPT export holds it: a hidden system root, then one node a message."""
    mapping = {"client-created-root": {"id": "client-created-root", "message": None, "parent": None,
                                       "children": ["sys"]},
               "sys": {"id": "sys", "parent": "client-created-root", "children": [],
                       "message": {"id": "sys", "author": {"role": "system", "name": None, "metadata": {}},
                                   "create_time": None, "content": {"content_type": "text", "parts": [""]},
                                   "metadata": {"is_visually_hidden_from_conversation": True},
                                   "recipient": "all"}}}
    parent = "sys"
    for n, (role, text) in enumerate(turns):
        node = f"{conversation_id[:8]}-{n:04d}-4a2b-9c3d-{n:012d}"
        mapping[parent]["children"] = [node]
        mapping[node] = {"id": node, "parent": parent, "children": [],
                         "message": {"id": node, "author": {"role": role, "name": None, "metadata": {}},
                                     "create_time": start + 20 * n, "update_time": None,
                                     "content": {"content_type": "text", "parts": [text]},
                                     "status": "finished_successfully", "end_turn": True, "weight": 1.0,
                                     "metadata": {}, "recipient": "all"}}
        parent = node
    return {"title": title, "create_time": start, "update_time": start + 600, "mapping": mapping,
            "current_node": parent, "conversation_id": conversation_id, "id": conversation_id}


def claude_conversation(uuid: str, name: str, turns) -> dict:
    messages = [{"uuid": f"{uuid[:8]}-m{n}", "sender": "human" if role == "user" else "assistant",
                 "created_at": f"2026-07-14T09:{30 + n:02d}:00", "text": text,
                 "content": [{"type": "text", "text": text}]}
                for n, (role, text) in enumerate(turns)]
    return {"uuid": uuid, "name": name, "created_at": "2026-07-14T09:30:00",
            "updated_at": "2026-07-14T09:40:00", "chat_messages": messages}


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def assert_round_trips(session: Session) -> str:
    """Render the session; its turns read back exactly. Returns the note's body."""
    body = parse_note(render_session(session).text).body
    turns = parse_session_turns(body)
    assert [(t.speaker, t.text) for t in turns] == [(t.speaker, t.text) for t in session.turns]
    return body


# ---- names -------------------------------------------------------------------------------

def session_named(title: str, sid: str = CI_UUID) -> Session:
    turn = Turn(sid, "m-1", datetime(2026, 7, 14, 9, 30), "user", "user", "hi", 1)
    return Session(sid, title, [turn], "conversations.json")


@pytest.mark.parametrize("title, name", [
    ("Fixing the flaky CI job", "2026-07-14 Fixing the flaky CI job"),
    ("修复不稳定的 CI 任务", "2026-07-14 修复不稳定的 CI 任务"),
    ("周末计划：杭州爬山", "2026-07-14 周末计划：杭州爬山"),  # a full-width colon is a safe name
    ('Why is "a/b" < c? [draft] #3 | ^x * y: z \\ w', "2026-07-14 Why is a b c draft 3 x y z w"),
    ("2026-07-14 standup notes", "2026-07-14 standup notes"),  # the date is not given twice
    ("  many   spaces\tand\nlines ", "2026-07-14 many spaces and lines"),
    (CI_UUID, f"2026-07-14 {CI_UUID}"),  # an untitled export: the importer gives the id
    ("", f"2026-07-14 {CI_UUID}"),
    ("???", f"2026-07-14 {CI_UUID}"),  # nothing left of the title
])
def test_a_session_is_named_by_its_date_and_title(title, name):
    assert session_title(session_named(title)) == name


def test_a_long_title_is_cut_at_a_word_and_leaves_room_for_a_part_number():
    title = "How to migrate a large Postgres database to a new major version without downtime, step by step"
    name = session_title(session_named(title))
    assert name == "2026-07-14 How to migrate a large Postgres database to a new major"
    assert len(f"{name} part 12") <= 80
    assert len(session_title(session_named("长" * 200))) == len("2026-07-14 ") + 60


def test_exports_name_their_notes_by_title_and_untitled_ones_by_id(tmp_path):
    path = write_json(tmp_path / "conversations.json", [
        chatgpt_conversation(CI_UUID, "Fixing the flaky CI job", [("user", USER_TEXT), ("assistant", REPLY_TEXT)]),
        chatgpt_conversation("7c1d2e3f-0000-4000-8000-000000000002", None, [("user", "hello")])])
    titled, untitled = load_transcript(path)
    assert render_session(titled).title == "2026-07-14 Fixing the flaky CI job"
    assert render_session(untitled).title == "2026-07-14 7c1d2e3f-0000-4000-8000-000000000002"
    (claude,) = load_transcript(write_json(tmp_path / "claude.json", [
        claude_conversation("5b6c7d8e-1111-4c3a-9f00-000000000003", "修复不稳定的 CI 任务",
                            [("user", USER_TEXT)])]), "claude")
    assert render_session(claude).title == "2026-07-14 修复不稳定的 CI 任务"


# ---- code blocks and blank lines ---------------------------------------------------------

@pytest.mark.parametrize("fmt", ["chatgpt", "claude"])
def test_a_fenced_block_with_a_blank_line_renders_as_a_code_block_and_reads_back(tmp_path, fmt):
    turns = [("user", USER_TEXT), ("assistant", REPLY_TEXT), ("user", "谢谢！\n\n我明天试试。")]
    data = ([chatgpt_conversation(CI_UUID, "修复不稳定的 CI 任务", turns)] if fmt == "chatgpt"
            else [claude_conversation(CI_UUID, "修复不稳定的 CI 任务", turns)])
    (session,) = load_transcript(write_json(tmp_path / "conversations.json", data), fmt)
    assert session.turns[0].text == USER_TEXT  # the importer keeps the text as written
    body = assert_round_trips(session)
    assert body.startswith("# 修复不稳定的 CI 任务\n\n")
    assert f"\n{BASH}\n" in body  # verbatim: fences, the blank line and `# run...` unescaped
    assert "\\```" not in body and body.count("```") == 4
    assert broken_fence_reason(body) is None
    blocks = [t.block_id for t in parse_session_turns(body)]
    user, reply, thanks = body.rstrip("\n").split("\n\n**")[1:]
    assert user.endswith(f"It never fails here. ^{blocks[0]}")
    # A reply ending in a fence: its block id on a line of its own, not inside the code.
    assert reply.endswith(f"        return s.getsockname()[1]\n```\n\n^{blocks[1]}")
    assert thanks.endswith(f"谢谢！\n\n我明天试试。 ^{blocks[2]}")


TRICKY = [
    "**Alice** · 2026-11-29 10:29",           # like a turn header
    "**Bob**",
    "**Bob** ^m-9",
    "done, see ^m-1",                          # like a block id at a line's end
    "^m-1",                                    # like a block id alone
    " ^x",
    "ends with \\^caret",
    "1\\. not a list",
    "\\already escaped",
    "# heading", "> quote", "- item", "1. first", "---", "| a | b |", "<div>",
    "```", "~~~ unclosed", "    indented code", "\tTabbed", "```js ^m-3",
    "Some text", "更多中文内容。", "",
]


def test_lines_that_look_like_turn_syntax_read_back_exactly():
    session = Session("s", "s", [Turn("s", f"m-{n}", None, "A", "user", text, 1) for n, text in enumerate([
        "before\n\n**Alice** · 2026-11-29 10:29\nafter",
        "para ^m-7\n\n^m-8\n\nlast",
        "```\n**Alice** · 2026-11-29 10:29\n\nfoo ^m-1\n\n^m-2\n\\# as written\n```",  # code: verbatim
        "````markdown\n```bash\necho nested\n```\n````",
        "~~~\nx\n~~~\n\n    indented at the end",
        "```never closed\ncode\n\n**Alice** · 2026-11-29 10:29",
        "text\n```\n\n```",
    ])], "s.jsonl")
    body = assert_round_trips(session)
    assert "```\n**Alice** · 2026-11-29 10:29\n\nfoo ^m-1\n\n^m-2\n\\# as written\n```" in body
    assert broken_fence_reason(body) == "escaped fence \\```"  # only the unclosed one is escaped


def test_random_turns_of_tricky_lines_read_back_exactly():
    rng = random.Random(16)
    for _ in range(300):
        texts = ["\n".join(rng.choice(TRICKY) for _ in range(rng.randint(1, 8))).strip("\n") or "x"
                 for _ in range(rng.randint(1, 4))]
        session = Session("s", "s", [Turn("s", f"m-{n}", None, "A", "user", text, 1)
                                     for n, text in enumerate(texts)], "s.jsonl")
        assert_round_trips(session)


def test_notes_written_before_keep_reading_back():
    """Notes of earlier versions: blank lines dropped, fences and code lines escaped."""
    body = ("**Alice** · 2026-11-29 10:29\nRun this:\n\\```bash\n\\# tests\npytest\n\\```\n1\\. done ^m-1\n\n"
            "**assistant**\nok ^m-2\n")
    turns = parse_session_turns(body)
    assert [(t.block_id, t.text) for t in turns] == [("m-1", "Run this:\n```bash\n# tests\npytest\n```\n1. done"),
                                                     ("m-2", "ok")]


# ---- in a vault --------------------------------------------------------------------------

def test_extracted_exports_get_titled_notes_that_links_resolve_and_a_reimport_finds(tmp_path, embedder):
    from vaultmem.api import Memory, init

    root = tmp_path / "vault"
    init(root)
    memory = Memory(root, embedder=embedder)
    same_title = "Fixing the flaky CI job"
    export = write_json(tmp_path / "conversations.json", [
        chatgpt_conversation(CI_UUID, same_title, [("user", "I'm allergic to peanuts, remember that.\n\n" + BASH)]),
        chatgpt_conversation("9e8d7c6b-0000-4000-8000-000000000004", same_title,
                             [("user", "My sister Maya lives in Lisbon.")], EPOCH + 3600)])
    claude = write_json(tmp_path / "claude.json", [claude_conversation(
        "5b6c7d8e-1111-4c3a-9f00-000000000003", "修复不稳定的 CI 任务", [("user", "我住在上海，在一家银行工作。")])])
    with clock_at("2026-07-20T08:00:00"):
        first = memory.extract([export, claude])
        sessions = root / "Memory" / "Sessions"
        names = sorted(p.name for p in sessions.glob("*.md"))
        assert names == ["2026-07-14 Fixing the flaky CI job 2.md", "2026-07-14 Fixing the flaky CI job.md",
                         "2026-07-14 修复不稳定的 CI 任务.md"]
        ids = {read_note(sessions / name).get("session") for name in names}
        assert ids == {CI_UUID, "9e8d7c6b-0000-4000-8000-000000000004", "5b6c7d8e-1111-4c3a-9f00-000000000003"}
        cited = [str(s) for p in (root / "Memory").rglob("*.md") if "Sessions" not in p.parts
                 for s in read_note(p).get("sources") or []]
        assert cited and all("Sessions/2026-07-14 " in s and CI_UUID not in s for s in cited)
        assert memory.doctor()["broken_links"] == []
        body = read_note(sessions / "2026-07-14 Fixing the flaky CI job.md").body
        assert f"\n{BASH}\n" in body and broken_fence_reason(body) is None

        before = {p.name: p.read_bytes() for p in sessions.glob("*.md")}
        again = memory.extract([export, claude])
        assert again["created"] == 0 and not any("Sessions" in rel for rel in again["notes"]), first
        assert {p.name: p.read_bytes() for p in sessions.glob("*.md")} == before
