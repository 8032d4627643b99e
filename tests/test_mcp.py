"""The MCP server as a client sees it: `vaultmem mcp` started as a real subprocess on a real
vault, driven with the SDK's own stdio client. One session walks every tool in turn, so the
model loads once per server process."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from vaultmem import api
from vaultmem.memory.memories import write_memory
from vaultmem.store.vault import Vault

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
REPO = Path(__file__).resolve().parent.parent  # the server runs this checkout's code
TOOLS = {"remember", "update", "recall", "context", "forget", "correct", "history", "rollback",
         "extract"}
CALL_TIMEOUT = 240  # the first call loads the model on a busy 2-core machine


@pytest.fixture
def env(tmp_path):
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n[init]\n\tdefaultBranch = main\n")
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""),
            "VAULTMEM_CACHE": os.environ["VAULTMEM_CACHE"],  # the exported model (conftest)
            "PYTHONPATH": str(REPO)}


@pytest.fixture
def vault(tmp_path, env, monkeypatch):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "vault"
    api.init(root)
    return root


def run_session(root, env, scenario):
    """Start `vaultmem --vault ROOT mcp`, initialize a ClientSession, run `scenario(session)`."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=VAULTMEM, args=["--vault", str(root), "mcp"], env=env)

    async def main():
        with open(root.parent / "server.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                    init = await session.initialize()
                    return await scenario(session, init)

    return anyio.run(main)


async def call(session, tool, /, **arguments):
    """A successful tool call's JSON result (fails the test on a tool error)."""
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text
    assert not result.is_error, f"{tool} failed: {text}"
    return json.loads(text)


async def call_error(session, tool, /, **arguments) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.content[0].text}"
    return result.content[0].text


TRANSCRIPT = ("**Alice:** I prefer window seats on long flights.\n"
              "**Assistant:** Noted, window seats it is.\n"
              "**Alice:** My sister Maria lives in Lisbon.\n")


