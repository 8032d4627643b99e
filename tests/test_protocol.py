"""The daemon protocol (vaultmem/ipc/protocol.py) against everything that uses it: the
runner and `Memory` handle each operation of the table as the table says, the client's
timeouts follow its flags, bad requests are refused with a stable code before anything
runs, every public error crosses the real socket as itself, and `reindex --full` sent to a
running daemon is rebuilt by the daemon, which keeps answering."""

import inspect
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.cli_probe import cli_imports
from tests.helpers.wait import wait_for
from vaultmem import errors
from vaultmem.api import Memory
from vaultmem.daemon.server import SocketServer, handle_message
from vaultmem.errors import BadRequest, DaemonError, NoteParseError, NotServed, TranscriptError, UnknownOperation
from vaultmem.ipc import client, protocol
from vaultmem.ipc.protocol import OPS, REQUIRED

PACKAGE = Path(__file__).resolve().parent.parent / "vaultmem"
VAULTMEM = str(Path(sys.executable).parent / "vaultmem")


def note_text(note_id, body):
    return (f"---\nid: {note_id}\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
            f"updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n{body}\n")


@pytest.fixture
def daemon(tmp_path, git_identity, monkeypatch):
    """A real `Daemon` for a fresh vault, its server listening, its worker not started."""
    from vaultmem.api import init
    from vaultmem.daemon.runner import Daemon

    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    root = tmp_path / "vault"
    init(root)
    (root / "Memory" / "Facts" / "Tea.md").write_text(
        note_text("01JTEA0000000000000000000A", "The user drinks green tea every morning."))
    built = Daemon(root)
    built.server.start()
    yield built
    built.server.close()


def _defaults_match(table_default, code_default):
    if isinstance(code_default, tuple):
        code_default = list(code_default)
    if isinstance(table_default, tuple):
        table_default = list(table_default)
    return table_default == code_default


def _check_signature(name, fn):
    params = inspect.signature(fn).parameters
    for arg in OPS[name].args:
        assert arg.name in params, f"{name}: {fn} takes no {arg.name!r}"
        default = params[arg.name].default
        if arg.default is REQUIRED:
            assert default is inspect.Parameter.empty, f"{name}.{arg.name} has a default in code"
        else:
            assert _defaults_match(arg.default, default), (name, arg.name, arg.default, default)
    required = [p for p, v in params.items() if v.default is inspect.Parameter.empty
                and v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)]
    assert set(required) <= {a.name for a in OPS[name].args}, (name, required)


# --- the table against the code ----------------------------------------------------------------

def test_the_runner_handles_exactly_the_table(daemon):
    assert set(daemon.handlers) == set(OPS)
    for name, op in OPS.items():
        handler = daemon.handlers[name]
        if op.memory:
            assert handler.__self__ is daemon.memory and handler.__name__ == name
        _check_signature(name, handler)


def test_memory_has_each_memory_operation_with_the_tables_arguments(tmp_path):
    for name, op in OPS.items():
        if op.memory:
            _check_signature(name, getattr(Memory(tmp_path), name))


def test_flags_are_coherent_and_client_timeouts_follow_them():
    for name, op in OPS.items():
        assert not (op.read_only and op.index_writer), name
        expected = None if op.long else client.DEFAULT_TIMEOUT
        assert client._timeout_for(name, client._DEFAULT) == expected, name
        assert client._timeout_for(name, 5.0) == 5.0
        assert op.result, f"{name}: document its result"
    # Whatever is not read-only and runs in Memory writes the index: it must be the daemon's.
    assert {n for n, op in OPS.items() if op.memory and not op.read_only} == \
        {n for n, op in OPS.items() if op.index_writer}
    assert client._timeout_for("no-such-op", client._DEFAULT) == client.DEFAULT_TIMEOUT


def test_every_operation_the_cli_and_mcp_send_is_in_the_table():
    cli_ops = set()
    for path in (PACKAGE / "cli").glob("*.py"):
        cli_ops |= set(re.findall(r'(?:ask|via_daemon)\(ctx, "(\w+)"', path.read_text()))
    assert {"search", "context", "add", "extract", "correct", "forget", "rollback", "gc"} <= cli_ops
    assert cli_ops <= set(OPS)
    for name in cli_ops - {"status", "flush", "shutdown"}:  # ask() falls back to Memory.<op>
        assert callable(getattr(Memory, name)), name
    asked = set(re.findall(r'backend\.ask\("(\w+)"', (PACKAGE / "agents" / "mcp_server.py").read_text()))
    assert asked - set(OPS) <= {"history"}  # not served: the MCP server reads it in-process
    for name in asked:
        assert callable(getattr(Memory, name))


