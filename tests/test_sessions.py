"""Session notes: frontmatter, one linkable block per turn, redaction, and reading turns back."""

from datetime import datetime
from pathlib import Path

import pytest

from vaultmem.extract.importers import load_transcript
from vaultmem.extract.sessions import message_link, redact_session, render_session, session_title
from vaultmem.store.files import atomic_write
from vaultmem.store.init import init_vault
from vaultmem.store.note import parse_note, read_note
from vaultmem.store.session_note import Session, SessionTurn, Turn, block_id, block_ids, parse_session_turns, turn_time
from vaultmem.store.values import validate_memory
from vaultmem.store.vault import Vault

DATA = Path(__file__).parent / "data" / "transcripts"


def make_session(*turns, title="chat-3f2a", started=None):
    return Session("chat-3f2a", title, [Turn("chat-3f2a", *t) for t in turns], "chat.jsonl", started)


@pytest.mark.parametrize("message_id, expected", [
    ("m-12", "m-12"), ("D1:3", "D1-3"), ("6745a1b2-0000-8000-9000-aaaaaaaaaaaa", "6745a1b2-0000-8000-9000-aaaaaaaaaaaa"),
    ("msg_7.1", "msg-7-1"), ("消息1", "1"), (":::", "m"), (42, "42"),
])
def test_block_id_keeps_only_letters_digits_and_dashes(message_id, expected):
    assert block_id(message_id) == expected


def test_block_ids_are_unique_and_deterministic():
    ids = ["D1:3", "D1-3", "d1_3", "m-1", "m-1:"]
    assert block_ids(ids) == ["D1-3", "D1-3-2", "d1-3-3", "m-1", "m-1-2"]
    assert block_ids(ids) == block_ids(list(ids))


def test_message_link():
    assert message_link("Sessions/2026-11-29 chat-3f2a", "m-12") == "[[Sessions/2026-11-29 chat-3f2a#^m-12]]"


def test_render_jsonl_session_frontmatter_and_blocks():
    sessions = load_transcript(DATA / "chat_en.jsonl")
    note = render_session(sessions[0], user="alice", run="run-01abc", note_id="01JDQ7ZK3M8X2V4N6P9R0S1T2U")
    assert note.title == "2026-11-29 chat-3f2a"
    assert note.note_id == "01JDQ7ZK3M8X2V4N6P9R0S1T2U"
    assert note.block_ids == {"m-1": "m-1", "m-2": "m-2", "m-3": "m-3"}
    assert note.redactions == ["api-key"]
    assert note.text.startswith(
        "---\n"
        "id: 01JDQ7ZK3M8X2V4N6P9R0S1T2U\n"
        "type: session\n"
        "created: 2026-11-29T10:29:41\n"
        "updated: 2026-11-29T10:29:41\n"
        "status: active\n"
        "user: alice\n"
        "session: chat-3f2a\n"
        "source: chat_en.jsonl\n"
        "run: run-01abc\n"
        "message_ids:\n"
        "  - m-1\n"
        "  - m-2\n"
        "  - m-3\n"
        "tags:\n"
        "  - vaultmem/session\n"
        "---\n"
        "**Alice** · 2026-11-29 10:29\n"
        "Hi! I'm trying to cut back on coffee, maybe one cup a day. ^m-1\n"
        "\n"
        "**assistant** · 2026-11-29 10:29\n"
        "That sounds like a good plan. Want some tips? ^m-2\n"
        "\n"
        "**Alice** · 2026-11-29 10:31\n"
        "Yes please.\n"
        "Also my api_key=[REDACTED:api-key] for the tracker app. ^m-3\n")
    parsed = parse_note(note.text)
    assert validate_memory(parsed) == []
    assert parsed.meta["created"] == datetime(2026, 11, 29, 10, 29, 41)


def test_original_ids_stay_verbatim_in_frontmatter_and_map_back_from_blocks():
    sessions = load_transcript(DATA / "chat_en.jsonl")
    note = render_session(sessions[1])
    meta = parse_note(note.text).meta
    assert list(meta["message_ids"]) == ["D1:3", "D1:4"]
    turns = parse_session_turns(parse_note(note.text).body)
    by_block = dict(zip(block_ids(list(meta["message_ids"])), meta["message_ids"]))
    assert [by_block[t.block_id] for t in turns] == ["D1:3", "D1:4"]
    assert turns[1].time == ""  # the turn without a time renders without one


def test_secrets_never_reach_the_written_note(tmp_path):
    init_vault(tmp_path)
    vault = Vault(tmp_path)
    (session,) = load_transcript(DATA / "chat_zh.jsonl")
    note = render_session(session)
    path = vault.unique_path(vault.folder_for("session"), note.title)
    atomic_write(path, note.text)
    written = path.read_text(encoding="utf-8")
    assert "13812345678" not in written and "abc123" not in written
    assert "我的手机号是[REDACTED:phone]，密码是[REDACTED:password]。" in written
    assert note.redactions == ["phone", "password"]
    assert vault.rel(path).startswith("Memory/Sessions/2026-11-29 会话-1")
    back = read_note(path)
    assert back.meta["type"] == "session" and back.meta["session"] == "会话-1"
    assert [t.speaker for t in parse_session_turns(back.body)] == ["小明", "助手", "小明"]


