"""Talk to a vault's daemon over its Unix socket; standard library only.

The CLI and the MCP server ask the daemon first, because it keeps the model and the index
warm, and do the work in-process only when no daemon answers:

    >>> result = try_request(vault_root, "search", {"query": "tea", "k": 5})  # doctest: +SKIP
    >>> if result is None:                                  # no daemon: do it in-process
    ...     result = Memory(vault_root).search("tea", k=5)  # doctest: +SKIP

Importing this module must stay cheap: no torch, sentence-transformers or lancedb, not even
indirectly, so a query answered by the daemon costs a socket round trip and nothing more.

Protocol: one JSON object per line each way. Request `{"op": ..., "args": {...}}`, response
`{"ok": true, "result": ...}` or `{"ok": false, "error": "...", "code": "note_not_found"}`;
`vaultmem.ipc.protocol` lists the operations, their arguments and results.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
from pathlib import Path

from vaultmem import errors
from vaultmem.errors import DaemonError, NotServed
from vaultmem.ipc.protocol import OPS
from vaultmem.store.layout import STATE_DIR

SOCKET_NAME = "daemon.sock"
LOCK_NAME = "daemon.lock"
PID_NAME = "daemon.pid"
LOG_NAME = "daemon.log"
# Longest AF_UNIX path every platform accepts (Linux 108, macOS 104, both with the NUL).
_MAX_SUN_PATH = 103
# A request is one line; the largest legitimate one is an `add` of a long text.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
# Searches may wait for a reindex batch or the first model load in a fresh daemon.
DEFAULT_TIMEOUT = 60.0
_DEFAULT = object()


def _timeout_for(op: str, timeout, args: dict | None = None):
    # Operations flagged `long` (an LLM extraction, a full reindex) may rightly run for
    # minutes: by default the client waits for them, since once sent they cannot be redone
    # in-process. So does a search (or context) that asks the LLM to rerank: the endpoint's own
    # `[llm] timeout` bounds it, and a small local model takes 20-60 s.
    if timeout is _DEFAULT:
        if op in OPS and OPS[op].long or op in ("search", "context") and (args or {}).get("rerank") == "llm":
            return None
        return DEFAULT_TIMEOUT
    return timeout


def state_dir(vault_root) -> Path:
    return Path(vault_root) / STATE_DIR


def socket_path(vault_root) -> Path:
    """Where the vault's daemon listens: `<vault>/.vaultmem/daemon.sock`."""
    return state_dir(vault_root) / SOCKET_NAME


class ShortPath:
    """An address for `path` that fits in sockaddr_un, valid while the object is open.

    Deep vault paths (pytest's tmp folders, long home folders) overflow the ~104-byte limit;
    on Linux the folder is then reached through `/proc/self/fd/<fd of the folder>`.
    """

    def __init__(self, path: Path):
        self.path = path
        self._dir_fd = None

    def __enter__(self) -> str:
        full = os.fsencode(self.path)
        if len(full) <= _MAX_SUN_PATH:
            return str(self.path)
        if not sys.platform.startswith("linux"):
            raise DaemonError(f"socket path {self.path} is too long for a Unix socket; "
                              "move the vault to a shorter path")
        self._dir_fd = os.open(self.path.parent, os.O_RDONLY | getattr(os, "O_PATH", 0))
        return f"/proc/self/fd/{self._dir_fd}/{self.path.name}"

    def __exit__(self, *exc):
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None


def connect(path: Path, timeout: float) -> socket.socket:
    """A connected stream socket to `path`; raises OSError when nothing listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with ShortPath(path) as address:
            sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock


def encode_message(obj) -> bytes:
    # default=str matches the CLI's emit_json, so both sides print the same text.
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8") + b"\n"


class LineReader:
    """Reads newline-terminated messages from a socket, keeping what follows a newline."""

    def __init__(self, sock: socket.socket, limit: int = MAX_MESSAGE_BYTES):
        self.sock = sock
        self.limit = limit
        self._buffer = b""

    def read_line(self) -> bytes:
        """One message without its newline; b"" once the peer closed."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1:]
                return line
            if len(self._buffer) > self.limit:
                raise DaemonError(f"message larger than {self.limit} bytes")
            chunk = self.sock.recv(65536)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line
            self._buffer += chunk


def daemon_available(vault_root) -> bool:
    """True when a daemon listens on the vault's socket (a connect, no request)."""
    path = socket_path(resolve_root(vault_root))
    if not path.exists():
        return False
    try:
        connect(path, timeout=1.0).close()
    except (OSError, DaemonError):
        return False
    return True


def _error_from_response(response: dict) -> Exception:
    # The daemon's VaultmemError again, by its code, so the CLI's message and exit code do
    # not depend on which side did the work.
    message = response.get("error") or "the daemon reported an error"
    return errors.by_code(response.get("code")).from_wire(message)


