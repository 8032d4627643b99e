"""Transcript importers: the four SPEC §4 formats, English and Chinese, and bad input."""

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from vaultmem.errors import TranscriptError
from vaultmem.extract.importers import load_transcript, sniff_format
from vaultmem.extract.records import parse_time
from vaultmem.store.session_note import Session, Turn

DATA = Path(__file__).parent / "data" / "transcripts"


def local(epoch: float) -> datetime:
    """What an aware time becomes: the machine's local time, offset dropped."""
    return datetime.fromtimestamp(epoch, timezone.utc).astimezone().replace(tzinfo=None)


@pytest.mark.parametrize("name, fmt", [
    ("chat_en.jsonl", "jsonl"), ("chat_zh.jsonl", "jsonl"), ("chatgpt_en.json", "chatgpt"),
    ("chatgpt_zh.json", "chatgpt"), ("claude_en.json", "claude"), ("claude_zh.json", "claude"),
    ("chat_en.md", "markdown"), ("chat_zh.md", "markdown"), ("plain_en.txt", "markdown"),
])
def test_sniff_format_recognises_each_fixture(name, fmt):
    assert sniff_format(DATA / name) == fmt


def test_sniff_by_content_when_the_name_says_nothing(tmp_path):
    for name, fmt in [("chatgpt_en.json", "chatgpt"), ("claude_en.json", "claude"), ("chat_en.jsonl", "jsonl")]:
        target = tmp_path / f"export-{fmt}"
        shutil.copy(DATA / name, target)
        assert sniff_format(target) == fmt


def test_jsonl_groups_sessions_keeps_ids_and_defaults_speaker_to_role():
    sessions = load_transcript(DATA / "chat_en.jsonl")
    assert [s.id for s in sessions] == ["chat-3f2a", "chat-7b1c"]
    first = sessions[0]
    assert isinstance(first, Session) and first.source == "chat_en.jsonl"
    assert [t.id for t in first.turns] == ["m-1", "m-2", "m-3"]
    assert first.turns[0] == Turn("chat-3f2a", "m-1", datetime(2026, 11, 29, 10, 29, 41), "Alice", "user",
                                  "Hi! I'm trying to cut back on coffee, maybe one cup a day.", 1)
    assert first.turns[1].speaker == "assistant" and first.turns[1].role == "assistant"
    assert first.turns[2].line == 4  # the blank line 3 is skipped but counted
    assert "\n" in first.turns[2].text
    second = sessions[1]
    assert [t.id for t in second.turns] == ["D1:3", "D1:4"]
    assert second.turns[0].time == local(datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc).timestamp())
    assert second.turns[1].time is None
    assert first.start == datetime(2026, 11, 29, 10, 29, 41)


def test_jsonl_chinese_offsets_and_epoch_numbers():
    (session,) = load_transcript(DATA / "chat_zh.jsonl")
    assert session.id == "会话-1"
    assert [t.speaker for t in session.turns] == ["小明", "助手", "小明"]
    assert session.turns[0].text == "我最近在学日语，每天晚上练习半小时。"
    aware = datetime(2026, 11, 29, 20, 15, tzinfo=timezone.utc).timestamp() - 8 * 3600
    assert session.turns[0].time == local(aware)
    assert session.turns[1].time == local(1764418560)


def test_jsonl_missing_session_groups_under_file_stem_and_missing_id_is_numbered(tmp_path):
    path = tmp_path / "talk.jsonl"
    path.write_text('{"role": "user", "text": "one"}\n{"role": "assistant", "text": "two"}\n', encoding="utf-8")
    (session,) = load_transcript(path)
    assert session.id == "talk"
    assert [t.id for t in session.turns] == ["m-1", "m-2"]


@pytest.mark.parametrize("name, line, words", [
    ("bad_json.jsonl", 3, "not JSON"),
    ("missing_text.jsonl", 2, "missing 'text'"),
    ("unknown_role.jsonl", 2, "unknown role 'narrator'"),
    ("bad_time.jsonl", 1, "bad time"),
    ("latin1.md", 1, "not UTF-8"),
])
def test_bad_input_names_file_and_line(name, line, words):
    with pytest.raises(TranscriptError) as caught:
        load_transcript(DATA / name)
    error = caught.value
    assert error.path.endswith(name) and error.line == line
    assert words in error.reason
    assert str(error).startswith(f"{DATA / name}:{line}: ")


