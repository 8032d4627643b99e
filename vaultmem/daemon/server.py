"""The daemon's query server: JSON lines over a Unix socket only its owner can use.

The socket is created under umask 0o177 (mode 0600 from birth, no window where others
could connect) and, on Linux, each connection's peer uid is checked with SO_PEERCRED,
so another local user cannot query or write memories even if the mode were loosened.
No TCP listener exists. Accepting blocks on a selector with a wake-up pipe: an idle
daemon uses no CPU here. The messages are those of `protocol`; this module only frames
them and turns exceptions into `{"ok": false, "error", "code"}`.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Callable

from vaultmem import errors
from vaultmem.errors import BadRequest, DaemonError, VaultmemError
from vaultmem.ipc.client import LineReader, ShortPath, encode_message

log = logging.getLogger("vaultmem.daemon")

# A connection that sends nothing for this long is dropped (a stuck or hostile client).
IDLE_CONNECTION_TIMEOUT = 300.0
REFUSED_DRAIN_SECONDS = 2.0  # how long a refused peer has to finish sending its request


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of `conn`, where the OS can tell."""
    if sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED"):
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid
    return None  # macOS/BSD: the 0600 mode of the socket is the guard


def peer_allowed(uid: int | None, own_uid: int | None = None) -> bool:
    """Only the daemon's own user may talk to it (unknown peers rely on the file mode)."""
    own_uid = os.geteuid() if own_uid is None else own_uid
    return uid is None or uid == own_uid


def error_response(exc: VaultmemError) -> dict:
    """`{"ok": false, "error", "code"}` for `exc`; a class defined outside `vaultmem.errors`
    travels as its nearest public ancestor (the client knows only those codes)."""
    public = errors.public_errors()
    code = next(klass.code for klass in type(exc).__mro__ if klass in public)
    return {"ok": False, "error": str(exc), "code": code}


def handle_message(line: bytes, dispatch: Callable[..., object]) -> dict:
    """Decode one request line, run it through `dispatch(op, args[, clock=])`, build the
    response. `clock` (the caller's VAULTMEM_NOW) is passed only when the request has one."""
    try:
        request = json.loads(line)
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            raise ValueError("a request is an object with a string 'op'")
        args = request.get("args") or {}
        if not isinstance(args, dict):
            raise ValueError("'args' must be an object")
    except ValueError as exc:
        return error_response(BadRequest(f"bad request: {exc}"))
    extra = {"clock": request["clock"]} if request.get("clock") else {}
    return answered(request["op"], lambda: dispatch(request["op"], args, **extra))


def answered(op: str, run: Callable[[], object]) -> dict:
    """`{"ok": true, "result"}` of `run()`, or its failure as `error_response` gives it; any
    other exception is logged and answered as a DaemonError (the daemon outlives it)."""
    try:
        return {"ok": True, "result": run()}
    except VaultmemError as exc:
        return error_response(exc)
    except Exception as exc:  # the daemon must survive any failing request
        log.exception("request %r failed", op)
        return error_response(DaemonError(f"{type(exc).__name__}: {exc}"))


class SocketServer:
    """Serves `dispatch(op, args)` on `path` until `close()`; one thread per connection."""

    def __init__(self, path: Path, dispatch: Callable[[str, dict], object]):
        self.path = Path(path)
        self.dispatch = dispatch
        self._sock: socket.socket | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def bind(self) -> None:
        """Create the socket (the caller holds the daemon lock, so an old file is stale)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            with ShortPath(self.path) as address:
                sock.bind(address)
        except OSError as exc:
            sock.close()
            raise DaemonError(f"cannot listen on {self.path}: {exc}") from exc
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        sock.setblocking(False)
        self._sock = sock

    def start(self) -> None:
        if self._sock is None:
            self.bind()
        self._thread = threading.Thread(target=self._serve, name="vaultmem-server", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self._sock:
                        self._accept()
        finally:
            selector.close()

    def _accept(self) -> None:
        try:
            conn, _ = self._sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.warning("accept failed: %s", exc)
            return
        threading.Thread(target=self._handle, args=(conn,), name="vaultmem-conn",
                         daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.setblocking(True)
            uid = peer_uid(conn)
            if not peer_allowed(uid):
                self._refuse(conn, uid)
                return
            conn.settimeout(IDLE_CONNECTION_TIMEOUT)
            reader = LineReader(conn)
            while True:
                try:
                    line = reader.read_line()
                except (OSError, DaemonError):
                    return
                if not line.strip():
                    return
                if not self._send(conn, handle_message(line, self.dispatch)):
                    return

    @staticmethod
    def _refuse(conn: socket.socket, uid) -> None:
        """Tell a peer that is not the owner so, then let it finish sending before closing:
        closed at once, the socket would turn a request still on its way into a broken pipe
        on the peer's side, and the peer would never read why it was refused."""
        log.warning("refused a connection from uid %s", uid)
        SocketServer._send(conn, error_response(DaemonError("this daemon serves only its owner")))
        try:
            conn.shutdown(socket.SHUT_WR)
            conn.settimeout(REFUSED_DRAIN_SECONDS)
            for _ in range(16):  # what it sends is read and dropped, 64 KiB at most
                if not conn.recv(4096):
                    break
        except OSError:
            pass

    @staticmethod
    def _send(conn: socket.socket, response: dict) -> bool:
        try:
            conn.sendall(encode_message(response))
            return True
        except (TypeError, ValueError) as exc:  # a result that is not JSON-able
            fallback = error_response(DaemonError(f"unserialisable result: {exc}"))
            return SocketServer._send(conn, fallback)
        except OSError:
            return False

    def close(self) -> None:
        """Stop accepting, remove the socket file; requests in flight finish on their own."""
        self._stopping.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
