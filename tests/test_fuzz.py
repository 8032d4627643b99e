"""Hostile input, fuzzed with hypothesis (issue 10): frontmatter, Markdown bodies, file names
and transcripts of every format, agents' own logs included. Each target runs >= 1,000
generated cases with a fixed seed (`derandomize`) in `make test-all`, the first 200 of them in
`make test` (tests/helpers/sweep.py); `VAULTMEM_FUZZ_EXAMPLES=N` sets it. The outcome is always a value or the module's own error naming the file, never another exception
and never a hang.

The real daemon's handling of bad notes (broken YAML, Latin-1, binary, huge) is covered in
tests/test_daemon.py::test_bad_files_are_logged_once_and_skipped; the daemon case here adds
the hostile shapes that test does not (alias bombs, deep nesting, 10k links, odd names).
"""

import hashlib
import json
import signal
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers import wait as helpers_wait
from tests.helpers.sweep import sweep_size
from vaultmem.errors import NoteParseError, TranscriptError, UnsafeName
from vaultmem.extract.importers import load_transcript
from vaultmem.extract.sessions import render_session
from vaultmem.index.chunking import IndexedNote, chunk_note, read_for_index
from vaultmem.store.init import init_vault
from vaultmem.store.note import parse_note, parse_note_bytes, render_note
from vaultmem.store.session_note import parse_session_turns
from vaultmem.store.titles import MAX_TITLE, check_title, safe_title
from vaultmem.store.vault import Vault

pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")
EXAMPLES = sweep_size("VAULTMEM_FUZZ_EXAMPLES", sampled=200, full=1000)
SYNC_EXAMPLES = max(50, EXAMPLES // 20)
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
HANG_SECONDS = 30  # far beyond any honest parse; only a hang or a blow-up gets here
COUNTS: dict[str, int] = {}


class Hang(Exception):
    pass


@contextmanager
def no_hang():
    def alarm(signum, frame):
        raise Hang(f"no answer within {HANG_SECONDS} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_counted(target: str, fuzzed) -> None:
    """Run a @given function and check that it really saw EXAMPLES cases."""
    COUNTS[target] = 0
    fuzzed()
    print(f"fuzz {target}: {COUNTS[target]} cases")
    assert COUNTS[target] >= EXAMPLES


def count(target: str) -> None:
    COUNTS[target] = COUNTS.get(target, 0) + 1


# --- frontmatter -----------------------------------------------------------------------------

def bomb(levels: int) -> str:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, levels)]
    return "\n".join(lines) + f"\ntags: *l{levels - 1}"


KEYS = st.sampled_from(["id", "type", "created", "updated", "status", "user", "tags", "entities",
                        "sources", "importance", "valid_from", "message_ids", "date", "aliases",
                        "<<", "? id", "[a]", "{b: c}", "1", "null", "日期", "key\twith tab"])
ATOMS = st.sampled_from([
    "fact", "session", "2026-11-29T10:30:00", "2026-11-29 10:30:00", "2026-13-45", "0.8", "-1e999",
    ".nan", "~", "null", "yes", "!!binary aGVsbG8=", "!!python/object/apply:os.system ['true']",
    "!!str", "!custom x", "&a [1, 2]", "*a", "*undefined", "[[Coffee]]", '"[[Coffee]]"', "'it''s'",
    '"unterminated', "'unterminated", "|", ">-", "{a: [b, {c: d}]}", "[", "]", "{", "}", ": :",
    "- - -", "\t", "%YAML 1.1", "---", "...", "#comment", "\\x00", "\u202e\u200b", "🙂" * 3, "密码"])
HUGE = st.builds(lambda piece, n: piece * n, st.sampled_from(["x", "字", "[", "{a: ", "- ", "\t", "'"]),
                 st.integers(0, 400_000))