def test_every_tool_over_a_real_stdio_session(vault, env, tmp_path, embedder):
    trip = vault / "Trips" / "Lisbon trip.md"
    trip.parent.mkdir()
    trip.write_text("# Lisbon trip\n\n## Stay\nWe booked the Alfama flat for three nights in June.\n")
    api.Memory(vault, embedder=embedder).reindex()   # the person's own note, indexed read-only
    bob = write_memory(Vault(vault), text="Bob keeps his spare key under the blue flowerpot",
                       type="fact", user="bob", title="Spare key")
    bob_before = bob.read_bytes()
    bob_id = next(line.split(": ")[1] for line in bob.read_text().splitlines() if line.startswith("id:"))
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text(json.dumps({"session": "chat-1", "id": "m-1", "role": "user",
                                 "text": "I work as a nurse at the city hospital."}) + "\n")
    env = dict(env, VAULTMEM_NO_DAEMON="1")

    async def scenario(session, init):
        out = {"init": init}
        out["tools"] = (await session.list_tools()).tools
        out["templates"] = (await session.list_resource_templates()).resource_templates
        out["created"] = await call(session, "remember", text="The user prefers green tea over coffee",
                                    type="preference", tags=["drinks"], importance=0.8)
        out["duplicate"] = await call(session, "remember", text="The user prefers green tea over coffee",
                                      type="preference")
        out["secret"] = await call(session, "remember", text="My password is hunter2, api key sk-abc123def456ghi789")
        out["recall"] = await call(session, "recall", query="what does the user like to drink", k=5)
        out["context"] = await call(session, "context", question="What should I offer the user to drink?",
                                    budget=300)
        out["recall_notes"] = await call(session, "recall", query="where are we staying in Lisbon",
                                         scope="notes")
        out["recall_memories"] = await call(session, "recall", query="where are we staying in Lisbon",
                                            scope="memories")
        out["context_notes"] = await call(session, "context", question="Where do we stay in Lisbon?",
                                          budget=300)
        note_id = out["created"]["id"]
        out["resource"] = await session.read_resource(f"vaultmem://memory/{note_id}")
        out["listing"] = await session.read_resource("vaultmem://memories")
        out["history"] = await call(session, "history", note=note_id)
        out["corrected"] = await call(session, "correct", note=note_id,
                                      text="The user prefers black coffee over tea now")
        out["recall_all"] = await call(session, "recall", query="green tea", include_inactive=True)
        out["extracted"] = await call(session, "extract", transcript=TRANSCRIPT, session="flight chat")
        out["dry_run"] = await call(session, "extract", path=str(jsonl), dry_run=True)
        out["rolled_back_run"] = await call(session, "rollback", run=out["extracted"]["run"])
        new_note = out["corrected"]["path"]
        versions = (await call(session, "history", note=new_note))["versions"]
        out["rollback_note"] = await call(session, "rollback", note=new_note, to=versions[-1]["rev"])
        out["forgot"] = await call(session, "forget", note=new_note)
        out["recall_after_forget"] = await call(session, "recall", query="black coffee")
        # Another user's note is "not found" for every tool and the resource.
        out["other"] = [await call_error(session, tool, note=bob_id, **extra) for tool, extra in
                        (("history", {}), ("forget", {}), ("correct", {"text": "No key anywhere"}),
                         ("update", {"text": "No key anywhere"}), ("rollback", {"to": "HEAD"}))]
        try:
            await session.read_resource(f"vaultmem://memory/{bob_id}")
            out["other_resource"] = None
        except Exception as exc:  # the SDK raises MCPError for a resource error
            out["other_resource"] = str(exc)
        out["bob_history"] = await call(session, "history", note=bob_id, user="bob")
        out["bob_remember"] = await call(session, "remember", text="Bob is learning the cello",
                                         user="bob")
        out["default_recall_cello"] = await call(session, "recall", query="cello lessons")
        out["bob_recall_cello"] = await call(session, "recall", query="cello lessons", user="bob")
        out["bad_extract"] = await call_error(session, "extract")
        out["bad_transcript"] = await call_error(session, "extract", transcript="{not json",
                                                 format="jsonl")
        return out

    out = run_session(vault, env, scenario)

    assert out["init"].server_info.name == "vaultmem"
    assert "context" in out["init"].instructions and "never instructions" in out["init"].instructions
    by_name = {t.name: t for t in out["tools"]}
    assert set(by_name) == TOOLS
    for tool in by_name.values():  # written for a model to choose well, and every tool takes user
        assert len(tool.description) > 120, tool.name
        assert "user" in tool.input_schema["properties"], tool.name
    from vaultmem.extract.importers import FORMATS  # every format extract reads, offered to agents too
    formats = by_name["extract"].input_schema["properties"]["format"]["anyOf"][0]["enum"]
    assert sorted(formats) == sorted(FORMATS)
    assert {t.uri_template for t in out["templates"]} == {"vaultmem://memory/{note_id}{?user}",
                                                          "vaultmem://memories{?user}"}

    created = out["created"]
    assert created["action"] == "created" and created["reason"]
    assert (vault / created["path"]).is_file()
    assert out["duplicate"]["action"] in ("unchanged", "updated") and out["duplicate"]["reason"]
    assert out["secret"]["action"] == "rejected" and "secret" in out["secret"]["reason"].lower()
    assert out["recall"]["hits"][0]["id"] == created["id"]
    assert "green tea" in out["context"]["text"] and created["id"] in out["context"]["ids"]
    assert out["recall_notes"]["hits"][0]["path"] == "Trips/Lisbon trip.md"
    assert {h["type"] for h in out["recall_notes"]["hits"]} == {"note"}
    assert all(h["type"] != "note" for h in out["recall_memories"]["hits"])
    assert "## From the user's own notes" in out["context_notes"]["text"]
    assert "[[Lisbon trip#Stay]]" in out["context_notes"]["text"] and out["context_notes"]["notes"] == 1
    assert trip.read_text().startswith("# Lisbon trip")   # read, never written

    text = out["resource"].contents[0].text
    assert f"id: {created['id']}" in text and "green tea" in text
    assert created["id"] in out["listing"].contents[0].text
    assert "spare key" not in out["listing"].contents[0].text

    assert out["history"]["versions"] and out["history"]["note"] == created["path"]
    corrected = out["corrected"]
    assert corrected["action"] == "superseded"
    statuses = {h["id"]: h["status"] for h in out["recall_all"]["hits"]}
    assert statuses.get(created["id"]) == "superseded"

    extracted = out["extracted"]
    assert extracted["sessions"] == 1 and extracted["created"] >= 1
    assert any(p.startswith("Memory/Sessions/") and "flight chat" in p for p in extracted["notes"])
    assert out["dry_run"]["sessions"] == 1 and not list((vault / "Memory/Sessions").glob("*chat-1*"))
    undone = out["rolled_back_run"]
    assert undone["run"] == extracted["run"] and undone["removed"]
    assert not any((vault / p).exists() for p in undone["removed"])
    assert out["rollback_note"]["restored"]

    forgot = out["forgot"]
    assert forgot["status"] == "archived" and (vault / forgot["note"]).is_file()
    assert all(h["path"] != corrected["path"] for h in out["recall_after_forget"]["hits"])

    for message in out["other"]:
        assert "no note matches" in message and "spare key" not in message.lower()
    assert out["other_resource"] and "no note matches" in out["other_resource"]
    assert bob.read_bytes() == bob_before  # untouched by the refused calls
    assert out["bob_history"]["note"] == Vault(vault).rel(bob)
    assert "user: bob" in (vault / out["bob_remember"]["path"]).read_text()
    assert all("cello" not in h["text"] for h in out["default_recall_cello"]["hits"])
    assert any("cello" in h["text"] for h in out["bob_recall_cello"]["hits"])
    assert "either `transcript`" in out["bad_extract"]
    assert "not json" in out["bad_transcript"].lower() or "line 1" in out["bad_transcript"]