def test_title_heading_and_markdown_turns_keep_their_blank_lines():
    (session,) = load_transcript(DATA / "chat_en.md")
    note = render_session(session)
    assert note.title == "2026-11-29 Coffee and sleep"
    body = parse_note(note.text).body
    assert body.startswith("# Coffee and sleep\n\n**Alice**\n")
    blocks = body.strip().split("\n\n")
    assert blocks[1:3] == ["**Alice**\nI've been sleeping badly.\nI think it's the coffee.",
                           "Note: I drink four cups a day. ^m-1"]  # the blank line the user left
    assert blocks[3] == ("**Assistant**\nFour cups is a lot. Try stopping after noon.\nHere is a plan:\n"
                         "\\- one cup in the morning\n\\- tea after lunch ^m-2")
    turns = parse_session_turns(body)
    assert [t.block_id for t in turns] == ["m-1", "m-2", "m-3", "m-4"]
    assert turns[0].text == "I've been sleeping badly.\nI think it's the coffee.\n\nNote: I drink four cups a day."
    assert turns[1].text.endswith("- one cup in the morning\n- tea after lunch")
    assert turns[2] == SessionTurn("m-3", "Alice", "2026-11-29 10:05",
                                   "Thanks, I'll try that. My email password: [REDACTED:password]")
    assert turn_time(turns[2].time) == datetime(2026, 11, 29, 10, 5)


def test_markdown_block_starts_inside_a_turn_are_escaped_and_read_back():
    text = ("Plan:\n\n# not a heading\n> not a quote\n1. first\n2) second\n* star\n+ plus\n"
            "```\ncode\n```\n---\n| a | b |\n<div>\n\\already escaped\nends with ^caret")
    session = make_session(("m-1", datetime(2026, 11, 29, 9, 0), "Bo*b", "user", text, 1))
    note = render_session(session)
    body = parse_note(note.text).body
    assert "**Bo\\*b** · 2026-11-29 09:00\nPlan:\n\n" in body
    assert "\\# not a heading\n\\> not a quote\n1\\. first\n2\\) second\n" in body
    assert "\n```\ncode\n```\n" in body  # a fence is a code block, not escaped
    (turn,) = parse_session_turns(body)
    assert turn.speaker == "Bo*b"
    assert turn.text == text
    assert turn.block_id == "m-1"


def test_session_without_times_uses_the_clock(monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T08:00:00")
    session = make_session(("x:1", None, "user", "user", "hello", 1))
    assert session_title(session) == "2026-12-01 chat-3f2a"
    note = render_session(session)
    meta = parse_note(note.text).meta
    assert meta["created"] == datetime(2026, 12, 1, 8, 0)
    assert "run" not in meta
    assert parse_session_turns(parse_note(note.text).body) == [SessionTurn("x-1", "user", "", "hello")]


def test_session_start_prefers_the_sources_start_time():
    session = make_session(("m-1", datetime(2026, 11, 29, 10, 0), "A", "user", "hi", 1),
                           started=datetime(2026, 11, 28, 23, 59))
    assert session_title(session) == "2026-11-28 chat-3f2a"


def test_parse_skips_paragraphs_that_are_not_turns():
    body = ("# Title\n\nSome words the user added.\n\n**Alice** · 2026-11-29 10:29\nhi ^m-1\n\n"
            "**Not a turn** without a block id\n\n**Bob** ^m-2\n")
    assert parse_session_turns(body) == [SessionTurn("m-1", "Alice", "2026-11-29 10:29", "hi"),
                                         SessionTurn("m-2", "Bob", "", "")]


def test_redact_session_returns_a_redacted_copy():
    session = make_session(("m-1", None, "A", "user", "my password is hunter2", 1),
                           ("m-2", None, "B", "assistant", "noted", 2))
    clean, kinds = redact_session(session)
    assert kinds == ["password"]
    assert clean.turns[0].text == "my password is [REDACTED:password]"
    assert clean.turns[1] is session.turns[1]
    assert session.turns[0].text == "my password is hunter2"  # the original is untouched


@pytest.mark.parametrize("name", ["chatgpt_en.json", "chatgpt_zh.json", "claude_en.json", "claude_zh.json",
                                  "chat_zh.md", "plain_en.txt"])
def test_every_fixture_round_trips_through_a_note(name):
    for session in load_transcript(DATA / name):
        note = render_session(session)
        parsed = parse_note(note.text)
        assert validate_memory(parsed) == []
        turns = parse_session_turns(parsed.body)
        assert [t.block_id for t in turns] == block_ids([t.id for t in session.turns])
        assert [t.speaker for t in turns] == [t.speaker for t in session.turns]
        expected = [redact_session(session)[0].turns[i].text for i in range(len(session.turns))]
        assert [t.text for t in turns] == expected