VALUES = st.one_of(ATOMS, st.text(max_size=30), HUGE)
LINES = st.one_of(
    st.builds("{}: {}".format, KEYS, VALUES),
    st.builds("  - {}".format, VALUES),
    st.builds("\t{}: {}".format, KEYS, VALUES),
    st.builds(lambda n, m: "deep: " + "[" * n + "]" * m, st.integers(0, 20_000), st.integers(0, 20_000)),
    st.builds(lambda n: "a:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(n)),
              st.integers(0, 400)),
    st.builds(bomb, st.integers(1, 10)),
    st.text(max_size=60),
    ATOMS,
)
FRONTMATTER = st.lists(LINES, max_size=12).map("\n".join)


def check_note_bytes(data: bytes, path: Path):
    """parse_note_bytes and the indexer's fast reader agree on good/bad and never crash."""
    outcomes = []
    for read in (parse_note_bytes, read_for_index):
        try:
            with no_hang():
                outcomes.append(read(data, path))
        except NoteParseError as exc:
            assert exc.path == str(path) and exc.reason, exc
            outcomes.append(None)
    full, fast = outcomes
    if full is not None:
        with no_hang():
            chunk_note(full, "Memory/Facts/x.md")
            rendered = render_note(full)  # a rewrite reads back as itself
            assert render_note(parse_note(rendered)) == rendered
    if fast is not None:
        with no_hang():
            for chunk in chunk_note(fast, "Memory/Facts/x.md"):
                assert isinstance(chunk.text, str) and isinstance(chunk.search_text, str)
    return outcomes


@pytest.mark.sweep
def test_frontmatter_is_a_note_or_a_clear_error(tmp_path):
    path = tmp_path / "Hostile.md"

    @FUZZ
    @given(FRONTMATTER, st.text(max_size=80), st.booleans(), st.booleans())
    @example(bomb(9), "body", False, False)
    @example("deep: " + "[" * 10_000 + "]" * 10_000, "", False, False)
    @example("id: a\nid: b", "dup", False, False)
    @example("a: " + "x" * 2_000_000, "huge", False, False)
    def fuzzed(yaml_text, body, crlf, bom):
        count("frontmatter")
        text = f"---\n{yaml_text}\n---\n{body}"
        text = text.replace("\n", "\r\n") if crlf else text
        check_note_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8", "surrogatepass"),
                         path)

    run_counted("frontmatter", fuzzed)


@pytest.mark.sweep
def test_raw_bytes_are_a_note_or_a_clear_error(tmp_path):
    path = tmp_path / "Bytes.md"

    @FUZZ
    @given(st.binary(max_size=400), st.sampled_from([b"", b"---\n", b"---\nid: x\n---\n", b"\xef\xbb\xbf---\n"]))
    def fuzzed(data, head):
        count("note bytes")
        check_note_bytes(head + data, path)

    run_counted("note bytes", fuzzed)


# --- Markdown bodies -------------------------------------------------------------------------

BODY_PIECES = st.sampled_from([
    "```", "~~~", "```python\n", "[[", "]]", "[[Coffee]]", "[[a|b]]", "[[x#^m-1|y]]", "[[#]]", "[[|]]",
    "# ", "#tag", "^m-1", " ^m-2", "**Alice** · 2026-11-29 10:29", "**", "\\", "\\*", "<!--", "-->",
    "\n", "\n\n", "\n \t\n", "> ", "- ", "1. ", "---", "| a |", "<div>", "%%", "$$", "。", "！", "🙂",
    "\u200b", "\r\n", "   ", "word", "The user likes tea.", "用户喜欢喝茶。"])
BODIES = st.lists(st.one_of(BODY_PIECES, st.text(max_size=20)), max_size=60).map("".join)
TEN_K_LINKS = " ".join(f"[[Note {n}|n{n}]]" for n in range(10_000)) + " [[unclosed"


