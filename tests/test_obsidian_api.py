"""The Obsidian plugin's side of the daemon (issue 37): `review` and `related` (the panes'
reads), the search hit's `sources` (where a hit opens), tokens per client, and the loopback
HTTP API (`vaultmem/daemon/http_api.py`) as the plugin meets it: a real `Daemon` with the
real model, real HTTP with urllib, real git commits. The plugin's own tests
(`obsidian-plugin/test/`) drive the same API from TypeScript and from Chromium."""

import json
import subprocess
import threading
import urllib.error
import urllib.request
from datetime import datetime

import pytest
from click.testing import CliRunner

from tests.helpers.transcripts import write_jsonl
from tests.helpers.wait import wait_for
from tests.test_mcp_http import free_port, listening, make_token
from vaultmem.agents import mcp_tokens
from vaultmem.api import Memory, init
from vaultmem.cli import cli
from vaultmem.daemon.http_api import PLUGIN_OPS, state_path
from vaultmem.errors import BadRequest, NoteNotFound

GARDEN = """# Garden plan

Notes for the allotment.

## Budget

We spend 300 euros on seeds this spring.

## Planting

Tomatoes go by the south wall, beans along the fence. ^south
"""
TURNS = [("user", "I moved to Lisbon last month for the new job at the harbour office."),
         ("assistant", "Congratulations on the move!"),
         ("user", "For the Garden plan, I prefer heirloom tomatoes over hybrids.")]
NOW = datetime(2026, 12, 4, 9, 0)


def seed(root, embedder):
    """A vault with the person's garden note and one extracted session; the Memory."""
    init(root)
    (root / "Projects").mkdir()
    (root / "Projects" / "Garden plan.md").write_text(GARDEN, encoding="utf-8")
    memory = Memory(root, embedder=embedder)
    transcript = write_jsonl(root.parent / "chat.jsonl", "garden-chat", TURNS)
    run = memory.extract([str(transcript)])
    memory.reindex()
    return memory, run


