"""The MCP server on streamable HTTP as a remote agent sees it: `python -m vaultmem mcp --http`
started as a real subprocess on a real vault, driven with the SDK's streamable HTTP client
and with plain HTTP requests; then the daemon hosting it with its warm model. One server
process serves every client of the first test, so the model loads once there."""

import json
import socket
import stat
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import anyio
import pytest
from click.testing import CliRunner

from tests.helpers.wait import wait_for
from tests.test_mcp import CALL_TIMEOUT, TOOLS, call, call_error, env, vault  # noqa: F401  fixtures
from vaultmem.agents import mcp_tokens
from vaultmem.cli import cli

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "1"}}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_token(root, user, *extra) -> str:
    done = CliRunner().invoke(cli, ["--vault", str(root), "mcp", "token", "--user", user, *extra])
    assert done.exit_code == 0, done.output
    return done.stdout.strip()


def serve(root, env, address) -> subprocess.Popen:
    """`python -m vaultmem --vault ROOT mcp --http ADDRESS` running this checkout's code."""
    full_env = dict(env, VAULTMEM_NO_DAEMON="1")
    return subprocess.Popen([sys.executable, "-m", "vaultmem", "--vault", str(root), "mcp", "--http",
                             address], env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def listening(port: int, process: subprocess.Popen | None = None) -> bool:
    assert process is None or process.poll() is None, process and process.stderr.read()
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def post(url: str, token: str | None):
    """A plain-HTTP `initialize`: (status, headers)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers


def run_client(url: str, token: str, scenario):
    """Open an MCP session on `url` with `token` and run `scenario(session)`."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                    await session.initialize()
                    return await scenario(session)

    return anyio.run(main)


async def read_error(session, uri: str) -> str:
    try:
        await session.read_resource(uri)
    except Exception as exc:  # the SDK raises MCPError for a resource error
        return str(exc)
    raise AssertionError(f"{uri} should not be readable")


def test_tokens_are_shown_once_and_kept_hashed_in_a_private_file(vault):
    first = make_token(vault, "alice")
    path = mcp_tokens.tokens_path(vault)
    assert first.startswith("vm_") and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first not in path.read_text() and mcp_tokens.user_for(vault, first) == "alice"

    again = CliRunner().invoke(cli, ["--vault", str(vault), "mcp", "token", "--user", "alice"])
    assert again.exit_code == 1 and "cannot be shown again" in again.output and "--new" in again.output

    second = make_token(vault, "alice", "--new")
    assert second != first and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert mcp_tokens.user_for(vault, first) is None and mcp_tokens.user_for(vault, second) == "alice"
    default = json.loads(make_token(vault, "default", "--json"))
    assert default["user"] == "default" and mcp_tokens.user_for(vault, default["token"]) == "default"

    assert CliRunner().invoke(cli, ["--vault", str(vault), "mcp", "token", "--user", "alice",
                                    "--revoke"]).exit_code == 0
    assert mcp_tokens.user_for(vault, second) is None
    gone = CliRunner().invoke(cli, ["--vault", str(vault), "mcp", "token", "--user", "alice", "--revoke"])
    assert gone.exit_code == 1 and "no MCP token" in gone.output

    path.write_text("{not json")
    broken = CliRunner().invoke(cli, ["--vault", str(vault), "mcp", "token", "--new"])
    assert broken.exit_code == 1 and str(path) in broken.output and "delete" in broken.output


@pytest.mark.parametrize("address, message", [
    ("0.0.0.0:{port}", "refusing to serve 0.0.0.0 without a token"),
    ("[::]:{port}", "refusing to serve :: without a token"),
    ("127.0.0.1:{port}", "no MCP token yet"),
    ("127.0.0.1:99999", "bad address"),
])
def test_no_server_without_a_token(vault, env, address, message):
    process = serve(vault, env, address.format(port=free_port()))
    out, err = process.communicate(timeout=120)
    assert process.returncode != 0 and message in err, err
    if "without a token" in message:
        assert "vaultmem mcp token" in err and "TLS" in err


def test_a_taken_port_is_a_clear_error(vault, env):
    make_token(vault, "default")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        process = serve(vault, env, f"127.0.0.1:{port}")
        out, err = process.communicate(timeout=120)
    assert process.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in err, err
    assert "Traceback" not in err


def test_remote_agents_reach_only_their_own_user(vault, env):
    alice, bob = make_token(vault, "alice"), make_token(vault, "bob")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = serve(vault, env, f"127.0.0.1:{port}")
    try:
        wait_for(lambda: listening(port, process), "the server to listen", deadline=120)
        refused = [post(url, None), post(url, "vm_not-a-token")]

        async def as_alice(session):
            out = {"tools": (await session.list_tools()).tools}
            out["remember"] = await call(session, "remember", text="The user keeps her bike in the "
                                         "cellar of the old bakery", type="fact")
            out["recall"] = await call(session, "recall", query="where is the bike kept")
            out["listing"] = (await session.read_resource("vaultmem://memories")).contents[0].text
            out["as_bob"] = await call_error(session, "recall", query="bike", user="bob")
            out["list_as_bob"] = await read_error(session, "vaultmem://memories?user=bob")
            out["path"] = await call_error(session, "extract", path="/etc/passwd")
            return out

        alice_out = run_client(url, alice, as_alice)
        note_id = alice_out["remember"]["id"]

        async def as_bob(session):
            out = {"recall": await call(session, "recall", query="where is the bike kept")}
            out["context"] = await call(session, "context", question="Where is the bike?")
            out["listing"] = (await session.read_resource("vaultmem://memories")).contents[0].text
            out["note"] = await read_error(session, f"vaultmem://memory/{note_id}")
            out["history"] = await call_error(session, "history", note=note_id)
            return out

        bob_out = run_client(url, bob, as_bob)
        assert make_token(vault, "bob", "--new") != bob  # the server reads the change at once
        revoked = post(url, bob)
    finally:
        process.terminate()
        process.communicate(timeout=60)

    for status, headers in refused:
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert revoked[0] == 401
    assert {t.name for t in alice_out["tools"]} == TOOLS
    assert alice_out["remember"]["action"] == "created"
    assert "user: alice" in (vault / alice_out["remember"]["path"]).read_text()
    assert alice_out["recall"]["hits"][0]["id"] == note_id
    assert note_id in alice_out["listing"]
    assert "acts for user 'alice' only" in alice_out["as_bob"]
    assert "acts for user 'alice' only" in alice_out["list_as_bob"]
    assert "inline" in alice_out["path"] and "root:" not in alice_out["path"]

    assert all("bike" not in h["text"] for h in bob_out["recall"]["hits"])
    assert "bike" not in bob_out["context"]["text"] and note_id not in bob_out["context"]["ids"]
    assert note_id not in bob_out["listing"] and "bike" not in bob_out["listing"]
    assert "no note matches" in bob_out["note"] and "no note matches" in bob_out["history"]


def test_the_daemon_hosts_it_when_configured(vault, env, embedder):
    from vaultmem.daemon.runner import Daemon

    port = free_port()
    config = vault / ".vaultmem" / "config.toml"
    config.write_text(config.read_text().replace('http = ""', f'http = "127.0.0.1:{port}"'))

    def run_daemon():
        daemon = Daemon(vault, embedder=embedder)
        thread = threading.Thread(target=daemon.run, kwargs={"install_signals": False}, daemon=True)
        thread.start()
        wait_for(lambda: daemon.state == "watching", "the daemon to watch", deadline=120)
        wait_for(lambda: daemon.status()["mcp_http"], "MCP on HTTP to start or fail", deadline=60)
        return daemon, thread

    daemon, thread = run_daemon()  # no token yet: the daemon serves its socket, says why not HTTP
    try:
        assert "no MCP token yet" in daemon.status()["mcp_http"]["error"]
        assert not listening(port)
    finally:
        daemon.stop()
        thread.join(60)

    token = make_token(vault, "default")
    daemon, thread = run_daemon()
    try:
        assert daemon.status()["mcp_http"] == {"url": f"http://127.0.0.1:{port}/mcp"}

        async def scenario(session):
            added = await call(session, "remember", text="The user takes the 7:40 train to work")
            found = await call(session, "recall", query="which train does the user take")
            return added, found

        added, found = run_client(f"http://127.0.0.1:{port}/mcp", token, scenario)
    finally:
        daemon.stop()
        thread.join(60)
    assert not thread.is_alive() and not listening(port)
    assert added["action"] == "created" and found["hits"][0]["id"] == added["id"]