@pytest.mark.sweep
def test_markdown_bodies_chunk_and_parse_without_crashing():
    @FUZZ
    @given(BODIES, st.lists(st.text(max_size=12), max_size=5))
    @example(TEN_K_LINKS, ["m-1"])
    @example("```\n**A**\nnever closed ^m-1\n\n[[" * 200, [])
    def fuzzed(body, message_ids):
        count("markdown body")
        with no_hang():
            turns = parse_session_turns(body)
            for turn in turns:
                assert all(isinstance(part, str) for part in turn)
            session = chunk_note(IndexedNote({"type": "session", "message_ids": message_ids}, body),
                                 "Memory/Sessions/2026-11-29 s.md")
            memory = chunk_note(IndexedNote({"type": "fact", "id": "X"}, body), "Memory/Facts/F.md")
        for chunk in session:
            assert chunk.text and chunk.source_messages
            assert all(isinstance(m, str) for m in chunk.source_messages)
        assert memory and all(c.text.strip() for c in memory)

    run_counted("markdown body", fuzzed)


# --- file names ------------------------------------------------------------------------------

WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                    *(f"{p}{n}" for p in ("COM", "LPT") for n in "123456789")}
NAME_PIECES = st.sampled_from(["..", ".", "/", "\\", "CON", "nul", "LPT1", "com9", "#", "|", "^", ":",
                               "%%", "[[", "]]", " ", "\t", "\x00", "\x1f", "<", ">", "?", "*", '"',
                               "e\u0301", "CONIN$", "🙂", "𝔘", "字", "\u202e", "~", "$", " .", "a" * 90])
NAMES = st.one_of(st.text(max_size=300), st.lists(NAME_PIECES, max_size=30).map("".join),
                  st.builds(lambda c, n: c * n, st.sampled_from(["🙂", "𝔘", "字", "a", "."]),
                            st.integers(0, 400)))


@pytest.mark.sweep
def test_file_names_stay_in_the_vault_and_valid_everywhere(tmp_path):
    vault = Vault(Path(init_vault(tmp_path / "vault")["vault"]))
    folder = vault.folder_for("fact")

    @FUZZ
    @given(NAMES)
    @example("../../etc/passwd")
    @example("CON")
    @example("🙂" * 80)
    def fuzzed(name):
        count("file names")
        title = safe_title(name)
        assert title and len(title) <= MAX_TITLE and title == safe_title(title)
        assert not title.startswith((".", " ")) and not title.endswith((".", " "))
        assert not set(title) & set('#|^:[]/\\<>"?*') and "%%" not in title
        assert not any(ord(c) < 32 for c in title)
        assert title.split(".")[0].rstrip(" ").upper() not in WINDOWS_RESERVED
        try:
            assert check_title(name) == name == title
        except UnsafeName:
            assert name != title
        path = vault.unique_path(folder, name)
        assert path.parent == folder and len(path.name.encode("utf-8")) <= 255
        # Valid on this file system: the name can really be created and removed.
        path.touch(exist_ok=False)
        path.unlink()
        try:
            resolved = vault.abs(name)
        except UnsafeName:
            return
        assert resolved == vault.root or vault.root in resolved.parents

    run_counted("file names", fuzzed)


# --- transcripts -----------------------------------------------------------------------------

JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                      st.sampled_from(["user", "assistant", "human", "system", "2026-11-29T10:29:41",
                                       "2026-11-29T10:29:41+99:00", "9" * 5000, "\ud800", "m-1", ""]))
JSON_ANY = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
FIELDS = ("session", "id", "time", "speaker", "role", "text", "mapping", "current_node", "parent",
          "children", "message", "author", "content", "parts", "content_type", "metadata",
          "create_time", "chat_messages", "sender", "uuid", "created_at", "type", "recipient")


def field_dict(children):
    return st.dictionaries(st.sampled_from(FIELDS), st.one_of(JSON_ANY, children), max_size=6)


SHAPED = st.recursive(JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4), field_dict(inner)),
                      max_leaves=20)