# --- bad requests --------------------------------------------------------------------------------

@pytest.mark.parametrize("request_, code, words", [
    ({"op": "list"}, "unknown_op", "unknown operation 'list'"),
    ({"op": "__init__", "args": {"vault": "/"}}, "unknown_op", "unknown operation"),
    ({"op": "search", "args": {"query": "tea", "k": "5"}}, "bad_request",
     "'k' must be an integer, not a string"),
    ({"op": "search", "args": {"query": "tea", "k": True}}, "bad_request", "'k' must be an integer"),
    ({"op": "search", "args": {"k": 5}}, "bad_request", "missing 'query'"),
    ({"op": "search", "args": {"query": "tea", "colour": "red"}}, "bad_request",
     "unknown argument 'colour'"),
    ({"op": "add", "args": {"text": "x", "tags": "tea"}}, "bad_request", "'tags' must be a list"),
    ({"op": "reindex", "args": {"full": "yes"}}, "bad_request", "'full' must be true or false"),
    ({"op": "flush", "args": {"timeout": None}}, "bad_request", "'timeout' must be a number"),
])
def test_bad_requests_are_refused_with_a_code_before_anything_runs(daemon, request_, code, words):
    before = sorted(p.name for p in (daemon.root / "Memory" / "Facts").iterdir())
    answer = handle_message(json.dumps(request_).encode(), daemon.dispatch)
    assert answer["ok"] is False and answer["code"] == code and words in answer["error"], answer
    assert set(answer) == {"ok", "error", "code"}
    assert sorted(p.name for p in (daemon.root / "Memory" / "Facts").iterdir()) == before
    assert not (daemon.root / ".vaultmem" / "index").exists()  # nothing ran: no index built


def test_numbers_accept_integers_and_options_accept_null():
    assert protocol.check("flush", {"timeout": 2}).name == "flush"
    assert protocol.check("add", {"text": "x", "importance": 1, "title": None}).index_writer
    assert protocol.check("status", {}).memory is False


def test_bad_requests_over_the_socket(daemon):
    root = daemon.root
    with pytest.raises(UnknownOperation, match="unknown operation 'list'"):
        client.request(root, "list")
    assert client.try_request(root, "list") is None  # not served: the caller works in-process
    with pytest.raises(BadRequest, match="'k' must be an integer"):
        client.try_request(root, "search", {"query": "tea", "k": "ten"})  # sent: never redone
    with client.connect(client.socket_path(root), timeout=5) as sock:
        sock.sendall(b'["search"]\n')
        answer = json.loads(client.LineReader(sock).read_line())
    assert answer == {"ok": False, "code": "bad_request",
                      "error": "bad request: a request is an object with a string 'op'"}
    assert client.request(root, "status")["running"]


# --- errors --------------------------------------------------------------------------------------

def _sample(cls):
    if cls is NoteParseError:
        return cls("Memory/Facts/Tea.md", "frontmatter is not valid YAML: line 2")
    if cls is TranscriptError:
        return cls("/tmp/chat.jsonl", 3, "not JSON: Expecting value")
    return cls(f"{cls.__name__} happened — here is how to fix it")


def test_error_codes_are_stable_unique_and_declared_by_each_class():
    public = errors.public_errors()
    assert len(public) >= 15
    codes = [cls.code for cls in public]
    assert len(codes) == len(set(codes))
    for cls in public:
        assert "code" in cls.__dict__ and re.fullmatch(r"[a-z]+(_[a-z]+)*", cls.code), cls
        assert errors.by_code(cls.code) is cls
    assert errors.NoteNotFound.code == "note_not_found" and errors.ConfigError.code == "config_error"
    assert errors.by_code("from_a_newer_daemon") is DaemonError


