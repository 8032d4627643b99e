"""The background daemon: watches the vault, keeps the index current, answers queries.

Modules: `lock` (one daemon per vault), `watcher` (watchdog events coalesced), `worker`
(the indexing thread and its lock with queries), `inbox` (transcripts to extract),
`server` (the Unix socket), `runner` (the process), `control` (start/stop/status from the
CLI), `service` (systemd and launchd units). Nothing in vaultmem imports this package: the
table of operations the daemon serves is `vaultmem.protocol` (stdlib only), which the
server shares with `vaultmem.client` (how the CLI, the MCP server and `Memory` reach it).
"""
