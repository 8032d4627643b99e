"""vaultmem's MCP server on streamable HTTP, for agents on other machines or in containers.

    $ vaultmem mcp token --user alice        # prints alice's token, once
    $ vaultmem mcp --http                    # http://127.0.0.1:8765/mcp

The same tools and resources as on stdio (`vaultmem.agents.mcp_server`), served with the SDK's
streamable HTTP app under uvicorn. Every request needs `Authorization: Bearer <token>`
(`vaultmem.agents.mcp_tokens`); the SDK's bearer middleware answers 401 with `WWW-Authenticate:
Bearer` otherwise, and binds each session to the token that opened it. The token names the
user every call acts for. There is no way to serve without a token, on loopback either:
any local user and any web page's script can reach a loopback port (the daemon's socket,
by contrast, is its owner's alone). Plain HTTP beyond loopback carries tokens and memories
in clear: put TLS in front (a reverse proxy such as Caddy or nginx).

The socket is bound before uvicorn starts, so a taken port or a bad address is an error
here, in the caller's thread, not a line in a log.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading

from vaultmem.agents import mcp_tokens
from vaultmem.errors import ConfigError, VaultmemError
from vaultmem.store.config import MCP_DEFAULT_PORT, parse_address

log = logging.getLogger("vaultmem.mcp")

ENDPOINT = "/mcp"
# A stop waits this long for open streams (an idle client's GET stream stays open) to end.
GRACEFUL_SECONDS = 3


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach `host` (a name other than localhost counts as not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{ENDPOINT}"


def require_tokens(vault_root, host: str) -> None:
    """Refuse to serve before any token exists: nobody could connect, or anybody could."""
    if mcp_tokens.any_for(vault_root, "mcp"):
        return
    if is_loopback(host):
        raise VaultmemError("no MCP token yet — run `vaultmem mcp token --user NAME` (it prints the "
                            "token clients send as `Authorization: Bearer <token>`), then start "
                            "the server (or the daemon) again")
    raise VaultmemError(f"refusing to serve {host} without a token — run `vaultmem mcp token "
                        "--user NAME` first, and put TLS in front (a reverse proxy such as Caddy "
                        "or nginx): plain HTTP beyond this machine carries tokens and memories "
                        "in clear")


class VaultTokens:
    """The SDK's `TokenVerifier` over the vault's token file, read on every request so that
    a token made or revoked while the server runs counts at once."""

    def __init__(self, vault_root):
        self.root = vault_root

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken

        try:
            user = mcp_tokens.user_for(self.root, token)
        except ConfigError as exc:
            log.error("%s", exc)
            return None
        return AccessToken(token=token, client_id=user, scopes=[]) if user else None


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        other = f"{host}:{port + 1 if port else MCP_DEFAULT_PORT}"
        raise VaultmemError(f"cannot listen on {host}:{port}: {exc.strerror or exc} — pick another "
                            f"address, e.g. --http {other}") from exc


class HttpServer:
    """The vault's MCP server on `address`: `run()` in the foreground, or `start()`/`stop()`
    on a thread of its own (the daemon). `backend`: a `mcp_server.Backend` to serve
    (default: the vault's, as `vaultmem mcp` on stdio)."""

    def __init__(self, vault_root, address: str, backend=None):
        host, port = parse_address(address)
        require_tokens(vault_root, host)
        import uvicorn
        from mcp.server.auth.settings import AuthSettings

        from vaultmem.agents.mcp_server import build_server

        # Resource-server mode only: the SDK checks bearer tokens and sends 401s; there is no
        # OAuth authorization server here (tokens come from `vaultmem mcp token`), so the
        # issuer URL it requires is never published.
        auth = AuthSettings(issuer_url=url(host, port).removesuffix(ENDPOINT), resource_server_url=None)
        server = build_server(vault_root, backend=backend, auth=auth,
                              token_verifier=VaultTokens(vault_root))
        app = server.streamable_http_app(host=host)  # loopback: with DNS-rebinding protection
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                                timeout_graceful_shutdown=GRACEFUL_SECONDS)
        self._uvicorn = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self.host = host
        self.sock = _bind(host, port)  # last: nothing after it can fail and leave it open
        self.port = self.sock.getsockname()[1]

    @property
    def url(self) -> str:
        return url(self.host, self.port)

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM (in the main thread) or `stop()`."""
        try:
            self._uvicorn.run(sockets=[self.sock])
        finally:
            self.sock.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="vaultmem-mcp-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting and end the server; open sessions get `GRACEFUL_SECONDS`."""
        self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(GRACEFUL_SECONDS + 5)
            if self._thread.is_alive():
                log.warning("the MCP HTTP server did not stop in time")