def test_duplicate_message_ids_are_rejected(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "m-1", "role": "user", "text": "a"}\n{"id": "m-1", "role": "user", "text": "b"}\n')
    with pytest.raises(TranscriptError, match="duplicate message id 'm-1'") as caught:
        load_transcript(path)
    assert caught.value.line == 2


@pytest.mark.parametrize("name, fmt, words", [
    ("empty.jsonl", None, "file is empty"),
    ("not_a_chat.txt", None, "cannot tell the transcript format"),
    ("other.json", None, "neither a ChatGPT nor a Claude"),
    ("chatgpt_no_mapping.json", "chatgpt", "has no 'mapping'"),
    ("chatgpt_en.json", "claude", "has no 'chat_messages'"),
    ("not_a_chat.txt", "markdown", "no '**Name:** text'"),
    ("chat_en.jsonl", "yaml", "unknown format 'yaml'"),
    ("missing.jsonl", None, "file not found"),
])
def test_errors_without_a_line_say_what_to_do(name, fmt, words):
    with pytest.raises(TranscriptError) as caught:
        load_transcript(DATA / name, fmt)
    assert words in caught.value.reason
    assert "—" in caught.value.reason  # every message carries a hint


def test_claude_unknown_sender_points_at_the_message():
    with pytest.raises(TranscriptError, match="unknown sender 'robot'") as caught:
        load_transcript(DATA / "claude_bad_sender.json")
    text = (DATA / "claude_bad_sender.json").read_text()
    assert caught.value.line == text[:text.index('"b-m1"')].count("\n") + 1


def test_chatgpt_follows_the_active_branch_and_skips_system_tool_and_empty_nodes():
    sessions = load_transcript(DATA / "chatgpt_en.json")
    assert len(sessions) == 1  # the conversation with only a system node is dropped
    (session,) = sessions
    assert session.id == "6745a1b2-0000-8000-9000-aaaaaaaaaaaa"
    assert session.title == "Trip to Lisbon"
    assert [t.id for t in session.turns] == ["u-1", "a-1", "u-2", "a-2"]
    assert [t.role for t in session.turns] == ["user", "assistant", "user", "assistant"]
    assert session.turns[2].text == "Here is a photo of the menu"  # the image part is left out
    assert session.turns[3].text == "Looks tasty.\n\nTry the bacalhau."
    assert session.turns[0].time == local(1764412182)
    assert session.started == local(1764412181)
    raw = (DATA / "chatgpt_en.json").read_text()
    assert session.turns[0].line == raw[:raw.index('"u-1"')].count("\n") + 1


