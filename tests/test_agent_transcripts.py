"""Transcripts agents write themselves (vaultmem/extract/agent_transcripts.py), OpenAI-style
jsonl, batch failures of `extract` and the `hook session-end` command.

The samples in tests/data/agents/ follow the real shapes (Claude Code 2.1 session logs,
Codex CLI rollouts old and new, OpenAI chat messages) and plant a distinctive marker in
every piece that must not become a memory: tool calls and their output, thinking and
reasoning, system and developer prompts, injected context, subagent (sidechain) turns."""

import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import TranscriptError
from vaultmem.extract.importers import FORMATS, load_transcript, sniff_format
from vaultmem.store import read_head

DATA = Path(__file__).parent / "data" / "agents"
CLAUDE_CODE = DATA / "7f3c2a1e-5b4d-4c8e-9a6f-1d2e3f4a5b6c.jsonl"
CODEX = DATA / "rollout-2026-11-29T14-02-10-0199a8f2-3c4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CODEX_OLD = DATA / "rollout-2025-07-14T08-30-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"
OPENAI = DATA / "openai_chat.jsonl"
SAMPLES = [CLAUDE_CODE, CODEX, CODEX_OLD, OPENAI]

# Every marker planted in a part that is not the person's or the assistant's visible words,
# and the memory-like sentences hidden there ("I prefer Vim" in a tool result, ...).
MARKER = re.compile(r"\b[A-Z]+-[A-Z]+-\d{2}\b")
HIDDEN_CLAIMS = ["Vim", "Reykjavik", "zebracorn", "Emacs", "Oslo", "German", "Tromso", "Bergen",
                 "sailing", "Madrid", "hates snow", "tabs"]


def local(iso_utc: str) -> datetime:
    """What a `...Z` time becomes: the machine's local time, offset dropped."""
    aware = datetime.fromisoformat(iso_utc).replace(tzinfo=timezone.utc)
    return aware.astimezone().replace(tzinfo=None, microsecond=0)


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T10:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)


def use_model(monkeypatch, embedder):
    """In-process CLI commands open their Memory with the shared model."""
    monkeypatch.setattr("vaultmem.cli.app.Ctx.memory",
                        lambda self, user=None: api.Memory(self.vault_opt, embedder=embedder))


def all_texts(sessions) -> str:
    return "\n".join(t.text for s in sessions for t in s.turns)


# ---- sniffing ------------------------------------------------------------------------------

@pytest.mark.parametrize("path, fmt", [(CLAUDE_CODE, "claude-code"), (CODEX, "codex"),
                                       (CODEX_OLD, "codex"), (OPENAI, "jsonl")])
def test_sniffing_tells_agent_logs_from_plain_jsonl(path, fmt, tmp_path):
    assert sniff_format(path) == fmt
    unnamed = tmp_path / "transcript"  # no suffix: the content alone decides
    shutil.copy(path, unnamed)
    assert sniff_format(unnamed) == fmt


def test_the_cli_offers_every_importer_format():
    from vaultmem.cli.extract import FORMATS as CLI_FORMATS

    assert tuple(CLI_FORMATS) == FORMATS


# ---- Claude Code ---------------------------------------------------------------------------

def test_claude_code_keeps_only_what_the_person_and_assistant_said():
    (session,) = load_transcript(CLAUDE_CODE)
    assert session.id == "7f3c2a1e-5b4d-4c8e-9a6f-1d2e3f4a5b6c"  # the log's sessionId
    assert session.title == "Fixing the flaky upload test"      # its summary line
    assert [(t.role, t.text) for t in session.turns] == [
        ("user", "I always use pnpm, never npm, in my projects. Can you fix the flaky upload test in tidepool?"),
        ("assistant", "I'll look at the upload test first."),
        ("assistant", "The test waits on a fixed timeout; I made it wait for the upload event instead."),
        ("user", "Thanks. My daughter Ines starts school in Lisbon next September."),
        ("assistant", "Congratulations to Ines! The upload test passes now."),
    ]
    assert session.turns[0].id == "d1000000-0000-4000-8000-000000000001"  # the line's uuid, verbatim
    assert session.cwd == "/home/ana/code/tidepool"                     # where it ran: its project
    assert session.turns[0].time == local("2026-11-28T09:15:20")
    text = all_texts([session])
    assert not MARKER.search(text)
    assert not any(claim in text for claim in HIDDEN_CLAIMS)