def obsidian_token(root, user) -> str:
    done = CliRunner().invoke(cli, ["--vault", str(root), "obsidian", "token", "--user", user, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["token"]


# --- review and related, in process ----------------------------------------------------------

@pytest.fixture(scope="module")
def garden(tmp_path_factory, embedder):
    """The seeded vault and its Memory, with the module's own git identity; the daemon
    (`served`, later in the module) and the in-process calls share it."""
    with pytest.MonkeyPatch.context() as patch:
        home = tmp_path_factory.mktemp("home")
        (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n")
        patch.setenv("HOME", str(home))
        patch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        patch.delenv("VAULTMEM_NOW", raising=False)
        root = tmp_path_factory.mktemp("garden") / "vault"
        yield seed(root, embedder)


def test_review_groups_the_new_memories_by_session_with_their_turns(garden):
    memory, run = garden
    result = memory.review(since="2026-12-01")
    assert result["count"] == len(run["decisions"]) - run["rejected"] >= 2
    [session] = result["sessions"]
    assert session["session"].startswith("Memory/Sessions/") and session["runs"] == [run["run"]]
    said = {m["text"]: m["turn"] for m in session["memories"]}
    tomato = next(turn for text, turn in said.items() if "heirloom" in text)
    assert tomato["speaker"] == "Alice" and tomato["text"] == TURNS[2][1]
    assert tomato["link"] == session["session"].removesuffix(".md") + "#^j-2"
    assert all(turn is not None and turn["text"] for turn in said.values())


def test_review_reads_the_notes_the_index_names_and_finds_what_reading_all_finds(garden):
    from vaultmem.memory.review import review

    memory, _ = garden
    start = datetime(2026, 12, 1)
    assert memory.review(since="2026-12-01") == review(memory.vault, start, {"default"})
    assert memory._written_since(start, {"default"})       # the index named them
    assert memory._written_since(start, {"bob"}) == []


def test_review_looks_back_to_the_day_given(garden):
    memory, _ = garden
    assert memory.review(since="2999-01-01") == {"since": "2999-01-01T00:00:00", "count": 0,
                                                  "sessions": []}
    added = memory.add("The user keeps bees on the allotment", type="fact")
    try:
        groups = memory.review(since="2026-12-01")["sessions"]
        by_hand = [g for g in groups if g["session"] is None]
        assert [m["id"] for m in by_hand[0]["memories"]] == [added["id"]]
        assert by_hand[0]["memories"][0]["turn"] is None
    finally:
        memory.forget(added["id"])
    assert added["id"] not in json.dumps(memory.review(since="2026-12-01"))  # archived: not reviewed
    with pytest.raises(BadRequest, match="bad since 'last tuesday'"):
        memory.review(since="last tuesday")


def test_related_puts_the_memory_naming_the_note_first_and_never_the_note(garden):
    memory, _ = garden
    result = memory.related("Projects/Garden plan.md")
    first = result["hits"][0]
    assert first["why"] == "links to this note" and "heirloom" in first["text"]
    assert first["sources"] and first["sources"][0].startswith("[[Sessions/")
    assert "Projects/Garden plan.md" not in [h["path"] for h in result["hits"]]
    assert all(h["why"] in ("links to this note", "similar") for h in result["hits"])
    # From the memory's side, the person's note is among what lies nearest it.
    near = memory.related(first["path"])["hits"]
    assert "Projects/Garden plan.md" in [h["path"] for h in near]
    assert first["path"] not in [h["path"] for h in near]


def test_related_refuses_what_is_not_a_readable_note(garden):
    memory, _ = garden
    for bad in ("../outside.md", "Projects/Nothing here.md", "Projects", ".vaultmem/config.toml"):
        with pytest.raises(NoteNotFound):
            memory.related(bad)
    mine = memory.review(since="2026-12-01")["sessions"][0]["memories"][0]["path"]
    with pytest.raises(NoteNotFound):   # another user's memory is "not found"
        memory.related(mine, user="bob")


def test_a_search_hit_says_where_to_open_it(garden):
    memory, _ = garden
    budget = memory.search("how much do we spend on seeds", scope="notes")["hits"][0]
    assert budget["path"] == "Projects/Garden plan.md" and budget["sources"] == ["[[Garden plan#Budget]]"]
    south = memory.search("where do the tomatoes go", scope="notes")["hits"][0]
    assert south["sources"] == ["[[Garden plan#^south]]"]  # a passage of one block: at the block


# --- tokens: one per user and client ----------------------------------------------------------

def test_an_obsidian_token_and_an_mcp_token_open_only_their_own_door(tmp_path, git_identity):
    init(tmp_path)
    mcp = mcp_tokens.issue(tmp_path, "alice")["token"]
    plugin = mcp_tokens.issue(tmp_path, "alice", "obsidian")["token"]
    assert mcp_tokens.user_for(tmp_path, mcp) == "alice" and mcp_tokens.user_for(tmp_path, plugin) is None
    assert mcp_tokens.user_for(tmp_path, plugin, "obsidian") == "alice"
    assert mcp_tokens.user_for(tmp_path, mcp, "obsidian") is None
    newer = mcp_tokens.issue(tmp_path, "alice", "obsidian")["token"]  # replaces the plugin's only
    assert mcp_tokens.user_for(tmp_path, mcp) == "alice"
    assert mcp_tokens.user_for(tmp_path, plugin, "obsidian") is None
    assert mcp_tokens.revoke(tmp_path, "alice", "obsidian")
    assert mcp_tokens.user_for(tmp_path, newer, "obsidian") is None and mcp_tokens.user_for(tmp_path, mcp)
    # A file written before there were two clients: its entries are MCP's.
    stored = json.loads(mcp_tokens.tokens_path(tmp_path).read_text())
    assert "client" not in stored["tokens"][0]
    assert mcp_tokens.any_for(tmp_path, "mcp") and not mcp_tokens.any_for(tmp_path, "obsidian")


def test_the_token_command_says_how_to_replace_a_token_it_cannot_show(tmp_path, git_identity):
    init(tmp_path)
    obsidian_token(tmp_path, "alice")
    again = CliRunner().invoke(cli, ["--vault", str(tmp_path), "obsidian", "token", "--user", "alice"])
    assert again.exit_code == 1 and "vaultmem obsidian token --user alice --new" in again.output
    gone = CliRunner().invoke(cli, ["--vault", str(tmp_path), "obsidian", "token", "--user", "bob", "--revoke"])
    assert gone.exit_code == 1 and "no Obsidian token" in gone.output


# --- the HTTP API, served by a running daemon ---------------------------------------------------

def call(url, op, args=None, token=None, headers=None, method="POST"):
    """(HTTP status, JSON body, headers) of one request to the plugin's API."""
    sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
            **(headers or {})}
    data = None if method == "GET" else json.dumps(args or {}).encode()
    request = urllib.request.Request(f"{url}/v1/{op}", data=data, headers=sent, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


@pytest.fixture(scope="module")
def served(garden, embedder):
    """The garden vault's daemon, running in a thread with the shared model."""
    from vaultmem.daemon.runner import Daemon

    memory, run = garden
    daemon = Daemon(memory.vault.root, embedder=embedder)
    thread = threading.Thread(target=daemon.run, kwargs={"install_signals": False}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: daemon.state == "watching", "the daemon to watch", deadline=120)
        yield daemon, run
    finally:
        daemon.stop()
        thread.join(60)
    assert not thread.is_alive()


def test_the_daemon_serves_the_plugin_once_a_token_exists_and_stops_with_it(served):
    daemon, _ = served
    root = daemon.root
    if daemon.plugin_api is None:  # the first test to run here: no token yet
        assert "no Obsidian token yet" in daemon.status()["obsidian"]["error"]
        assert not state_path(root).exists()
    alice = obsidian_token(root, "alice")  # the CLI asks the running daemon to serve at once
    where = json.loads(state_path(root).read_text())
    assert where["url"] == daemon.status()["obsidian"]["url"] == f"http://127.0.0.1:{where['port']}"
    assert daemon.plugin_api.httpd.server_address[0] == "127.0.0.1"
    assert state_path(root).stat().st_mode & 0o777 == 0o600
    status, body, _ = call(where["url"], "status", token=alice)
    assert status == 200 and body["result"]["state"] == "watching"
    assert body["result"]["model"] == "all-MiniLM-L6-v2" and body["result"]["user"] == "alice"
    shown = CliRunner().invoke(cli, ["--vault", str(root), "daemon", "status"])
    assert f"Obsidian plugin: {where['url']}" in shown.output


@pytest.fixture(scope="module")
def api(served):
    """(url, the default user's plugin token, bob's, the daemon, the extract's run)."""
    daemon, run = served
    root = daemon.root
    token = obsidian_token(root, "default")
    bob = obsidian_token(root, "bob")
    wait_for(lambda: daemon.plugin_api is not None, "the plugin API", deadline=30)
    return daemon.plugin_api.url, token, bob, daemon, run


def test_only_the_plugins_token_from_loopback_gets_an_answer(api):
    url, token, _, daemon, _ = api
    mcp = make_token(daemon.root, "default")
    for refused in (None, "vm_wrong", mcp, token + "x"):
        status, body, headers = call(url, "search", {"query": "tea"}, token=refused)
        assert (status, body["code"]) == (401, "unauthorized") and headers["WWW-Authenticate"] == "Bearer"
        assert "vaultmem obsidian token --new" in body["error"]
    status, body, _ = call(url, "search", {"query": "tea"}, token=token, headers={"Host": "evil.example:80"})
    assert (status, body["code"]) == (403, "forbidden")
    status, body, _ = call(url, "search", {"query": "tea"}, token=token,
                           headers={"Origin": "https://evil.example"})
    assert (status, body["code"]) == (403, "forbidden")
    status, _, headers = call(url, "search", token=token, method="OPTIONS")
    assert status == 405 and headers.get("Access-Control-Allow-Origin") is None


def test_the_plugin_gets_its_operations_only(api):
    url, token, _, daemon, _ = api
    for op in ("shutdown", "extract", "reindex", "gc", "repair", "add", "obsidian_api"):
        status, body, _ = call(url, op, {}, token=token)
        assert (status, body["code"]) == (403, "forbidden") and "command line" in body["error"]
    assert daemon.state == "watching"
    assert call(url, "nothing", token=token)[:2] == (404, {"ok": False, "code": "unknown_op", "error":
                                                           "unknown operation 'nothing'; the plugin's API "
                                                           f"serves {', '.join(sorted(PLUGIN_OPS))}"})
    status, body, _ = call(url, "search", {"query": 5}, token=token)
    assert (status, body["code"]) == (400, "bad_request")
    request = urllib.request.Request(f"{url}/v1/search", data=b"{not json", method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400


def test_a_malformed_request_is_refused_and_the_server_goes_on(api):
    import http.client

    url, token, _, daemon, _ = api
    host, port = url.removeprefix("http://").split(":")
    for length in ("many", "-5", str(2 << 20)):
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.putrequest("POST", "/v1/status")
        connection.putheader("Authorization", f"Bearer {token}")
        connection.putheader("Content-Length", length)
        connection.endheaders()
        answer = connection.getresponse()
        assert answer.status == 400 and json.loads(answer.read())["code"] == "bad_request", length
        connection.close()
    assert call(url, "status", token=token)[0] == 200 and daemon.state == "watching"


def test_a_token_acts_for_its_user_only(api):
    url, token, bob, _, _ = api
    status, body, _ = call(url, "review", {"since": "2026-12-01", "user": "default"}, token=bob)
    assert (status, body["code"]) == (403, "forbidden") and "acts for user 'bob' only" in body["error"]
    status, body, _ = call(url, "review", {"since": "2026-12-01"}, token=bob)
    assert status == 200 and body["result"]["count"] == 0
    mine = call(url, "review", {"since": "2026-12-01"}, token=token)[1]["result"]
    path = mine["sessions"][0]["memories"][0]["path"]
    for op, args in (("related", {"path": path}), ("forget", {"ref": path})):
        status, body, _ = call(url, op, args, token=bob)
        assert (status, body["code"]) == (404, "note_not_found"), (op, body)
    assert (daemon_root(api) / path).exists()


def daemon_root(api):
    return api[3].root


def test_the_panes_reads_over_http(api):
    url, token, _, _, run = api
    body = call(url, "review", {"since": "2026-12-01"}, token=token)[1]["result"]
    texts = [m["text"] for s in body["sessions"] for m in s["memories"]]
    assert any("heirloom" in t for t in texts) and any("Lisbon" in t for t in texts)
    assert body["sessions"][0]["runs"] == [run["run"]]
    hits = call(url, "related", {"path": "Projects/Garden plan.md", "k": 5}, token=token)[1]["result"]["hits"]
    assert hits[0]["why"] == "links to this note" and "heirloom" in hits[0]["text"] and len(hits) <= 5
    found = call(url, "search", {"query": "budget for seeds", "scope": "notes"}, token=token)[1]["result"]
    assert found["hits"][0]["sources"] == ["[[Garden plan#Budget]]"]
    memories = call(url, "search", {"query": "budget for seeds", "scope": "memories"}, token=token)[1]["result"]
    assert all(h["type"] != "note" for h in memories["hits"])


def git(root, *args) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_forget_correct_and_rolling_back_the_run_are_each_a_commit(api):
    url, token, _, daemon, run = api
    root = daemon.root
    memories = [m for s in call(url, "review", {"since": "2026-12-01"}, token=token)[1]["result"]["sessions"]
                for m in s["memories"]]
    lisbon = next(m for m in memories if "Lisbon" in m["text"])
    tomato = next(m for m in memories if "heirloom" in m["text"])

    status, body, _ = call(url, "forget", {"ref": lisbon["id"]}, token=token)
    assert status == 200 and body["result"]["note"].startswith("Memory/Archive/")
    assert not (root / lisbon["path"]).exists() and (root / body["result"]["note"]).exists()
    assert "Vaultmem-Action: forget" in git(root, "log", "-1", "--format=%B")
    again = call(url, "review", {"since": "2026-12-01"}, token=token)[1]["result"]
    assert lisbon["id"] not in json.dumps(again)

    status, body, _ = call(url, "correct", {"ref": tomato["id"], "text": "For the Garden plan, the user "
                                            "prefers cherry tomatoes."}, token=token)
    assert status == 200 and body["result"]["action"] in ("superseded", "updated")
    assert "Vaultmem-Action: correct" in git(root, "log", "-1", "--format=%B")

    status, body, _ = call(url, "rollback", {"run": run["run"]}, token=token)
    assert status == 200 and body["result"]["run"] == run["run"] and body["result"]["commit"]
    assert "Vaultmem-Action: rollback" in git(root, "log", "-1", "--format=%B")
    assert not (root / tomato["path"]).exists()


def test_a_stopped_daemon_takes_its_api_and_its_file_away(tmp_path, git_identity, embedder, monkeypatch):
    from vaultmem.daemon.runner import Daemon

    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    root = tmp_path / "vault"
    init(root)
    port = free_port()
    config = root / ".vaultmem" / "config.toml"
    config.write_text(config.read_text().replace("port = 0", f"port = {port}"))
    token = obsidian_token(root, "default")
    daemon = Daemon(root, embedder=embedder)
    thread = threading.Thread(target=daemon.run, kwargs={"install_signals": False}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: daemon.plugin_api is not None, "the plugin API", deadline=120)
        assert daemon.plugin_api.url == f"http://127.0.0.1:{port}" and listening(port)
        assert call(daemon.plugin_api.url, "status", token=token)[0] == 200
    finally:
        daemon.stop()
        thread.join(60)
    assert not listening(port) and not state_path(root).exists()
