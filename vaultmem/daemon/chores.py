"""Work the daemon does once things are quiet: commit the user's edits, re-export agent
memory files, and run gc on its schedule. Each chore is guarded: a failure is logged once
and never stops indexing.

A commit of the user's edits never takes in vaultmem's own changes (`vaultmem.history.change`):
paths a change is still writing wait until it is done, and a change whose commit failed
(or whose process was killed) is committed as vaultmem's, with its own message.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("vaultmem.daemon")

# How often a change of vaultmem's whose commit failed is tried again.
RETRY_SECONDS = 60.0


class Chores:
    """Deadlines for the quiet-time work of one daemon; `run_due()` does what is due.

    `edited(rels)`: the user changed these memory notes (committed `commit_quiet` seconds
    after the last edit, all in one commit). `changed()`: the index changed (agent memory
    files are re-exported after the same quiet time, when `export_on_change` is set).
    """

    def __init__(self, memory, gate, clock=time.monotonic):
        config = memory.vault.config
        self.memory = memory
        self.gate = gate
        self._clock = clock
        self.quiet = config.commit_quiet_seconds
        self.export_format = config.export_on_change
        hours = config.gc_schedule_hours
        self.gc_period = hours * 3600 if hours > 0 else None
        self._next_gc = clock() + self.gc_period if self.gc_period else None
        self._edits: dict[str, float] = {}
        self._export_after: float | None = None
        self._retry_at: float | None = None
        self._logged: set[str] = set()

    @property
    def edits_waiting(self) -> int:
        return len(self._edits)

    def edited(self, rels) -> None:
        now = self._clock()
        for rel in rels:
            self._edits[rel] = now

    def changed(self) -> None:
        if self.export_format:
            self._export_after = self._clock() + self.quiet

    def next_due(self) -> float | None:
        """Seconds until the next chore is due (None when nothing is scheduled)."""
        now = self._clock()
        due = []
        if self._edits:
            due.append(max(self._edits.values()) + self.quiet)
        if self._export_after is not None:
            due.append(self._export_after)
        if self._next_gc is not None:
            due.append(self._next_gc)
        if self._retry_at is not None:
            due.append(self._retry_at)
        return max(0.0, min(due) - now) if due else None

    def run_due(self) -> None:
        now = self._clock()
        if self._edits and max(self._edits.values()) + self.quiet <= now:
            rels, self._edits = sorted(self._edits), {}
            self._commit(rels)
        elif self._retry_at is not None and self._retry_at <= now:
            self._commit([])
        if self._next_gc is not None and self._next_gc <= now:
            self._next_gc = now + self.gc_period
            self._guarded("gc", self._gc)
        if self._export_after is not None and self._export_after <= now:
            self._export_after = None
            self._guarded("export", self._export)

    def _commit(self, rels) -> None:
        from vaultmem.history.change import commit_journaled, held_paths
        from vaultmem.history.git import commit_user_edits

        vault = self.memory.vault
        self._retry_at = None
        try:
            for done in commit_journaled(vault):
                log.info("committed a change of vaultmem's kept from before: %s", done["message"])
            busy, waiting = held_paths(vault)
        except Exception as exc:  # git trouble must never stop indexing
            self._log_once(f"journal {type(exc).__name__}: {exc}", "could not commit vaultmem's kept "
                           "changes: %s", exc)
            busy, waiting = set(), set()
        if waiting:
            self._retry_at = self._clock() + RETRY_SECONDS
        # vaultmem is still writing these: its change commits them; look again afterwards.
        self.edited([rel for rel in rels if rel in busy])
        rels = [rel for rel in rels if rel not in busy and rel not in waiting]
        if not rels:
            return
        try:
            sha = commit_user_edits(vault, rels)
        except Exception as exc:  # git trouble must never stop indexing
            self._log_once(f"commit {type(exc).__name__}: {exc}",
                           "could not commit edits to %s: %s", ", ".join(rels[:3]), exc)
            return
        if sha:
            log.info("committed user edits (%s)", sha[:10])

    def _gc(self) -> None:
        with self.gate.write():
            result = self.memory.gc()
        if result.get("archived"):
            log.info("gc archived %d memories", len(result["archived"]))

    def _export(self) -> None:
        from vaultmem.memory.export import export_if_configured

        with self.gate.write():
            results = export_if_configured(self.memory)
        files = [f for result in results for f in result.get("files", [])]
        log.info("exported agent memory files: %s", ", ".join(map(str, files)))

    def _guarded(self, name: str, chore) -> None:
        try:
            chore()
        except Exception as exc:  # a chore must never stop the daemon
            self._log_once(f"{name} {type(exc).__name__}: {exc}", "%s failed: %s", name, exc)

    def _log_once(self, key: str, message: str, *args) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message, *args)