def test_claude_code_reply_streamed_over_lines_is_one_turn(tmp_path):
    lines = [{"type": "user", "sessionId": "s-1", "uuid": "u-1", "timestamp": "2026-11-28T09:00:00Z",
              "message": {"role": "user", "content": "Hello"}}]
    lines += [{"type": "assistant", "sessionId": "s-1", "uuid": f"a-{n}", "timestamp": f"2026-11-28T09:00:0{n}Z",
               "message": {"id": "msg_1", "role": "assistant", "content": [block]}}
              for n, block in enumerate([{"type": "text", "text": "First part."},
                                         {"type": "tool_use", "id": "t", "name": "Read", "input": {}},
                                         {"type": "text", "text": "Second part."}], start=1)]
    path = tmp_path / "s-1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (session,) = load_transcript(path)
    assert [(t.id, t.text) for t in session.turns] == [("u-1", "Hello"), ("a-1", "First part.\n\nSecond part.")]


def test_claude_code_line_written_twice_is_one_turn(tmp_path):
    line = json.dumps({"type": "user", "sessionId": "s-1", "uuid": "u-1", "timestamp": "2026-11-28T09:00:00Z",
                       "message": {"role": "user", "content": "I live in Porto."}})
    path = tmp_path / "s-1.jsonl"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    (session,) = load_transcript(path)
    assert [t.id for t in session.turns] == ["u-1"]


def test_a_subagent_log_alone_says_where_the_conversation_is(tmp_path):
    path = tmp_path / "agent-a2898e3.jsonl"
    path.write_text(json.dumps({"type": "user", "isSidechain": True, "sessionId": "s", "uuid": "u",
                                "message": {"role": "user", "content": "Search the repo"}}) + "\n")
    with pytest.raises(TranscriptError, match="only subagent") as caught:
        load_transcript(path)
    assert "main file" in caught.value.reason


# ---- Codex ---------------------------------------------------------------------------------

def test_codex_rollout_keeps_the_conversation_and_drops_injected_context():
    (session,) = load_transcript(CODEX)
    assert session.id == "0199a8f2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"  # session_meta's id
    assert session.title == "My name is Ana and I am allergic to shellfish."  # no title given: the opening
    assert session.start == local("2026-11-29T14:02:10")
    assert session.cwd == "/home/ana/code/harbor"                       # session_meta's cwd
    assert [(t.id, t.role) for t in session.turns] == [("m-1", "user"), ("m-2", "assistant"),
                                                      ("m-3", "user"), ("m-4", "assistant")]
    assert session.turns[0].text.startswith("My name is Ana and I am allergic to shellfish.")
    assert session.turns[0].time == local("2026-11-29T14:02:31")
    text = all_texts([session])
    assert not MARKER.search(text)
    assert not any(claim in text for claim in HIDDEN_CLAIMS)


def test_codex_older_rollout_header_and_bare_items():
    (session,) = load_transcript(CODEX_OLD, "codex")
    assert session.id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert session.title == "I work as a nurse at the harbour clinic. Rename"
    assert session.start == local("2025-07-14T08:30:00")
    assert [(t.id, t.role, t.text) for t in session.turns] == [
        ("m-1", "user", "I work as a nurse at the harbour clinic. Rename the script please."),
        ("msg_old_reply", "assistant", "Renamed a.sh to b.sh.")]


# ---- OpenAI-style jsonl --------------------------------------------------------------------

def test_openai_style_messages_content_parts_names_and_dropped_roles():
    (session,) = load_transcript(OPENAI)
    assert [(t.id, t.speaker, t.role, t.text) for t in session.turns] == [
        ("m-1", "Maya", "user", "I just moved to Denver for a new job."),
        ("m-2", "assistant", "assistant", "Welcome to Denver! Expect snow this week."),
        ("m-3", "Maya", "user", "I'm vegetarian, so please keep restaurant tips meat-free."),
        ("m-4", "assistant", "assistant", "Noted: meat-free tips only."),
    ]


def test_plain_jsonl_system_lines_still_count(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "system", "text": "Alice joined the chat"}\n'
                    '{"role": "user", "speaker": "Alice", "text": "Hi"}\n', encoding="utf-8")
    (session,) = load_transcript(path)
    assert [(t.role, t.text) for t in session.turns] == [("system", "Alice joined the chat"), ("user", "Hi")]