def test_chatgpt_without_current_node_follows_the_latest_children(tmp_path):
    data = json.loads((DATA / "chatgpt_en.json").read_text())
    del data[0]["current_node"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    (session,) = load_transcript(path)
    assert [t.id for t in session.turns] == ["u-1", "a-1", "u-2", "a-2"]


def test_chatgpt_chinese():
    (session,) = load_transcript(DATA / "chatgpt_zh.json")
    assert session.title == "周末计划"
    assert session.turns[0].text == "这个周末我想去杭州爬山，我对花粉过敏。"
    assert len(session.turns) == 3


def test_claude_text_blocks_fallback_text_and_titles():
    first, second = load_transcript(DATA / "claude_en.json")
    assert first.title == "Running schedule" and first.id == "0d6b2f0e-1111-4c3a-9f00-000000000001"
    assert [t.id for t in first.turns] == ["c1-m1", "c1-m2", "c1-m3"]  # the empty c1-m4 is skipped
    assert [t.role for t in first.turns] == ["user", "assistant", "user"]
    assert first.turns[1].text == "Nice routine.\n\nWant me to track it?"  # tool blocks left out
    assert first.turns[2].text == "Only the text field here."
    assert first.turns[0].time == local(datetime(2026, 11, 28, 7, 0, 5, tzinfo=timezone.utc).timestamp())
    assert second.title == second.id  # an untitled conversation is named by its uuid
    (zh,) = load_transcript(DATA / "claude_zh.json")
    assert zh.title == "换工作" and zh.turns[1].text == "恭喜！需要帮你准备什么吗？"


def test_markdown_bold_names_continuations_front_matter_and_roles():
    (session,) = load_transcript(DATA / "chat_en.md")
    assert session.id == "chat_en" and session.title == "Coffee and sleep"
    assert session.started == datetime(2026, 11, 29, 10, 0)  # the heading refines the date
    assert [t.id for t in session.turns] == ["m-1", "m-2", "m-3", "m-4"]
    assert [t.speaker for t in session.turns] == ["Alice", "Assistant", "Alice", "ChatGPT"]
    assert [t.role for t in session.turns] == ["user", "assistant", "user", "assistant"]
    assert session.turns[0].text == ("I've been sleeping badly.\nI think it's the coffee.\n\n"
                                     "Note: I drink four cups a day.")
    assert session.turns[1].text.endswith("- one cup in the morning\n- tea after lunch")
    assert session.turns[2].time == datetime(2026, 11, 29, 10, 5)
    assert session.turns[0].line == 9


def test_markdown_chinese_plain_names_and_heading_date():
    (session,) = load_transcript(DATA / "chat_zh.md")
    assert session.title == "2026-11-28 晚上的聊天"
    assert session.started == datetime(2026, 11, 28)
    assert [t.speaker for t in session.turns] == ["用户", "助手", "用户", "助手"]
    assert [t.role for t in session.turns] == ["user", "assistant", "user", "assistant"]
    assert session.turns[0].text == "我养了一只猫，叫年糕。\n它三岁了。"


def test_plain_names_seen_once_stay_inside_the_turn():
    (session,) = load_transcript(DATA / "plain_en.txt", "markdown")
    assert [t.speaker for t in session.turns] == ["Bob", "Carol", "Bob", "Carol"]
    assert all(t.role == "user" for t in session.turns)  # two people, no assistant
    assert "Note: the deadline moved to Friday." in session.turns[1].text


@pytest.mark.parametrize("value, expected", [
    ("2026-11-29T10:29:41", datetime(2026, 11, 29, 10, 29, 41)),
    ("2026-11-29 10:29", datetime(2026, 11, 29, 10, 29)),
    ("2026-11-29", datetime(2026, 11, 29)),
    ("2026-11-29T10:29:41.123456789", datetime(2026, 11, 29, 10, 29, 41)),
    ("2026-11-29T10:29:41.5Z", local(datetime(2026, 11, 29, 10, 29, 41, tzinfo=timezone.utc).timestamp())),
    ("2026-11-29T10:29:41+0100", local(datetime(2026, 11, 29, 9, 29, 41, tzinfo=timezone.utc).timestamp())),
    (1764412181, local(1764412181)),
    (1764412181000, local(1764412181)),
    ("1764412181", local(1764412181)),
    (None, None),
])
def test_parse_time(value, expected):
    assert parse_time(value) == expected


@pytest.mark.parametrize("value", ["yesterday", "29/11/2026", True, [2026]])
def test_parse_time_rejects_other_shapes(value):
    with pytest.raises(ValueError):
        parse_time(value)


def test_markdown_time_prefixes_and_bold_variants(tmp_path):
    path = tmp_path / "log.md"
    path.write_text("[2026-11-29 10:29] Alice: morning\n[2026-11-29 10:30] Bot: hello\n"
                    "[2026-11-29 10:31] Alice: see https://example.com now\n", encoding="utf-8")
    (session,) = load_transcript(path)
    assert [(t.speaker, t.role, t.time) for t in session.turns] == [
        ("Alice", "user", datetime(2026, 11, 29, 10, 29)), ("Bot", "assistant", datetime(2026, 11, 29, 10, 30)),
        ("Alice", "user", datetime(2026, 11, 29, 10, 31))]
    assert session.turns[2].text == "see https://example.com now"
    bold = tmp_path / "bold.md"
    bold.write_text("- **Alice**: one\n- **Claude:** two\n```\nBob: inside a fence\n```\n", encoding="utf-8")
    (session,) = load_transcript(bold)
    assert [(t.speaker, t.role) for t in session.turns] == [("Alice", "user"), ("Claude", "assistant")]
    assert session.turns[1].text == "two\n```\nBob: inside a fence\n```"