def jsonl_text():
    good = st.fixed_dictionaries({"id": st.text(max_size=6), "role": st.sampled_from(["user", "assistant"]),
                                  "text": st.text(max_size=40)}).map(json.dumps)
    line = st.one_of(good, SHAPED.map(lambda v: json.dumps(v, allow_nan=True)), st.text(max_size=40),
                     st.just("[" * 100_000), st.just('{"text": 1' + "0" * 5000 + "}"))
    return st.lists(line, min_size=1, max_size=8).map("\n".join)


def maybe(good):
    """Mostly the right shape, sometimes any JSON value in its place."""
    return st.one_of(good, good, good, JSON_ANY)


NODE_IDS = st.sampled_from(["root", "a", "b", "c"])
CHATGPT_MESSAGE = st.fixed_dictionaries({
    "id": maybe(NODE_IDS), "create_time": maybe(st.floats(0, 2e9)),
    "author": maybe(st.fixed_dictionaries({"role": maybe(st.sampled_from(["user", "assistant", "tool"])),
                                           "name": maybe(st.text(max_size=8))})),
    "content": maybe(st.fixed_dictionaries({"content_type": maybe(st.sampled_from(["text", "code"])),
                                            "parts": maybe(st.lists(maybe(st.text(max_size=30)), max_size=3))})),
    "metadata": maybe(st.fixed_dictionaries({})), "recipient": maybe(st.sampled_from(["all", "python"]))})
CHATGPT_NODE = st.fixed_dictionaries({"id": maybe(NODE_IDS), "parent": maybe(NODE_IDS),
                                      "children": maybe(st.lists(maybe(NODE_IDS), max_size=3)),
                                      "message": maybe(CHATGPT_MESSAGE)})
CHATGPT = st.fixed_dictionaries({"mapping": maybe(st.dictionaries(NODE_IDS, maybe(CHATGPT_NODE), max_size=4)),
                                 "current_node": maybe(NODE_IDS), "title": maybe(st.text(max_size=20)),
                                 "create_time": maybe(st.floats(0, 2e9)), "id": maybe(st.text(max_size=8))})
CLAUDE_MESSAGE = st.fixed_dictionaries({
    "uuid": maybe(st.text(max_size=8)), "sender": maybe(st.sampled_from(["human", "assistant", "bot"])),
    "text": maybe(st.text(max_size=30)), "created_at": maybe(st.sampled_from(["2026-11-29T10:00:00Z", "x"])),
    "content": maybe(st.lists(maybe(st.fixed_dictionaries({"type": maybe(st.just("text")),
                                                          "text": maybe(st.text(max_size=30))})), max_size=3))})
CLAUDE = st.fixed_dictionaries({"uuid": maybe(st.text(max_size=8)), "name": maybe(st.text(max_size=20)),
                                "created_at": maybe(st.just("2026-11-29T10:00:00")),
                                "chat_messages": maybe(st.lists(maybe(CLAUDE_MESSAGE), max_size=4))})


def export_text(kind):
    conversation = CHATGPT if kind == "chatgpt" else CLAUDE
    top = st.one_of(st.lists(maybe(conversation), min_size=1, max_size=3), conversation,
                    field_dict(SHAPED))
    return st.one_of(top, top, top, top, top, top, top, top, top).map(lambda v: json.dumps(v, allow_nan=True)) \
        | st.text(max_size=60) | st.just("[" * 100_000)


MARKDOWN_PIECES = st.sampled_from(["**Alice:** hi", "**Bob** (10:30): yes", "Alice: hello", "Bob: ok",
                                   "[2026-11-29 10:29] Alice: x", "# 2026-99-99 99:99", "---", "date: x",
                                   "```", "User：你好", "助手：好", "\n", "- **A:**", "Note: y", "http://x"])
