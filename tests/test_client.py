"""The socket protocol: the client against the daemon's real server, on real Unix sockets."""

import json
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

from vaultmem.daemon import server as server_mod
from vaultmem.daemon.server import SocketServer, handle_message, peer_allowed, peer_uid
from vaultmem.errors import DaemonError, NoteNotFound, UnknownOperation
from vaultmem.ipc import client


def _dispatch(op, args):
    if op == "echo":
        return {"args": args, "text": "naïve ☕"}
    if op == "missing":
        raise NoteNotFound(f"no note matches {args.get('ref')!r}")
    if op == "slow":
        time.sleep(0.5)
        return "done"
    if op == "boom":
        raise RuntimeError("bug inside an operation")
    raise UnknownOperation(f"unknown operation {op!r}")


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    server = SocketServer(client.socket_path(root), _dispatch)
    server.start()
    yield root, server
    server.close()


def test_round_trip_and_socket_is_owner_only(served):
    root, server = served
    assert client.daemon_available(root)
    result = client.request(root, "echo", {"query": "tea", "k": 3})
    assert result == {"args": {"query": "tea", "k": 3}, "text": "naïve ☕"}
    mode = stat.S_IMODE(os.stat(client.socket_path(root)).st_mode)
    assert mode == 0o600
    assert stat.S_ISSOCK(os.stat(client.socket_path(root)).st_mode)


def test_operation_errors_keep_their_class(served):
    root, _ = served
    with pytest.raises(NoteNotFound, match="no note matches 'Tea'"):
        client.request(root, "missing", {"ref": "Tea"})
    with pytest.raises(NoteNotFound):  # try_request raises too: the daemon did the work
        client.try_request(root, "missing", {"ref": "Tea"})
    with pytest.raises(DaemonError, match="bug inside an operation"):
        client.request(root, "boom")
    # The server survives a failing operation.
    assert client.request(root, "echo")["text"] == "naïve ☕"


def test_timeouts(served):
    root, _ = served
    with pytest.raises(DaemonError, match="did not answer 'slow' within 0.05 s"):
        client.try_request(root, "slow", timeout=0.05)  # sent: never silently redone
    assert client.request(root, "slow", timeout=None) == "done"
    assert client._timeout_for("extract", client._DEFAULT) is None  # may take minutes
    assert client._timeout_for("search", client._DEFAULT) == client.DEFAULT_TIMEOUT
    # A search the LLM reranks waits as long as the endpoint does ([llm] timeout bounds it).
    assert client._timeout_for("search", client._DEFAULT, {"query": "q", "rerank": "llm"}) is None
    assert client._timeout_for("search", client._DEFAULT, {"query": "q", "rerank": ""}) == client.DEFAULT_TIMEOUT
    assert client._timeout_for("search", 5.0, {"query": "q", "rerank": "llm"}) == 5.0


def test_unknown_op_falls_back(served):
    root, _ = served
    assert client.try_request(root, "reindex_everything") is None
    with pytest.raises(DaemonError):
        client.request(root, "reindex_everything")


def test_no_daemon_means_fall_back(tmp_path):
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    assert not client.daemon_available(root)
    assert client.try_request(root, "search", {"query": "x"}) is None
    with pytest.raises(DaemonError, match="vaultmem daemon start"):
        client.request(root, "search", {"query": "x"})
    # A stale socket file left by a killed daemon is the same as none.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(client.socket_path(root)))
    stale.close()
    assert client.socket_path(root).exists()
    assert client.try_request(root, "search", {"query": "x"}) is None


def test_no_daemon_env_switch(served, monkeypatch):
    root, _ = served
    monkeypatch.setenv("VAULTMEM_NO_DAEMON", "1")
    assert client.try_request(root, "echo") is None


def test_deep_vault_path_beyond_sun_path_limit(tmp_path):
    root = tmp_path.joinpath(*(["a-rather-long-folder-name"] * 6)) / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    assert len(os.fsencode(client.socket_path(root))) > 108
    server = SocketServer(client.socket_path(root), _dispatch)
    server.start()
    try:
        assert client.request(root, "echo", {"n": 1})["args"] == {"n": 1}
        assert stat.S_IMODE(os.stat(client.socket_path(root)).st_mode) == 0o600
    finally:
        server.close()
    assert not client.socket_path(root).exists()


def test_several_requests_on_one_connection_and_bad_lines(served):
    root, _ = served
    with client.connect(client.socket_path(root), timeout=5) as sock:
        sock.sendall(b'{"op": "echo", "args": {"n": 1}}\nnot json\n{"op": 7}\n')
        reader = client.LineReader(sock)
        answers = [json.loads(reader.read_line()) for _ in range(3)]
    assert answers[0] == {"ok": True, "result": {"args": {"n": 1}, "text": "naïve ☕"}}
    assert answers[1]["ok"] is False and "bad request" in answers[1]["error"]
    assert answers[2]["ok"] is False


def test_peer_credentials():
    if sys.platform.startswith("linux"):
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with left, right:
            assert peer_uid(left) == os.geteuid()
    assert peer_allowed(os.geteuid())
    assert not peer_allowed(4242, own_uid=1000)
    assert peer_allowed(None)  # platforms without peer credentials rely on the 0600 mode


def test_server_refuses_another_uid(served, monkeypatch):
    root, _ = served
    # Pretend the kernel reported someone else at the other end of the socket.
    monkeypatch.setattr(server_mod, "peer_uid", lambda conn: os.geteuid() + 1)
    with pytest.raises(DaemonError, match="only its owner"):
        client.request(root, "echo")


def test_refusal_sent_before_the_request_is_still_read(served, monkeypatch):
    # The server answers a refused peer without reading and closes; when that happens
    # before the client has sent its request, the send meets a closed socket. The
    # refusal is already in the client's buffer and is what the caller must see.
    root, _ = served
    monkeypatch.setattr(server_mod, "peer_uid", lambda conn: os.geteuid() + 1)
    real_connect = client.connect

    def connect_then_wait_for_the_close(path, timeout):
        sock = real_connect(path, timeout=timeout)
        assert sock.recv(1, socket.MSG_PEEK)  # the refusal has arrived
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # and the server has closed its end
            try:
                sock.sendall(b"\n" * 4096)
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.01)
        return sock

    monkeypatch.setattr(client, "connect", connect_then_wait_for_the_close)
    with pytest.raises(DaemonError, match="only its owner"):
        client.request(root, "echo")


def test_handle_message_shapes():
    assert handle_message(b'{"op": "echo"}', _dispatch)["ok"] is True
    bad = handle_message(b'{"op": "echo", "args": [1]}', _dispatch)
    assert bad == {"ok": False, "error": "bad request: 'args' must be an object",
                   "code": "bad_request"}
    assert handle_message(b'{"op": "missing", "args": {}}', _dispatch) == {
        "ok": False, "error": "no note matches None", "code": "note_not_found"}


def test_client_imports_only_the_standard_library():
    code = ("import sys, vaultmem.ipc.client\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'lancedb', 'numpy', "
            "'pyarrow', 'click', 'git') if m in sys.modules]\n"
            "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