@pytest.mark.parametrize("line, words", [
    ('{"role": "user", "content": 42}', "'content' must be a string or a list"),
    ('{"role": "user"}', "missing 'text' (or OpenAI-style 'content')"),
    ('{"role": "narrator", "content": "x"}', "unknown role 'narrator'"),
])
def test_openai_style_bad_lines_name_the_line(tmp_path, line, words):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError) as caught:
        load_transcript(path)
    assert caught.value.line == 2 and words in caught.value.reason


def test_a_parse_error_shows_the_parsers_whole_message(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "text": "fine"}\n{"role": "user", "text": "broken\n', encoding="utf-8")
    with pytest.raises(TranscriptError) as caught:
        load_transcript(path)
    assert str(caught.value).startswith(f"{path}:2: not JSON (Unterminated string starting at: column 26)")


# ---- through `vaultmem extract` ------------------------------------------------------------

def memory_notes(root: Path) -> dict[str, str]:
    """Every note vaultmem wrote except session notes: memories and entity hubs."""
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in (root / "Memory").rglob("*.md") if "Sessions" not in p.parts and "Inbox" not in p.parts}


def test_extract_agent_logs_into_sessions_and_memories_without_machinery(tmp_path, embedder, monkeypatch):
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", "--json", *map(str, SAMPLES)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sessions"] == 4 and report["failed"] == []
    sessions = sorted(p.name for p in (root / "Memory" / "Sessions").glob("*.md"))
    assert "2026-11-28 Fixing the flaky upload test.md" in sessions and len(sessions) == 4
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    assert not [name for name in sessions if uuid.search(name)]  # named for people, not by ids
    memories = memory_notes(root)
    bodies = "\n".join(memories.values())
    for said in ("pnpm", "Ines", "shellfish", "nurse", "Denver", "vegetarian", "pytest -x"):
        assert said in bodies, said
    assert not MARKER.search(bodies), MARKER.search(bodies)
    found = [claim for claim in HIDDEN_CLAIMS if claim in bodies]
    assert not found
    for text in (p.read_text(encoding="utf-8") for p in (root / "Memory" / "Sessions").glob("*.md")):
        assert not MARKER.search(text)  # no tool output, prompt or thinking in the episode either
        blocks = re.findall(r"\^(\S+)$", text, re.M)
        assert blocks and all(re.fullmatch(r"[A-Za-z0-9-]+", b) for b in blocks)
    heads = {p.name: read_head(p) for p in (root / "Memory" / "Sessions").glob("*.md")}
    assert heads["2026-11-28 Fixing the flaky upload test.md"]["project"] == "tidepool"
    assert {h.get("project") for h in heads.values()} == {"tidepool", "harbor", None}   # a chat has none


def test_a_batch_with_a_bad_file_imports_the_good_ones_and_fails(tmp_path, embedder, monkeypatch):
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "text": "I live in Porto."}\n{"role": "user", "text": "cut\n',
                   encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(OPENAI), str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:2: not JSON (Unterminated string starting at: column 26)" in result.stderr
    assert "1 of 2 file(s) failed" in result.stderr and "bad.jsonl" in result.stderr
    assert "run " in result.stdout and "1 session(s)" in result.stdout  # the good file's summary only
    assert "Porto" not in result.stdout and "Porto" not in "\n".join(memory_notes(root).values())
    assert "Denver" in "\n".join(memory_notes(root).values())

    again = CliRunner().invoke(cli, ["--vault", str(root), "extract", "--json", str(OPENAI), str(bad)])
    assert again.exit_code == 1
    report = json.loads(again.stdout)
    assert report["failed"] == [{"path": str(bad), "line": 2,
                                 "error": report["failed"][0]["error"]}]
    assert report["failed"][0]["error"].startswith("not JSON (Unterminated string starting at: column 26)")
    assert report["sessions"] == 1


def test_a_batch_where_every_file_fails_prints_no_run_summary(tmp_path, embedder, monkeypatch):
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(bad), str(tmp_path / "gone.jsonl")])
    assert result.exit_code == 1 and result.stdout == ""
    assert "Nothing was extracted" in result.stderr and "file not found" in result.stderr
    assert "bad.jsonl" in result.stderr
    as_json = CliRunner().invoke(cli, ["--vault", str(root), "extract", "--json", str(bad)])
    assert as_json.exit_code == 1
    report = json.loads(as_json.stdout)
    assert report["sessions"] == 0 and report["notes"] == [] and len(report["failed"]) == 1