def test_each_public_error_round_trips_through_the_socket(tmp_path):
    raised = {}

    def dispatch(op, args):
        raise raised["error"]

    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    server = SocketServer(client.socket_path(root), dispatch)
    server.start()
    try:
        for cls in errors.public_errors():
            raised["error"] = original = _sample(cls)
            with pytest.raises(cls) as caught:
                client.request(root, "search", {"query": "tea"})
            assert type(caught.value) is cls and str(caught.value) == str(original)
            assert caught.value.code == cls.code
            if issubclass(cls, NotServed):
                assert client.try_request(root, "search", {"query": "tea"}) is None
            else:
                with pytest.raises(cls):
                    client.try_request(root, "search", {"query": "tea"})
        for cls in (NoteParseError, TranscriptError):
            raised["error"] = original = _sample(cls)
            with pytest.raises(cls) as caught:
                client.request(root, "search")
            assert vars(caught.value) == vars(original)
        # A class of its own elsewhere travels as its nearest public ancestor.
        from vaultmem.daemon.worker import GateBusy
        from vaultmem.memory.export import ExportError

        raised["error"] = GateBusy("the daemon is busy (indexing)")
        with pytest.raises(DaemonError, match=r"^the daemon is busy \(indexing\)$") as caught:
            client.request(root, "search")
        assert type(caught.value) is DaemonError
        raised["error"] = ExportError("found the end marker without the start")
        with pytest.raises(errors.VaultmemError) as caught:
            client.request(root, "search")
        assert type(caught.value) is errors.VaultmemError
    finally:
        server.close()


def test_transcript_error_without_a_line_round_trips():
    error = TranscriptError("/tmp/a: b.jsonl", None, "empty file")
    again = TranscriptError.from_wire(str(error))
    assert str(again) == str(error)


# --- results -------------------------------------------------------------------------------------

def test_each_operation_answers_with_its_documented_keys(daemon, tmp_path):
    """Every operation of the table, run through the runner's dispatch (the daemon's path)."""
    def run(name, **args):
        result = daemon.dispatch(name, args)
        missing = set(OPS[name].result) - set(result)
        assert not missing, f"{name} lacks {missing}: {result}"
        return result

    assert run("reindex")["added"] == 1
    added = run("add", text="The user is allergic to peanuts", type="fact")
    assert added["action"] == "created"
    assert run("search", query="what does the user drink?")["hits"][0]["path"] == \
        "Memory/Facts/Tea.md"
    assert "green tea" in run("context", question="What does the user drink?")["text"]
    assert run("context", startup=True, project="tidepool")["sections"]["instructions"] >= 0
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(json.dumps({"session": "s-1", "id": "m-1", "time": "2026-11-29T10:00:00",
                                      "speaker": "Alice", "role": "user",
                                      "text": "I moved to Lisbon last month."}) + "\n")
    extracted = run("extract", paths=[str(transcript)])
    assert extracted["sessions"] == 1
    run("correct", ref=added["path"], text="The user is allergic to tree nuts")
    run("gc", dry_run=True)
    run("rollback", run=extracted["run"])
    assert run("forget", ref="Memory/Facts/Tea.md")["status"] == "archived"
    assert run("reindex", full=True)["rebuilt"] == "--full"
    assert run("flush", timeout=0.1)["idle"] is False  # the worker never started
    assert run("status")["running"] is True
    assert run("shutdown")["stopping"] is True


def test_a_caller_on_another_clock_still_has_the_daemon_reindex(daemon):
    other = "2030-01-02T03:04:05"
    with pytest.raises(NotServed, match="another clock"):
        daemon.dispatch("search", {"query": "tea"}, clock=other)  # dated output: in-process
    assert daemon.dispatch("reindex", {}, clock=other)["added"] == 1  # the index's one writer
    assert [n for n, op in OPS.items() if op.memory and not op.clocked] == ["reindex"]


# --- reindex --full with the daemon running ------------------------------------------------------

