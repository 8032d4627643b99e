"""Namespaces (issue 8): in a vault shared by alice and bob, no read path of alice's returns
any of bob's memories, whatever the filters, `--all` or `--as-of` say.

One vault is built once through the real write paths (add, correct, forget, extract, a
time-bound note), with identical text in both namespaces, superseded, archived and expired
memories. Then every read path is asked for alice: the API's search (every filter
combination, threshold off so everything the filters allow comes back), the keyword
fallback, the CLI (search, context, show, list, history, diff, export, log), the daemon's
socket and the MCP server (one daemon and one MCP subprocess). Bob's notes are recognised
by id, by path and by words only bob's text holds."""

import itertools
import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.errors import NoteNotFound
from vaultmem.ipc import client
from vaultmem.memory.memories import write_memory
from vaultmem.retrieve.filters import Filters
from vaultmem.retrieve.search import keyword_search
from vaultmem.store.note import read_note

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
BUILT = "2026-11-01T09:00:00"
NOW = "2026-12-10T09:00:00"
SAME_TEXT = "The user prefers green tea over coffee."
BOB_WORDS = ("flowerpot", "locker", "Louvre", "passport", "Osaka", "Bob")
SHARED_TEXT = "The office wifi network is called Orchard."


@pytest.fixture(scope="module")
def vault(tmp_path_factory, embedder):
    """The two-user vault; VAULTMEM_NOW stays NOW for the module (subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAULTMEM_NOW", BUILT)
        mp.delenv("VAULTMEM_VAULT", raising=False)
        mp.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
        root = tmp_path_factory.mktemp("isolation") / "vault"
        api.init(root)
        mem = api.Memory(root, embedder=embedder)
        people = {
            "alice": {"key": "Alice keeps her bicycle in the garage at home.",
                      "code": "Alice's piano practice book is on the shelf in the study.",
                      "fixed": "Alice's piano practice book is in the piano bench.",
                      "archived": "Alice visited the Prado museum in Madrid.",
                      "trip": "Alice is in Kyoto for a workshop.",
                      "said": "**Alice:** I keep my umbrella in the hallway closet at home.\n"},
            "bob": {"key": "Bob keeps his spare house key under the blue flowerpot at home.",
                    "code": "Bob's gym locker code is written in the red notebook.",
                    "fixed": "Bob's gym locker code is written in the green notebook.",
                    "archived": "Bob visited the Louvre museum in Paris.",
                    "trip": "Bob is in Osaka for a conference.",
                    "said": "**Bob:** I keep my passport in the kitchen drawer at home.\n"},
        }
        for user in ("bob", "alice"):  # bob first: the plain titles of shared wording are his
            texts = people[user]
            assert mem.add(SAME_TEXT, type="preference", tags=["drinks"], user=user)["action"] == "created"
            assert mem.add(texts["key"], type="fact", tags=["home"], user=user)["action"] == "created"
            code = mem.add(texts["code"], type="fact", tags=["home"], user=user)
            assert mem.correct(code["id"], texts["fixed"], user=user)["action"] == "superseded"
            gone = mem.add(texts["archived"], type="event", user=user)
            mem.forget(gone["path"])
            write_memory(mem.vault, text=texts["trip"], type="event", user=user, importance=0.6,
                         valid_from=date(2026, 11, 28), valid_to=date(2026, 12, 4))
            transcript = root.parent / f"{user}.md"
            transcript.write_text(texts["said"], encoding="utf-8")
            assert mem.extract([transcript], user=user)["sessions"] == 1
        write_memory(mem.vault, text=SHARED_TEXT, type="fact", user="shared", importance=0.6)
        mem.reindex()
        mp.setenv("VAULTMEM_NOW", NOW)
        yield root


@pytest.fixture(scope="module")
def notes(vault):
    """Every note in the vault (any type and status), by user: {user: {id: vault path}}."""
    by_user = {}
    for path in (vault / "Memory").rglob("*.md"):
        note = read_note(path)
        by_user.setdefault(note.user, {})[note.id] = path.relative_to(vault).as_posix()
    return by_user


class RepeatedQueries:
    """The real model, remembering the vector of a query it has embedded (the filter sweep
    asks one question a few hundred times)."""

    def __init__(self, embedder):
        self._embedder, self._vectors = embedder, {}

    def encode_query(self, text):
        if text not in self._vectors:
            self._vectors[text] = self._embedder.encode_query(text)
        return self._vectors[text]

    def __getattr__(self, name):
        return getattr(self._embedder, name)


@pytest.fixture(scope="module")
def alice_mem(vault, embedder):
    mem = api.Memory(vault, embedder=RepeatedQueries(embedder))
    return mem


def assert_none_of_bobs(found, notes):
    """Nothing in `found` (any JSON-able answer) names a note, path or word of bob's. The
    question asked, echoed in an answer, is not part of it."""
    if isinstance(found, dict):
        found = {k: v for k, v in found.items() if k not in ("query", "question")}
    text = json.dumps(found, ensure_ascii=False, default=str)
    for note_id, rel in notes["bob"].items():
        assert note_id not in text, f"bob's note {rel} leaked"
        stem = Path(rel).stem  # as a title ("title": "...") or a link; "X 2" is not "X"
        assert rel not in text and f'"{stem}"' not in text and f"[[{stem}" not in text, \
            f"bob's path {rel} leaked"
    for word in BOB_WORDS:
        assert word not in text, f"bob's word {word!r} leaked"


def cli_run(vault, *args, ok=True):
    result = CliRunner().invoke(cli, ["--vault", str(vault), *map(str, args)])
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def test_the_vault_holds_both_users_in_every_state(notes, vault, alice_mem):
    for user in ("alice", "bob"):
        states = {(n["type"], n["status"]) for n in alice_mem.list(user=user)["notes"]}
        assert {("preference", "active"), ("fact", "superseded"), ("event", "archived")} <= states
        assert alice_mem.list(user=user, type="session")["notes"]
    texts = [n["text"] for n in alice_mem.list()["notes"]]
    assert texts.count(SAME_TEXT) == 2


def test_search_for_alice_under_every_filter_returns_none_of_bobs(vault, notes, alice_mem):
    searcher = alice_mem.searcher
    seen = set()
    combos = itertools.product([None, "fact", "preference", "event", "session", "entity"],
                               [None, "home", "drinks"], [False, True],
                               [None, "2026-11-15", "2026-12-02", NOW[:10]], [None, "2026-10-01"])
    for type_, tag, all_, as_of, since in combos:
        hits = searcher.search("where does the user keep things at home?", k=500, type=type_, tag=tag,
                               user="alice", since=since, as_of=as_of, all=all_, min_score=-1.0)
        found = [h.to_dict() for h in hits]
        assert_none_of_bobs(found, notes)
        seen.update(h["id"] for h in found)
        if tag is None and since is None:  # the fallback scans every file: fewer rounds
            fallback = keyword_search(alice_mem.vault, "keep home tea coffee notebook museum", 500,
                                      Filters(user="alice", type=type_, as_of=as_of, all=all_,
                                              today=NOW[:10]), -1.0)
            assert_none_of_bobs([h.to_dict() for h in fallback], notes)
    # Not vacuous: the sweep saw every note of alice's, current or not.
    assert set(notes["alice"]) <= seen
    # The public API: an explicit user, and a Memory opened for alice.
    scoped = api.Memory(vault, user="alice", embedder=alice_mem.embedder)
    for query in ["Where is the spare house key?", "gym locker code notebook", "Louvre museum Paris",
                  "Who is in Osaka?", "Where is the passport?", SAME_TEXT]:
        for flags in [{}, {"all": True}, {"as_of": "2026-12-01"}, {"all": True, "as_of": "2026-11-15"}]:
            assert_none_of_bobs(alice_mem.search(query, k=50, user="alice", **flags), notes)
            assert_none_of_bobs(scoped.search(query, k=50, **flags), notes)
        assert_none_of_bobs(alice_mem.context(query, user="alice"), notes)
        assert_none_of_bobs(scoped.context(query), notes)
    tea = alice_mem.search(SAME_TEXT, user="alice")["hits"]
    assert tea and tea[0]["id"] in notes["alice"] and tea[0]["text"] == SAME_TEXT


def test_cli_read_commands_for_alice_show_none_of_bobs(vault, notes, tmp_path):
    for query in ["Where is the spare house key under the flowerpot?", "What is in the kitchen drawer?"]:
        for flags in [[], ["--all"], ["--as-of", "2026-12-02"], ["--all", "--as-of", "2026-11-15"],
                      ["--type", "fact"], ["--type", "session", "--all"], ["--tag", "home", "--all"],
                      ["--since", "2026-10-01", "--all"]]:
            out = cli_run(vault, "search", query, "--user", "alice", "-k", 50, "--json", *flags)
            assert_none_of_bobs(json.loads(out), notes)
        assert_none_of_bobs(json.loads(cli_run(vault, "context", query, "--user", "alice", "--json")), notes)
    listing = cli_run(vault, "list", "--user", "alice", "--json")
    assert_none_of_bobs(json.loads(listing), notes)
    assert json.loads(listing)["notes"]
    assert_none_of_bobs(cli_run(vault, "list", "--user", "alice", "--type", "session"), notes)

    # Bob's notes by id, title, vault path and absolute path: "not found" for alice.
    for note_id, rel in notes["bob"].items():
        for ref in (note_id, Path(rel).stem, rel, str(vault / rel)):
            for command in (["show", ref], ["history", ref], ["diff", ref]):
                out = cli_run(vault, *command, "--user", "alice", ok=False)
                assert "no note matches" in out, (command, out)
                assert_none_of_bobs(out.replace(ref, ""), notes)
    # ... even where the note now lives elsewhere: its path before it was archived.
    archived = next(rel for rel in notes["bob"].values() if rel.startswith("Memory/Archive/"))
    before = f"Memory/Events/{Path(archived).name}"
    assert not (vault / before).exists()
    assert "no note matches" in cli_run(vault, "history", before, "--user", "alice", ok=False)
    assert json.loads(cli_run(vault, "history", before, "--user", "bob", "--json"))["versions"]
    rev = json.loads(cli_run(vault, "history", archived, "--json"))["versions"][-1]["rev"]
    assert "no note matches" in cli_run(vault, "show", archived, "--at", rev, "--user", "alice", ok=False)
    # Alice's own notes still answer.
    own = next(rel for rel in notes["alice"].values() if rel.startswith("Memory/Facts/"))
    assert json.loads(cli_run(vault, "history", own, "--user", "alice", "--json"))["versions"]
    assert json.loads(cli_run(vault, "show", own, "--user", "alice", "--json"))["user"] == "alice"
    with pytest.raises(NoteNotFound):
        api.Memory(vault, user="alice").show(next(iter(notes["bob"])))

    for fmt in ("claude", "hermes"):
        out = tmp_path / fmt
        result = json.loads(cli_run(vault, "export", "--format", fmt, "--out", out, "--user", "alice", "--json"))
        assert result["memories"] and set(result["ids"]) <= set(notes["alice"])
        written = "".join(Path(f).read_text(encoding="utf-8") for f in result["files"])
        assert_none_of_bobs(written, notes)
        assert "Kyoto" not in written  # alice's expired trip is not current either
    log = json.loads(cli_run(vault, "log", "--user", "alice", "-n", 500, "--json"))
    assert any(p in notes["alice"].values() for e in log for p in e["paths"])
    assert_none_of_bobs(log, notes)


def test_change_commands_for_alice_cannot_touch_bobs_notes(vault, notes):
    """forget, correct and rollback (a note or a whole run) scope by user in the one NOTE
    resolver, not only in the MCP server: for alice, bob's notes and runs do not exist, and
    the vault and its history stay exactly as they were."""
    from vaultmem.store.note import read_note as read

    head = _git_head(vault)
    before = {rel: (vault / rel).read_bytes() for rel in notes["bob"].values() if (vault / rel).exists()}
    active = [rel for rel in before if read(vault / rel).status == "active"
              and read(vault / rel).type in ("fact", "preference", "event")]
    assert active
    runs = {str(read(vault / rel).get("run")) for rel in before if read(vault / rel).get("run")}
    assert runs
    for rel in active:
        note_id = read(vault / rel).id
        rev = head  # any revision: the note is refused before the revision is read
        for ref in (note_id, rel):
            for command in (["forget", ref], ["forget", ref, "--purge"],
                            ["correct", ref, "Alice keeps a canoe in the shed."],
                            ["rollback", ref, "--to", rev]):
                out = cli_run(vault, *command, "--user", "alice", ok=False)
                assert "no note matches" in out, (command, out)
    for run in runs:
        out = cli_run(vault, "rollback", "--run", run, "--user", "alice", ok=False)
        assert f"no extraction run {run!r}" in out, out
    mem = api.Memory(vault, user="alice")
    with pytest.raises(NoteNotFound):
        mem.forget(active[0])
    assert {rel: (vault / rel).read_bytes() for rel in before} == before
    assert _git_head(vault) == head


def _git_head(vault):
    return subprocess.run(["git", "-C", str(vault), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _start_daemon(vault):
    started = json.loads(subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", "start", "--json"],
                                        capture_output=True, text=True, timeout=120, check=True).stdout)
    assert started["started"], started
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            if client.request(vault, "status")["state"] == "watching":
                return started["pid"]
        except Exception:  # not listening yet
            pass
        time.sleep(0.2)
    raise AssertionError("the daemon did not start watching in time")


def _mcp_session(vault, notes):
    """One `vaultmem mcp` session: alice's tool calls and resource reads."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    bob_id = next(i for i, rel in notes["bob"].items() if rel.startswith("Memory/Facts/"))
    alice_id = next(i for i, rel in notes["alice"].items() if rel.startswith("Memory/Facts/"))
    params = StdioServerParameters(command=VAULTMEM, args=["--vault", str(vault), "mcp"],
                                   env=dict(os.environ))

    async def call(session, tool, **arguments):
        result = await session.call_tool(tool, arguments)
        return result.is_error, result.content[0].text

    async def main():
        out = {"recall": [], "errors": []}
        with open(vault.parent / "mcp.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=240) as session:
                    await session.initialize()
                    for args in [{}, {"include_inactive": True}, {"as_of": "2026-12-02"},
                                 {"include_inactive": True, "as_of": "2026-11-15"}, {"type": "session"},
                                 {"tag": "home", "include_inactive": True}]:
                        for query in ["Where is the spare key under the flowerpot?", "passport drawer",
                                      SAME_TEXT]:
                            out["recall"].append(await call(session, "recall", query=query, k=50,
                                                            user="alice", **args))
                    out["context"] = await call(session, "context", question="flowerpot key locker",
                                                user="alice")
                    out["errors"].append(await call(session, "history", note=bob_id, user="alice"))
                    out["errors"].append(await call(session, "history", note=notes["bob"][bob_id],
                                                    user="alice"))
                    out["own_history"] = await call(session, "history", note=alice_id, user="alice")
                    try:
                        await session.read_resource(f"vaultmem://memory/{bob_id}?user=alice")
                        out["resource"] = "read"
                    except Exception as exc:  # the SDK raises for a resource error
                        out["resource"] = str(exc)
                    listing = await session.read_resource("vaultmem://memories?user=alice")
                    out["listing"] = listing.contents[0].text
        return out

    return anyio.run(main)


def test_daemon_socket_and_mcp_for_alice_return_none_of_bobs(vault, notes):
    try:
        _start_daemon(vault)
        for args in [{}, {"all": True}, {"as_of": "2026-12-02"}, {"all": True, "as_of": "2026-11-15"},
                     {"type": "session", "all": True}, {"tag": "home", "all": True}]:
            for query in ["Where is the spare key under the flowerpot?", "passport kitchen drawer"]:
                result = client.request(vault, "search", {"query": query, "k": 50, "user": "alice", **args})
                assert "warning" not in result
                assert_none_of_bobs(result, notes)
        answer = client.request(vault, "context", {"question": "flowerpot locker passport", "user": "alice"})
        assert_none_of_bobs(answer, notes)
        mine = client.request(vault, "search", {"query": SAME_TEXT, "user": "alice"})["hits"]
        assert mine and mine[0]["id"] in notes["alice"]

        out = _mcp_session(vault, notes)  # its recall and context go through the daemon
    finally:
        subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", "stop"], capture_output=True, timeout=120)
    for is_error, text in out["recall"] + [out["context"]]:
        assert not is_error, text
        assert_none_of_bobs(json.loads(text), notes)
    assert any(json.loads(text)["hits"] for _e, text in out["recall"])
    for is_error, text in out["errors"]:
        assert is_error and "no note matches" in text
    assert not out["own_history"][0] and json.loads(out["own_history"][1])["versions"]
    assert "no note matches" in out["resource"]
    assert out["listing"].count("- `") >= 3
    assert_none_of_bobs(out["listing"], notes)


def test_shared_memories_reach_alice_only_when_configured(vault, notes, embedder, tmp_path):
    [shared_id] = notes["shared"]

    def alice_view():
        mem = api.Memory(vault, embedder=embedder)
        hits = [h["id"] for h in mem.search("What is the office wifi called?", user="alice")["hits"]]
        block = mem.context("office wifi network name", user="alice")["ids"]
        exported = mem.export("claude", out=tmp_path / "CLAUDE.md", user="alice")["ids"]
        try:
            shown = mem.show(shared_id, user="alice")["id"]
        except NoteNotFound:
            shown = None
        return hits, block, exported, shown

    hits, block, exported, shown = alice_view()
    assert exported and shared_id not in hits + block + exported and shown is None
    config = vault / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert "share_shared = false" in text
    config.write_text(text.replace("share_shared = false", "share_shared = true"), encoding="utf-8")
    try:
        hits, block, exported, shown = alice_view()
        assert shared_id in hits and shared_id in block and shared_id in exported and shown == shared_id
        # Sharing opens `shared` only: bob's notes stay his.
        mem = api.Memory(vault, embedder=embedder)
        assert_none_of_bobs(mem.search("Where is the spare key?", k=50, user="alice", all=True), notes)
    finally:
        config.write_text(text, encoding="utf-8")