def test_a_log_that_grew_extends_its_session_note(tmp_path, embedder, monkeypatch):
    """A resumed session's log is the old one plus new lines: extracted again (the hook
    fires at every session end), it updates the same session note."""
    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    log = tmp_path / CODEX.name
    shutil.copy(CODEX, log)
    first = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(log)])
    assert first.exit_code == 0, first.output
    with log.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"timestamp": "2026-11-30T08:00:00.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "I started learning the cello this week."}]}}) + "\n")
    again = CliRunner().invoke(cli, ["--vault", str(root), "extract", str(log)])
    assert again.exit_code == 0, again.output
    (note,) = (root / "Memory" / "Sessions").glob("*.md")
    text = note.read_text(encoding="utf-8")
    assert "pytest -x" in text and "cello" in text and "^m-5" in text
    assert "cello" in "\n".join(memory_notes(root).values())


# ---- hook session-end -----------------------------------------------------------------------

def test_hook_session_end_queues_the_transcript_and_the_inbox_extracts_it(tmp_path, embedder, monkeypatch):
    from vaultmem.daemon.inbox import Inbox

    use_model(monkeypatch, embedder)
    root = tmp_path / "vault"
    api.init(root)
    hook_input = {"session_id": "7f3c2a1e-5b4d-4c8e-9a6f-1d2e3f4a5b6c", "transcript_path": str(CLAUDE_CODE),
                  "cwd": "/home/ana/code/tidepool", "hook_event_name": "SessionEnd", "reason": "exit"}
    result = CliRunner().invoke(cli, ["--vault", str(root), "hook", "session-end"], input=json.dumps(hook_input))
    assert result.exit_code == 0, result.output
    queued = root / "Memory" / "Inbox" / CLAUDE_CODE.name
    assert queued.read_bytes() == CLAUDE_CODE.read_bytes()

    memory = api.Memory(root, embedder=embedder)
    inbox = Inbox(memory.vault, memory.extract, settle=0)
    inbox.scan()
    (outcome,) = inbox.process_due()
    assert outcome["ok"], outcome
    assert not queued.exists() and (root / "Memory" / "Inbox" / "processed" / CLAUDE_CODE.name).exists()
    assert "pnpm" in "\n".join(memory_notes(root).values())


@pytest.mark.parametrize("stdin, words", [
    ("not json", "stdin is not the hook's JSON"),
    ('{"session_id": "x"}', "no 'transcript_path'"),
    ('{"transcript_path": "/nowhere/at/all.jsonl"}', "cannot be read"),
    ('{"transcript_path": "/etc/hostname"}', "not a transcript file name"),
])
def test_hook_session_end_bad_input_says_what_to_do(tmp_path, stdin, words):
    root = tmp_path / "vault"
    api.init(root)
    result = CliRunner().invoke(cli, ["--vault", str(root), "hook", "session-end"], input=stdin)
    assert result.exit_code == 1 and words in result.stderr
    assert not any((root / "Memory" / "Inbox").iterdir())


def test_the_inbox_drops_an_old_error_report_before_the_transcript_shows_as_processed(tmp_path, monkeypatch):
    """processed/ is the sign a transcript is done: an agent (or the daemon test) that sees it
    there must not still find the report of the failure before (CI once caught the gap)."""
    from vaultmem.daemon import inbox as inbox_module
    from vaultmem.store.vault import Vault

    root = tmp_path / "vault"
    api.init(root)
    vault = Vault(root)
    transcript = vault.inbox_dir / "chat.jsonl"
    transcript.write_text(json.dumps({"session": "s", "id": "m-1", "role": "user", "text": "hi"}) + "\n")
    report = vault.inbox_dir / "chat.jsonl.error.txt"
    answers = iter([RuntimeError("the importer refused line 1"), {"run": "r-1", "created": []}])

    def run_extract(paths):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    seen_at_move = []
    keep = inbox_module._keep_redacted

    def watching(path, target):
        seen_at_move.append(report.exists())
        keep(path, target)

    monkeypatch.setattr(inbox_module, "_keep_redacted", watching)
    inbox = inbox_module.Inbox(vault, run_extract, settle=0)
    inbox.scan()
    (failed,) = inbox.process_due()
    assert not failed["ok"] and "line 1" in report.read_text()
    inbox.observe("Memory/Inbox/chat.jsonl")
    (done,) = inbox.process_due()
    assert done["ok"] and (vault.inbox_dir / "processed" / "chat.jsonl").is_file()
    assert seen_at_move == [False] and not report.exists()