class _NotConnected(Exception):
    """No daemon listens; nothing was sent."""


def resolve_root(vault_root) -> Path:
    """The vault folder for `vault_root`, which may be None (then $VAULTMEM_VAULT or the
    nearest vault upward, exactly as the in-process path finds it)."""
    if vault_root is not None and Path(vault_root).is_absolute():
        return Path(vault_root)
    from vaultmem.store.vault import find_vault  # stdlib-only module; imported only when needed

    return find_vault(vault_root, Path.cwd())


def _exchange(vault_root, op: str, args: dict | None, timeout: float | None):
    path = socket_path(resolve_root(vault_root))
    try:
        sock = connect(path, timeout=2.0 if timeout is None else min(timeout, 2.0))
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise _NotConnected(str(exc)) from exc
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            raise _NotConnected(str(exc)) from exc
        raise DaemonError(f"cannot reach the daemon at {path}: {exc}") from exc
    with sock:
        sock.settimeout(timeout)
        try:
            message = {"op": op, "args": args or {}}
            if os.environ.get("VAULTMEM_NOW"):  # a faked clock must match the daemon's
                message["clock"] = os.environ["VAULTMEM_NOW"]
            try:
                sock.sendall(encode_message(message))
            except (BrokenPipeError, ConnectionResetError):
                # The daemon may answer before reading (a refusal) and close at once;
                # its answer is still waiting in our receive buffer.
                pass
            line = LineReader(sock).read_line()
        except socket.timeout as exc:
            raise DaemonError(f"the daemon did not answer {op!r} within {timeout} s; "
                              "see .vaultmem/daemon.log or run `vaultmem daemon stop`") from exc
        except OSError as exc:
            raise DaemonError(f"the daemon dropped the connection during {op!r}: {exc}") from exc
    if not line:
        raise DaemonError(f"the daemon closed the connection without answering {op!r}")
    try:
        response = json.loads(line)
    except ValueError as exc:
        raise DaemonError(f"the daemon sent a malformed answer to {op!r}") from exc
    if not isinstance(response, dict):
        raise DaemonError(f"the daemon sent a malformed answer to {op!r}")
    return response


def request(vault_root, op: str, args: dict | None = None, timeout=_DEFAULT):
    """Send one request and return its result.

    `timeout` (seconds, None: no limit) defaults to DEFAULT_TIMEOUT, and to no limit for
    the operations `protocol` flags `long`.

    Raises `DaemonError` when no daemon answers or the exchange fails, and the daemon's own
    `VaultmemError` subclass (e.g. `NoteNotFound`) when the operation itself failed.
    """
    try:
        response = _exchange(vault_root, op, args, _timeout_for(op, timeout, args))
    except _NotConnected as exc:
        raise DaemonError(f"no daemon is running for {vault_root} ({exc}); "
                          "start one with `vaultmem daemon start`") from exc
    if response.get("ok"):
        return response.get("result")
    raise _error_from_response(response)


# Why `try_request` left the work to its caller (see its `why`).
NO_DAEMON_WANTED = "off"      # VAULTMEM_NO_DAEMON is set
NO_DAEMON_RUNNING = "none"    # nothing listens on the vault's socket


def try_request(vault_root, op: str, args: dict | None = None, timeout=_DEFAULT,
                why: list | None = None):
    """The daemon's result for `op`, or None when the caller should do the work in-process.

    `vault_root` may be the --vault option as given, or None (found like the API finds it).
    None means no daemon listens, or it cannot answer exactly as the caller would (an older
    daemon without `op`, another VAULTMEM_NOW, an index it is still building); nothing was
    done. Once a request was sent, failures raise instead, so that an `add` is never done
    twice: `DaemonError` for a broken exchange, the operation's own `VaultmemError` otherwise.
    Set VAULTMEM_NO_DAEMON=1 to always get None.

    `why`, a list, gets the reason appended when None is returned: NO_DAEMON_WANTED,
    NO_DAEMON_RUNNING, or the daemon's own message (`protocol.INDEXING_WARNING`, then how far
    the startup scan got, when its index is still being built).
    """
    if os.environ.get("VAULTMEM_NO_DAEMON"):
        _tell(why, NO_DAEMON_WANTED)
        return None
    try:
        response = _exchange(vault_root, op, args, _timeout_for(op, timeout, args))
    except _NotConnected:
        _tell(why, NO_DAEMON_RUNNING)
        return None
    if response.get("ok"):
        return response.get("result")
    error = _error_from_response(response)
    if isinstance(error, NotServed):
        _tell(why, str(error))
        return None  # the daemon cannot answer this exactly as in-process would
    raise error


def _tell(why: list | None, reason: str) -> None:
    if why is not None:
        why.append(reason)
