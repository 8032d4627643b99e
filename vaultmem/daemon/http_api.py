"""The Obsidian plugin's door into the daemon: a small JSON API on 127.0.0.1.

    POST /v1/search   Authorization: Bearer <token>   {"query": "tea", "scope": "notes"}
      200 {"ok": true, "result": {"query": "tea", "hits": [...]}}
      401 {"ok": false, "error": "...", "code": "unauthorized"}

Each operation is the socket's (`vaultmem.ipc.protocol`), run the same way (`Handlers.dispatch`:
the gate, the startup scan's wait and warning), for the plugin's few: `PLUGIN_OPS`. Nothing
else is served: no extract, reindex, repair or shutdown from a web view.

Who may ask. Any local program and any web page's script can reach a loopback port, so:
- every request needs a token made by `vaultmem obsidian token` (`mcp_tokens`, client
  "obsidian": an MCP token does not open it, nor the other way round); it acts for one user,
  and a `user` naming anyone else is refused exactly as MCP refuses it;
- a Host header other than this loopback address is refused (a DNS-rebinding page would
  send its own name), and so is a request a web page sent (an `Origin` of http(s)://):
  Obsidian's `requestUrl` sends neither;
- no CORS header is ever sent, so a browser never lets a page read an answer.

The daemon serves this while some user has an Obsidian token (`Daemon.obsidian_api`),
and writes where it listens to `.vaultmem/obsidian.json`, which the plugin reads: the
port is one the OS picked unless `[obsidian] port` names one. Standard library only.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from vaultmem import __version__
from vaultmem.agents import mcp_tokens
from vaultmem.daemon.server import answered
from vaultmem.errors import ConfigError, DaemonError, VaultmemError
from vaultmem.ipc import protocol
from vaultmem.store.layout import STATE_DIR

log = logging.getLogger("vaultmem.daemon")

HOST = "127.0.0.1"
PREFIX = "/v1/"
STATE_NAME = "obsidian.json"
CLIENT = "obsidian"
# What the plugin asks: its panes' reads, and the review's changes (each one git commit).
PLUGIN_OPS = frozenset({"status", "search", "context", "review", "related", "correct", "forget",
                        "rollback"})
MAX_BODY = 1 << 20
# An idle keep-alive connection is closed after this long (Electron keeps them open).
IDLE_SECONDS = 30.0
REFUSED_TOKEN = ("the vaultmem daemon refused this token — run `vaultmem obsidian token --new` "
                 "in the vault and paste the new token in Obsidian → Settings → vaultmem")
# The HTTP status a refusal or a failure of each kind is answered with.
_STATUS_OF = {"bad_request": 400, "unauthorized": 401, "forbidden": 403, "note_not_found": 404,
              "unknown_op": 404, "not_served": 503, "daemon_error": 500}


def state_path(vault_root) -> Path:
    return Path(vault_root) / STATE_DIR / STATE_NAME


def loopback_host(host_header: str | None, port: int) -> bool:
    """Whether a Host header names this server by a loopback name (no header: HTTP/1.0)."""
    if not host_header:
        return True
    names = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    return host_header.strip().lower() in names


def _refusal(code: str, message: str) -> tuple[int, dict]:
    return _STATUS_OF[code], {"ok": False, "error": message, "code": code}


class PluginApi:
    """The plugin's HTTP server over `dispatch(op, args)` (the daemon's `serve_plugin`).
    `start()` binds and serves on its own thread; `stop()` closes it and removes the file
    telling the plugin where it is."""

    def __init__(self, vault_root, dispatch: Callable[[str, dict], object], port: int = 0):
        self.root = Path(vault_root)
        self.dispatch = dispatch
        if not 0 <= port <= 65535:
            raise ConfigError(f"[obsidian] port = {port} in .vaultmem/config.toml: give 1 to 65535, "
                              "or 0 for a free one")
        try:
            self.httpd = ThreadingHTTPServer((HOST, port), _handler_for(self))
        except OSError as exc:
            raise DaemonError(f"cannot serve the Obsidian plugin on {HOST}:{port} ({exc.strerror}) — "
                              "set another `[obsidian] port` in .vaultmem/config.toml, or 0 for a "
                              "free one") from exc
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        from vaultmem.store.files import atomic_write

        self._thread = threading.Thread(target=self.httpd.serve_forever, name="vaultmem-obsidian",
                                        daemon=True)
        self._thread.start()
        where = {"url": self.url, "port": self.port, "pid": os.getpid(), "version": __version__}
        atomic_write(state_path(self.root), json.dumps(where, indent=2) + "\n", mode=0o600)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        try:  # another daemon's file (a later start) is left alone
            if json.loads(state_path(self.root).read_text(encoding="utf-8")).get("pid") == os.getpid():
                state_path(self.root).unlink()
        except (OSError, ValueError):
            pass

    # --- one request --------------------------------------------------------------------
    def answer(self, path: str, headers, body: bytes) -> tuple[int, dict]:
        """(HTTP status, JSON body) for a POST to `path`."""
        if not loopback_host(headers.get("Host"), self.port):
            return _refusal("forbidden", "refused: this API answers only to 127.0.0.1 or localhost")
        origin = (headers.get("Origin") or "").lower()
        if origin.startswith(("http://", "https://")):
            return _refusal("forbidden", "refused: a web page may not call vaultmem's Obsidian API")
        user = self._user(headers.get("Authorization") or "")
        if user is None:
            return _refusal("unauthorized", REFUSED_TOKEN)
        if not path.startswith(PREFIX):
            return _refusal("unknown_op", f"no such path {path!r}: POST /v1/<operation>")
        op = path[len(PREFIX):]
        if op not in PLUGIN_OPS:
            if op in protocol.OPS:
                return _refusal("forbidden", f"{op!r} is not served to the Obsidian plugin: use "
                                             "vaultmem's command line for it")
            return _refusal("unknown_op", f"unknown operation {op!r}; the plugin's API serves "
                                          f"{', '.join(sorted(PLUGIN_OPS))}")
        try:
            args = json.loads(body or b"{}")
            if not isinstance(args, dict):
                raise ValueError("the body must be a JSON object of arguments")
        except ValueError as exc:
            return _refusal("bad_request", f"bad request: {exc}")
        try:
            args = self._scoped(op, args, user)
        except VaultmemError as exc:
            return _refusal("forbidden", str(exc))
        response = answered(op, lambda: self.dispatch(op, args))
        if not response["ok"]:
            return _STATUS_OF.get(response["code"], 422), response
        if op == "status":
            response["result"] = dict(response["result"], user=user)
        return 200, response

    def _user(self, authorization: str) -> str | None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        try:
            return mcp_tokens.user_for(self.root, token.strip(), CLIENT)
        except ConfigError as exc:
            log.error("%s", exc)
            return None

    @staticmethod
    def _scoped(op: str, args: dict, user: str) -> dict:
        """`args` acting for the token's user (a `user` naming anyone else is refused)."""
        if protocol.OPS[op].arg("user") is None:
            return args
        return dict(args, user=mcp_tokens.acting_user(user, args.get("user")))


def _handler_for(api: PluginApi):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "vaultmem"
        timeout = IDLE_SECONDS

        def do_POST(self):  # noqa: N802 (http.server's name)
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self._send(*_refusal("bad_request", "a request body needs a Content-Length of 0 to "
                                                    f"{MAX_BODY} bytes"), close=True)
                return
            body = self.rfile.read(length) if length else b""
            self._send(*api.answer(self.path, self.headers, body))

        def do_GET(self):  # noqa: N802
            self._send(405, {"ok": False, "error": "POST /v1/<operation> with a JSON body",
                             "code": "bad_request"})

        do_OPTIONS = do_PUT = do_DELETE = do_GET  # a CORS preflight gets no CORS headers

        def _send(self, status: int, payload: dict, close: bool = False) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):  # quiet: the daemon's log has what matters
            log.debug("obsidian api: " + format, *args)

    return Handler
