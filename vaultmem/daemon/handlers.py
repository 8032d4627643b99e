"""The daemon's answers to requests: each operation of the protocol table, run inside the gate.

`dispatch` checks a request against `vaultmem.ipc.protocol`, runs it on the warm `Memory`
(or the daemon's own `status`, `flush`, `shutdown`), waits a little for an index still
being built and says when an answer may miss recent notes; `serve_mcp` does the same for
the MCP HTTP server's tools. `Daemon` (`runner.py`, the process) holds what these read.
"""

from __future__ import annotations

import os
import threading
import time

from vaultmem import __version__
from vaultmem.daemon.worker import QUERY_WAIT_SECONDS, GateBusy
from vaultmem.errors import NotServed
from vaultmem.history.change import add_warning
from vaultmem.ipc import protocol
from vaultmem.ipc.client import LOG_NAME, state_dir

# How long a search waits for the index while the daemon builds it from scratch, and for
# the startup scan to end before it is answered from the index as it is, with a warning.
READ_WAIT_DURING_BUILD = 3.0


class Handlers:
    """What `Daemon` answers; its attributes (`memory`, `gate`, `worker`, `handlers`, ...)
    are set by `Daemon.__init__`."""

    def serve_mcp(self, op: str, args: dict):
        """An MCP tool's operation, run as a socket request is (the gate, the scan); one
        outside the protocol table (history) inside the gate too, never beside a batch."""
        if op in protocol.OPS:
            return self.serve_plugin(op, args)
        busy_with = self.worker.rebuilding or self.state
        with self.gate.query(timeout=QUERY_WAIT_SECONDS, busy_with=busy_with):
            return getattr(self.memory, op)(**args)

    def serve_plugin(self, op: str, args: dict):
        """A request of the protocol table from the Obsidian plugin (`http_api`) or an MCP
        tool, run as a socket request is, on this process's clock."""
        return self.dispatch(op, args, clock=os.environ.get("VAULTMEM_NOW"))

    def status(self) -> dict:
        worker = self.worker
        return {
            "running": True, "pid": os.getpid(), "vault": str(self.root), "version": __version__,
            "state": self.state, "started": self.started_iso,
            "uptime_seconds": round(time.monotonic() - self.started_at, 1),
            "notes_indexed": worker.notes_indexed,
            "queue": len(self.coalescer) + worker.in_flight + len(self.inbox),
            "queue_detail": {"events": len(self.coalescer), "indexing": worker.in_flight,
                             "inbox": len(self.inbox), "edits_to_commit": self.chores.edits_waiting},
            "progress": list(worker.progress) if worker.progress else None,
            "rebuilding": worker.rebuilding, "scan": worker.scan.to_dict(),
            "last_error": worker.last_error, "last_sync": worker.last_sync,
            "model_loaded": self.memory.model_loaded, "model": self.vault.config.model,
            "socket": str(self.server.path), "log": str(state_dir(self.root) / LOG_NAME),
            "mcp_http": self._mcp_http_status(), "obsidian": self._plugin_api_status(),
        }

    def _plugin_api_status(self) -> dict | None:
        if self.plugin_api is not None:
            return {"url": self.plugin_api.url}
        return {"error": self.plugin_api_error} if self.plugin_api_error else None

    def _mcp_http_status(self) -> dict | None:
        if self.mcp_http is not None:
            return {"url": self.mcp_http.url}
        return {"error": self.mcp_http_error} if self.mcp_http_error else None

    def flush(self, timeout: float = 30.0) -> dict:
        return dict(self.status(), idle=self.wait_idle(float(timeout)))

    def shutdown(self) -> dict:
        threading.Thread(target=self.stop, daemon=True).start()
        return {"stopping": True, "pid": os.getpid()}

    def dispatch(self, name: str, args: dict, clock: str | None = None):
        """Run one request of the protocol table (`protocol.check` rejects anything else)."""
        op = protocol.check(name, args)
        if not op.memory:
            return self.handlers[name](**args)
        if op.clocked and clock != os.environ.get("VAULTMEM_NOW"):
            # The caller fakes the clock differently (tests, benchmarks): answering here
            # would not give the output it gets in-process, so it must do the work itself.
            raise NotServed("the daemon runs on another clock (VAULTMEM_NOW)")
        if name == "reindex" and args.get("full"):
            return self.worker.rebuild(lambda: self.handlers["reindex"](**args), self.state)
        scan = self.worker.scan
        deadline = time.monotonic() + READ_WAIT_DURING_BUILD
        if op.read_only:  # an index still catching up would answer differently: wait a little
            scan.wait(READ_WAIT_DURING_BUILD)
        # A whole-index build holds the index for minutes: readers are better served by
        # doing the work themselves (they see what is built so far) than by waiting.
        rebuilding = self.worker.rebuilding
        wait = QUERY_WAIT_SECONDS
        if op.read_only and rebuilding:
            wait = max(0.0, deadline - time.monotonic())
        try:
            with self.gate.query(timeout=wait, busy_with=rebuilding or self.state):
                # Read inside the gate, where no batch is being written: if the scan is
                # over now, this answer saw all of it.
                partial = op.read_only and scan.behind
                result = self.handlers[name](**args)
        except GateBusy as exc:
            if op.read_only:
                # The caller answers from the index as built so far: tell it so.
                raise NotServed(scan.warning() if scan.behind else str(exc)) from None
            raise
        if partial and isinstance(result, dict):
            add_warning(result, scan.warning())
        return result