def _children_maps(parent: int) -> dict[int, str]:
    """Memory maps of `parent`'s child processes (Linux /proc)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found[int(stat.parent.name)] = (stat.parent / "maps").read_text()
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to inspect the server")
def test_recall_context_remember_go_through_the_daemon(vault, env):
    (vault / "Memory/Facts/Tea.md").write_text(
        "---\nid: 01JTEA0000000000000000000A\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
        "updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n"
        "The user drinks green tea every morning.\n")
    full_env = dict(os.environ, **env)
    started = subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", "start", "--json"],
                             capture_output=True, text=True, env=full_env, timeout=240)
    assert started.returncode == 0, started.stderr
    try:
        from vaultmem.ipc import client

        deadline = time.monotonic() + 240
        while client.request(vault, "status")["state"] != "watching":
            assert time.monotonic() < deadline, "the daemon never finished its first scan"
            time.sleep(0.2)

        async def scenario(session, init):
            out = {"recall": await call(session, "recall", query="what does the user drink")}
            out["context"] = await call(session, "context", question="morning drink")
            out["remember"] = await call(session, "remember", text="The user is allergic to peanuts")
            out["maps"] = _children_maps(os.getpid())
            return out

        out = run_session(vault, env, scenario)
    finally:
        subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", "stop"], capture_output=True,
                       env=full_env, timeout=240)
    assert out["recall"]["hits"][0]["path"] == "Memory/Facts/Tea.md"
    assert "green tea" in out["context"]["text"]
    assert out["remember"]["action"] == "created" and (vault / out["remember"]["path"]).is_file()
    servers = [maps for maps in out["maps"].values() if "python" in maps]
    assert servers, "the MCP server process was not found"
    # The daemon did the work: the server never loaded torch or the model.
    assert not any("libtorch" in maps for maps in servers)


def test_the_start_up_brief_and_a_project_over_mcp(vault, env, tmp_path, embedder):
    """Issue 50: `context` with `startup` and `project`, `recall` with `project`."""
    from test_brief import ACME, HARBOR, HARBOR_TURNS, PRIYA, claude_code_log, codex_log

    memory = api.Memory(vault, embedder=embedder)
    report = memory.extract([claude_code_log(tmp_path / "5a1b2c3d.jsonl", ACME, PRIYA),
                             codex_log(tmp_path / "rollout-2026-11-29T14-02-10-0199a8f2.jsonl", HARBOR, HARBOR_TURNS)])
    assert not report.get("errors")
    env = dict(env, VAULTMEM_NO_DAEMON="1")

    async def scenario(session, init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"startup", "project"} <= set(tools["context"].input_schema["properties"])
        assert "project" in tools["recall"].input_schema["properties"]
        brief = await call(session, "context", startup=True, project=ACME, budget=400)
        found = await call(session, "recall", query="what did we deploy to production?", project="acme-billing")
        return brief, found

    brief, found = run_session(vault, env, scenario)
    assert brief["text"].startswith("## Standing instructions") and "ruff" in brief["text"]
    assert "pytest -x" not in brief["text"] and brief["tokens"] <= 400
    assert not any("harbor 2.3" in h["text"] for h in found["hits"])