def test_searches_during_a_full_rebuild_are_told_and_answered_in_process(daemon, monkeypatch):
    """While the daemon rebuilds, a search waits briefly, then is told why and falls back."""
    from vaultmem.daemon import handlers

    monkeypatch.setattr(handlers, "READ_WAIT_DURING_BUILD", 0.5)   # "briefly": 3 s, twice, otherwise
    root = daemon.root
    daemon.dispatch("reindex", {})
    real, entered, release = daemon.handlers["reindex"], threading.Event(), threading.Event()

    def paced(**args):  # the real rebuild, held until the test has asked its search
        entered.set()
        release.wait(60)
        return real(**args)

    daemon.handlers["reindex"] = paced
    rebuild = {}
    worker = threading.Thread(target=lambda: rebuild.update(
        client.request(root, "reindex", {"full": True})))
    worker.start()
    try:
        assert entered.wait(30)
        assert client.request(root, "status")["rebuilding"] == "reindex --full"
        with pytest.raises(NotServed, match=r"busy \(reindex --full\)"):
            client.request(root, "search", {"query": "tea"})
        assert client.try_request(root, "search", {"query": "tea"}) is None  # caller does it
    finally:
        release.set()
        worker.join(120)
    assert rebuild["rebuilt"] == "--full" and rebuild["added"] == 1
    assert client.request(root, "status")["rebuilding"] is None
    hits = client.request(root, "search", {"query": "what does the user drink?"})["hits"]
    assert hits[0]["path"] == "Memory/Facts/Tea.md"


def _cli(*args, vault, check=True):
    done = subprocess.run([VAULTMEM, "--vault", str(vault), *args], capture_output=True,
                          text=True, timeout=180)
    if check and done.returncode != 0:
        raise AssertionError(f"vaultmem {' '.join(args)} failed: {done.stderr}")
    return done


def test_reindex_full_with_a_running_daemon_goes_through_it(tmp_path, git_identity, monkeypatch):
    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    monkeypatch.delenv("VAULTMEM_NO_DAEMON", raising=False)
    root = tmp_path / "vault"
    _cli("init", str(root), vault=root)
    facts = root / "Memory" / "Facts"
    topics = ["green tea", "owls", "sourdough", "Lisbon", "chess", "cycling", "jazz", "Rust"]
    for n, topic in enumerate(topics * 5):
        (facts / f"Fact {n}.md").write_text(note_text(f"01JFACT{n:019d}",
                                                      f"The user likes {topic} (note {n})."))
    (facts / "Tea.md").write_text(note_text("01JTEA0000000000000000000A",
                                            "The user drinks green tea every morning."))
    started = json.loads(_cli("daemon", "start", "--json", vault=root).stdout)
    try:
        assert started["started"]
        wait_for(lambda: client.request(root, "status")["state"] == "watching", "watching")
        index = root / ".vaultmem" / "index"
        # The CLI in a process of its own that reports whether it loaded the model or the
        # index itself: it must not, the daemon does the rebuild.
        done, heavy = cli_imports(root, "reindex", "--full", "--json", timeout=300)
        report = json.loads(done.stdout)
        assert report["rebuilt"] == "--full" and report["errors"] == [], report
        assert report["added"] == len(topics) * 5 + 1
        assert heavy == [], done.stderr
        log = (root / ".vaultmem" / "daemon.log").read_text(encoding="utf-8")
        assert "rebuilding the index (reindex --full)" in log and "index rebuilt:" in log
        status = client.request(root, "status")
        assert status["running"] and status["pid"] == started["pid"]
        assert status["notes_indexed"] == len(topics) * 5 + 1 and status["rebuilding"] is None
        assert index.is_dir()
        # The daemon's own handles follow the rebuilt index: searches through it answer.
        hits = client.request(root, "search", {"query": "what does the user drink?"})["hits"]
        assert hits[0]["path"] == "Memory/Facts/Tea.md"
        owls = client.request(root, "search", {"query": "owls", "k": 5})["hits"]
        assert {h["path"] for h in owls} >= {f"Memory/Facts/Fact {n}.md" for n in (1, 9, 17)}
        # A plain reindex goes through it too, and finds nothing left to do.
        again = json.loads(_cli("reindex", "--json", vault=root).stdout)
        assert again["added"] == again["updated"] == again["removed"] == 0
        assert again["unchanged"] == len(topics) * 5 + 1
        # An edit after the rebuild still reaches search: the watcher writes the new index.
        (facts / "Tea.md").write_text(note_text("01JTEA0000000000000000000A",
                                                "The user drinks rooibos every evening."))
        wait_for(lambda: any(h["path"] == "Memory/Facts/Tea.md" and "rooibos" in h["text"]
                             for h in client.request(root, "search", {"query": "rooibos"})["hits"]),
                 "the edit searchable", deadline=60)
        assert client.request(root, "status")["pid"] == started["pid"]
    finally:
        _cli("daemon", "stop", vault=root, check=False)
