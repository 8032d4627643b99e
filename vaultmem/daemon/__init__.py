"""The background daemon: watches the vault, keeps the index current, answers queries.

Modules: `lock` (one daemon per vault), `watcher` (watchdog events coalesced), `worker`
(the indexing thread and its lock with queries), `inbox` (transcripts to extract),
`server` (the Unix socket), `runner` (the process), `handlers` (its answers to requests),
`control` (start/stop/status from the CLI), `service` (systemd and launchd units). Only
the CLI imports this package: the table of operations the daemon serves is
`vaultmem.ipc.protocol` (stdlib only), which the server shares with `vaultmem.ipc.client`
(how the CLI, the MCP server and `Memory` reach it).
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "daemon_status": "control",
    "spawn_daemon": "control",
    "start_daemon": "control",
    "stop_daemon": "control",
    "drop": "inbox",
    "run_daemon": "runner",
    "install_service": "service",
    "uninstall_service": "service",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