MARKDOWN = st.lists(st.one_of(MARKDOWN_PIECES, st.text(max_size=30)), min_size=1, max_size=20).map("\n".join)
TIMES = st.sampled_from(["2026-11-28T09:15:20.000Z", "2026-11-29T10:29:41", "x", "", "9" * 30])
TEXT_BLOCK = st.fixed_dictionaries({"type": maybe(st.sampled_from(["text", "input_text", "output_text", "tool_use",
                                                                  "tool_result", "thinking", "input_image"])),
                                    "text": maybe(st.sampled_from(["<command-name>/x</command-name>",
                                                                   "<environment_context>x",
                                                                   "<system-reminder>x", "hi"]) | st.text(max_size=30))})
CLAUDE_CODE_LINE = st.fixed_dictionaries({
    "type": maybe(st.sampled_from(["user", "assistant", "summary", "system", "progress"])),
    "sessionId": maybe(st.text(max_size=8)), "uuid": maybe(st.text(max_size=8)), "timestamp": maybe(TIMES),
    "isSidechain": maybe(st.booleans()), "isMeta": maybe(st.booleans()), "summary": maybe(st.text(max_size=20)),
    "message": maybe(st.fixed_dictionaries({
        "id": maybe(st.sampled_from(["msg_1", "msg_2"])), "role": maybe(st.sampled_from(["user", "assistant"])),
        "model": maybe(st.sampled_from(["claude-opus-4-6", "<synthetic>"])),
        "content": maybe(st.text(max_size=30) | st.lists(maybe(TEXT_BLOCK), max_size=3))}))})
CODEX_LINE = st.fixed_dictionaries({
    "timestamp": maybe(TIMES),
    "type": maybe(st.sampled_from(["session_meta", "response_item", "event_msg", "turn_context", "compacted",
                                   "message"])),
    "payload": maybe(st.fixed_dictionaries({
        "type": maybe(st.sampled_from(["message", "reasoning", "function_call", "thread_name_updated"])),
        "role": maybe(st.sampled_from(["user", "assistant", "developer"])), "id": maybe(st.text(max_size=8)),
        "timestamp": maybe(TIMES), "thread_name": maybe(st.text(max_size=20)),
        "content": maybe(st.lists(maybe(TEXT_BLOCK), max_size=3))}))})
GOOD_TIMES = st.sampled_from(["2026-11-28T09:15:20.000Z", "2026-11-29T10:29:41", None])
CLAUDE_CODE_TURN = st.fixed_dictionaries({  # a line that should become a turn
    "type": st.sampled_from(["user", "assistant"]), "sessionId": st.text(max_size=8),
    "uuid": st.text(max_size=8), "timestamp": GOOD_TIMES,
    "message": st.fixed_dictionaries({"id": st.sampled_from(["msg_1", "msg_2"]),
                                      "content": st.text(max_size=30) | st.lists(TEXT_BLOCK, max_size=3)})})
CODEX_TURN = st.fixed_dictionaries({
    "timestamp": GOOD_TIMES, "type": st.just("response_item"),
    "payload": st.fixed_dictionaries({"type": st.just("message"), "role": st.sampled_from(["user", "assistant"]),
                                      "content": st.lists(TEXT_BLOCK | st.fixed_dictionaries({
                                          "type": st.sampled_from(["input_text", "output_text"]),
                                          "text": st.text(min_size=1, max_size=30)}), min_size=1, max_size=3)})})
CODEX_HEADER = st.fixed_dictionaries({"id": maybe(st.text(max_size=8)), "timestamp": maybe(TIMES),
                                      "instructions": maybe(st.text(max_size=10))})


def agent_log(line, first=None):
    """An agent's JSON-lines log: shaped lines and junk, after an optional first line."""
    shaped = line.map(lambda v: json.dumps(v, allow_nan=True))
    lines = st.lists(st.one_of(shaped, shaped, shaped, st.text(max_size=20)), min_size=1, max_size=8)
    if first is None:
        return lines.map("\n".join)
    return st.tuples(st.lists(first.map(json.dumps), max_size=1), lines).map(lambda t: "\n".join(t[0] + t[1]))


