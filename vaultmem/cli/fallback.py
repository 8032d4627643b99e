"""What a command does when the vault's daemon does not answer it: the work in-process, as
always, plus what a person needs to know about that.

- No daemon runs and `[daemon] autostart = true`: one is started in the background, after
  this command's own work (so the two never write the index at once), for the next ones.
- No daemon runs and the command loads the embedding model: one line on stderr, once per
  vault (a marker in `.vaultmem/`), saying why it takes seconds and how to make it instant.
  Never with --json, never under VAULTMEM_NO_DAEMON (the caller chose in-process).
- The daemon is still building its index at startup: the answer, from the index built so
  far, carries the daemon's warning that it may miss recent notes.
"""

from __future__ import annotations

import click

from vaultmem.ipc.client import NO_DAEMON_RUNNING, state_dir
from vaultmem.ipc.protocol import INDEXING_WARNING, OPS

HINT_MARKER = "daemon-hint-shown"
# The operations whose in-process run loads the embedding model (seconds on a cold start).
LOADS_MODEL = frozenset({"search", "context", "add", "extract", "correct"})
# The operations that search once and end: their snapshot of the index reads the hits'
# text for the candidates alone (`ChunkIndex.hits_on_demand`), not for every chunk.
ONE_SEARCH = frozenset({"search", "context"})
COLD_HINT = ("vaultmem: no daemon running, loading the model (a few seconds); "
             "`vaultmem daemon start` or `[daemon] autostart = true` in .vaultmem/config.toml "
             "makes the next commands instant")


def in_process(ctx, op: str, args: dict, why: str | None) -> dict:
    """`Memory.<op>(**args)` run here; `why`: the reason the daemon did not answer
    (`client.try_request`'s)."""
    memory = ctx.memory()
    if op in ONE_SEARCH:
        memory.indexer.index.hits_on_demand = True
    no_daemon = why == NO_DAEMON_RUNNING
    autostart = no_daemon and memory.vault.config.autostart
    quiet = _json_output()
    if no_daemon and not autostart and not quiet and op in LOADS_MODEL:
        _once(memory.vault.root, COLD_HINT)
    try:
        result = getattr(memory, op)(**args)
    finally:
        if autostart:
            from vaultmem.daemon.control import spawn_daemon

            pid = spawn_daemon(memory.vault.root)
            if pid is not None and not quiet:
                _once(memory.vault.root, f"vaultmem: started the daemon (pid {pid}) for the "
                                         "next commands; `vaultmem daemon stop` stops it")
    if why and why.startswith(INDEXING_WARNING) and OPS[op].read_only and isinstance(result, dict):
        from vaultmem.history.change import add_warning

        add_warning(result, why)
    return result


def _json_output() -> bool:
    click_ctx = click.get_current_context(silent=True)
    return bool(click_ctx and click_ctx.params.get("as_json"))


def _once(vault_root, line: str) -> None:
    marker = state_dir(vault_root) / HINT_MARKER
    if marker.exists():
        return
    click.echo(line, err=True)
    try:
        marker.touch()
    except OSError:
        pass  # a read-only vault: the hint shows again, which is better than failing
