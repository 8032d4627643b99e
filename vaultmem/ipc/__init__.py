"""Talking to the running daemon: the line protocol and the client the CLI, the API and
the MCP server use.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "LOCK_NAME": "client",
    "LOG_NAME": "client",
    "LineReader": "client",
    "NO_DAEMON_RUNNING": "client",
    "PID_NAME": "client",
    "ShortPath": "client",
    "encode_message": "client",
    "request": "client",
    "socket_path": "client",
    "state_dir": "client",
    "try_request": "client",
    "INDEXING_WARNING": "protocol",
    "OPS": "protocol",
    "check": "protocol",
    "protocol": None,
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