AGENT_LOGS = st.one_of(
    st.tuples(st.just("claude-code"), st.just(".jsonl"), agent_log(CLAUDE_CODE_LINE | CLAUDE_CODE_TURN)),
    st.tuples(st.just("codex"), st.just(".jsonl"), agent_log(CODEX_LINE | CODEX_TURN, CODEX_HEADER)),
)
TRANSCRIPTS = st.one_of(
    st.tuples(st.just("jsonl"), st.just(".jsonl"), jsonl_text()),
    st.tuples(st.just("chatgpt"), st.just(".json"), export_text("chatgpt")),
    st.tuples(st.just("claude"), st.just(".json"), export_text("claude")),
    st.tuples(st.just("markdown"), st.just(".md"), MARKDOWN),
)


def fuzz_importers(tmp_path, cases, name: str) -> None:
    """`cases` through the importers (sniffed or named, junk prepended): sessions or a clear error."""
    @FUZZ
    @given(cases, st.booleans(), st.sampled_from([b"", b"", b"\xff\xfe", b"\x00", b"\n{"]))
    def fuzzed(case, sniff, junk):
        count(name)
        sessions_or_error(tmp_path, case, sniff, junk)

    run_counted(name, fuzzed)


@pytest.mark.sweep
def test_every_importer_returns_sessions_or_a_transcript_error(tmp_path):
    fuzz_importers(tmp_path, TRANSCRIPTS, "transcripts")


@pytest.mark.sweep
def test_agent_logs_return_sessions_or_a_transcript_error(tmp_path):
    fuzz_importers(tmp_path, AGENT_LOGS, "agent logs")


def sessions_or_error(tmp_path, case, sniff, junk):
    """Import one generated transcript: sessions whose notes read back, or a TranscriptError
    naming the file."""
    fmt, suffix, text = case
    path = tmp_path / f"t{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogatepass") + junk)
    try:
        with no_hang():
            sessions = load_transcript(path, None if sniff else fmt)
    except TranscriptError as exc:
        assert exc.path == str(path) and exc.reason and "t" + suffix in str(exc)
        return
    for session in sessions:
        assert session.turns and all(t.text and isinstance(t.text, str) for t in session.turns)
        # The next step of a run, short of writing: the session note must read back.
        with no_hang():
            rendered = render_session(session)
            note = parse_note(rendered.text)
            rendered.text.encode("utf-8")
        assert note.meta["message_ids"] == [str(t.id) for t in session.turns]
        assert len(parse_session_turns(note.body)) == len(session.turns)


# --- the real indexer over a vault holding a hostile note ------------------------------------

def tree_hashes(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and not p.relative_to(root).parts[0] == ".vaultmem"}


@pytest.mark.sweep
def test_indexer_sync_changes_only_its_own_state(tmp_path, indexer_for):
    from vaultmem.index.ingest import Indexer  # noqa: F401  (indexer_for builds the real one)

    vault = Vault(Path(init_vault(tmp_path / "vault")["vault"]))
    indexer = indexer_for(vault)
    (vault.root / "Outside.md").write_text("---\nid: mine\n---\nthe user's own note\n")
    seen = {"indexed": 0, "refused": 0}

    @settings(FUZZ, max_examples=SYNC_EXAMPLES)
    @given(FRONTMATTER, BODIES, NAMES)
    def fuzzed(yaml_text, body, name):
        count("indexer sync")
        note = vault.unique_path(vault.folder_for("fact"), name)
        note.write_bytes(f"---\n{yaml_text}\n---\n{body}".encode("utf-8", "surrogatepass"))
        before = tree_hashes(vault.root)
        with no_hang():
            report = indexer.sync()
        assert tree_hashes(vault.root) == before
        rel = vault.rel(note)
        refused = [reason for path, reason in report.errors if path == rel]
        seen["refused" if refused else "indexed"] += 1
        note.unlink()

    COUNTS["indexer sync"] = 0
    fuzzed()
    print(f"fuzz indexer sync: {COUNTS['indexer sync']} cases {seen}")
    assert COUNTS["indexer sync"] >= SYNC_EXAMPLES and seen["refused"] and seen["indexed"]


# --- the real daemon, fed hostile files ------------------------------------------------------

def daemon_cli(root, *args):
    import subprocess
    import sys

    vaultmem = str(Path(sys.executable).parent / "vaultmem")
    done = subprocess.run([vaultmem, "--vault", str(root), *args], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


# The shared poller, with this file's default of 90 s.
wait_for = partial(helpers_wait.wait_for, deadline=90.0)


def fact(note_id, body):
    return (f"---\nid: {note_id}\ntype: fact\ncreated: 2026-11-01T09:00:00\nupdated: 2026-11-01T09:00:00\n"
            f"status: active\nuser: default\n---\n{body}\n")


def test_daemon_stays_up_and_answers_after_hostile_files(tmp_path):
    from vaultmem.daemon.control import stop_daemon
    from vaultmem.ipc import client

    root = tmp_path / "vault"
    daemon_cli(root, "init", str(root))
    facts, inbox = root / "Memory" / "Facts", root / "Memory" / "Inbox"
    skipped = {
        "Alias bomb.md": f"---\n{bomb(9)}\n---\nbody\n",
        "Deep nesting.md": "---\ndeep: " + "[" * 10_000 + "]" * 10_000 + "\n---\nbody\n",
        "Tabs.md": "---\n\tid: x\n\ttype: fact\n---\nbody\n",
        "Unclosed.md": "---\nid: x\n" + "[[" * 1000,
    }
    indexed = {
        "Ten thousand links.md": fact("01JLINKS0000000000000000AA", "The user keeps a reading list. " + TEN_K_LINKS),
        "🙂" * 60 + ".md": fact("01JEMOJI0000000000000000AA", "The user sends smiley faces to the family chat."),
        "CON.md": fact("01JCONSOLE00000000000000AA", "The user owns a vintage games console."),
        "Fence.md": fact("01JFENCE0000000000000000AA", "The user writes Go.\n```go\nfunc main() {"),
    }
    daemon_cli(root, "daemon", "start", "--json")
    try:
        wait_for(lambda: client.request(root, "status")["state"] == "watching", "daemon watching", deadline=120)
        for name, text in {**skipped, **indexed}.items():
            (facts / name).write_text(text, encoding="utf-8")
        (inbox / "nested.json").write_text("[" * 100_000)
        (inbox / "wrong types.json").write_text(json.dumps([{"mapping": {"a": {"message": "x", "parent": []}},
                                                             "current_node": ["a"]}]))

        def searchable(path, query):
            return lambda: any(h["path"] == path for h in client.request(root, "search", {"query": query})["hits"])
        wait_for(searchable("Memory/Facts/CON.md", "vintage games console"), "CON.md indexed")
        wait_for(searchable("Memory/Facts/Ten thousand links.md", "reading list"), "10k links indexed")
        wait_for(searchable(f"Memory/Facts/{'🙂' * 60}.md", "smiley faces"), "emoji name indexed")
        wait_for(searchable("Memory/Facts/Fence.md", "programming language Go"), "unclosed fence indexed")
        log = root / ".vaultmem" / "daemon.log"
        for name in skipped:
            wait_for(lambda: f"skipped Memory/Facts/{name}:" in log.read_text(encoding="utf-8"), f"{name} skipped")
        for name in ("nested.json", "wrong types.json"):
            report = wait_for(lambda: (inbox / f"{name}.error.txt").is_file(), f"{name} refused")
            assert report and name in (inbox / f"{name}.error.txt").read_text(encoding="utf-8")
        status = client.request(root, "status")
        assert status["running"] and status["state"] == "watching"
        for name, text in skipped.items():  # never rewritten by vaultmem
            assert (facts / name).read_text(encoding="utf-8") == text
    finally:
        stop_daemon(root, timeout=30)
