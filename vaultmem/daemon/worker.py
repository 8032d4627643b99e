"""The daemon's one indexing thread: reconcile at startup, then index coalesced batches.

Only this thread writes to the index. It works in small batches and takes the `Gate`
per batch, so a query arriving during a long catch-up waits for one batch, not for all.
`StartupScan` says how far the startup reconciliation got, so that a query answered
before it ends can say its index was still being brought up to date.

Test-only: VAULTMEM_TEST_SCAN_DELAY (seconds per note, default 0) slows the startup scan's
indexing, outside the gate, so that a test can query a daemon reliably in mid-scan.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from contextlib import contextmanager
from datetime import datetime

from vaultmem.errors import DaemonError
from vaultmem.ipc.protocol import INDEXING_WARNING
from vaultmem.store.limits import MAX_NOTE_BYTES

log = logging.getLogger("vaultmem.daemon")

# Notes per `Indexer.sync` call: about half a second of embedding on a laptop CPU, the
# longest a query waits behind the indexer.
BATCH_NOTES = 32
# Notes per sync call for a bulk arrival (a pull bringing hundreds of notes): one embed call
# and one index write for all of them (`ingest.EMBED_BATCH_CHUNKS` chunks), not one per 32.
# Queries wait behind it longer (seconds), once per pull.
BULK_BATCH_NOTES = 512
# How long a query waits for the index before it is told the daemon is busy.
QUERY_WAIT_SECONDS = 45.0
SCAN_DELAY_ENV = "VAULTMEM_TEST_SCAN_DELAY"
_TOO_LARGE = "over MAX_NOTE_BYTES"  # the one fingerprint of every note over the limit


class GateBusy(DaemonError):
    """A query waited too long for the index (the daemon is building or catching up)."""


class Gate:
    """Mutual exclusion around the shared `Memory`, queries first.

    Queries (`with gate.query():`) and index writes (`with gate.write():`) never overlap;
    a waiting query goes before the indexer's next batch, so queries never wait behind
    more than the batch in flight.
    """

    def __init__(self):
        self._cond = threading.Condition()
        self._busy = False
        self._queries_waiting = 0

    @contextmanager
    def query(self, timeout: float | None = QUERY_WAIT_SECONDS, busy_with: str = "indexing"):
        with self._cond:
            self._queries_waiting += 1
            try:
                free = self._cond.wait_for(lambda: not self._busy, timeout)
            finally:
                self._queries_waiting -= 1
            if not free:
                raise GateBusy(f"the daemon is busy ({busy_with}); try again in a moment "
                               "or see `vaultmem daemon status`")
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def write(self):
        with self._cond:
            self._cond.wait_for(lambda: not self._busy and self._queries_waiting == 0)
            self._busy = True
        try:
            yield
        finally:
            self._release()

    def close(self, timeout: float) -> bool:
        """Wait for the operation in flight, then hold the gate for good (shutdown)."""
        with self._cond:
            done = self._cond.wait_for(lambda: not self._busy, timeout)
            self._busy = True
            return done

    def _release(self):
        with self._cond:
            self._busy = False
            self._cond.notify_all()


class StartupScan:
    """How far the daemon's startup scan (the vault reconciled with the index) got.

    `phase`: "not started" (a Daemon whose worker never runs), "pending" (the daemon runs,
    its worker has not begun), "listing" (comparing files with the index), "checking"
    (`checked` of `total` changed or deleted notes synced), "building" (a whole-index
    build, `checked` of `total` notes), then "done" (also after a failed or stopped scan:
    nothing is waiting for it any more).

    >>> scan = StartupScan(); scan.begin(); scan.checking(431); scan.checked = 120
    >>> scan.warning()
    'the daemon is still indexing the vault (120 of 431 notes checked): results may miss recent notes'
    """

    def __init__(self):
        self.phase = "not started"
        self.checked = 0
        self.total: int | None = None
        self.seconds: float | None = None
        self._started: float | None = None
        self._embedding_since: tuple[float, int] | None = None
        self._done = threading.Event()

    @property
    def running(self) -> bool:
        return self.phase not in ("not started", "done")

    @property
    def behind(self) -> bool:
        """The index may still lag the vault (false once every note to check is synced)."""
        return self.running and not (self.phase == "checking" and self.checked >= (self.total or 0))

    def begin(self) -> None:
        self.phase, self._started = "pending", time.monotonic()

    def listing(self) -> None:
        self.phase = "listing"

    def checking(self, total: int) -> None:
        self.phase, self.checked, self.total = "checking", 0, total

    def building(self) -> None:
        self.phase, self.checked, self.total = "building", 0, None
        self._embedding_since = None

    def embedded(self, done: int, total: int) -> None:
        """A whole-index build's progress: `done` of `total` chunks embedded (the rate is
        timed from the first report, after the model's load and the vault's reading)."""
        if self._embedding_since is None:
            self._embedding_since = (time.monotonic(), done)
        self.checked, self.total = done, total

    def seconds_left(self) -> float | None:
        """A build's time left at the rate so far (None before its rate is known)."""
        if self.phase != "building" or self._embedding_since is None or self.total is None:
            return None
        since, first = self._embedding_since
        rate = (self.checked - first) / max(time.monotonic() - since, 1e-6)
        return (self.total - self.checked) / rate if rate > 0 else None

    def finish(self) -> None:
        if self._started is not None:
            self.seconds = round(time.monotonic() - self._started, 2)
        self.phase = "done"
        self._done.set()

    def wait(self, timeout: float) -> bool:
        """Block until the scan is over (at most `timeout` s); True when it is (or never ran)."""
        return not self.running or self._done.wait(timeout)

    def describe(self) -> str:
        if self.phase == "checking" and self.total is not None:
            return f"{self.checked} of {self.total} notes checked"
        if self.phase == "building" and self.total is not None:
            left = self.seconds_left()
            return f"{self.checked:,} of {self.total:,} chunks embedded" + \
                (f", ~{max(1, round(left / 60))} min left" if left is not None else "")
        return {"building": "building the index", "done": "done"}.get(
            self.phase, "listing the vault's notes")

    def warning(self) -> str:
        return (f"{INDEXING_WARNING} ({self.describe()}): "
                "results may miss recent notes")

    def to_dict(self) -> dict:
        """`checked` of `total`: notes while checking, chunks embedded while building."""
        left = self.seconds_left()
        return {"phase": self.phase, "checked": self.checked, "total": self.total,
                "seconds": self.seconds, "seconds_left": None if left is None else round(left)}


def chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


class IndexWorker:
    """Keeps the index of `memory.vault` in step with the files it is told about.

    `index_paths(rels)` syncs the given notes in batches; `reconcile()` finds what changed
    while nobody watched (size+mtime against `state.db`, the index's hashes) and syncs
    that. Bad files (unreadable, or over `limits.MAX_NOTE_BYTES`, which the indexer refuses
    and drops from the index as `reindex` does) are logged once per distinct content (a note
    over the limit once while it stays over) and retried when they change again; no
    exception escapes a batch.
    """

    def __init__(self, memory, gate: Gate):
        self.memory = memory
        self.vault = memory.vault
        self.gate = gate
        self.notes_indexed: int | None = None
        self.changes = 0  # notes added, updated or removed since start
        self.rebuilding: str | None = None  # why the whole index is being rebuilt, if it is
        self.in_flight = 0
        self.last_error: dict | None = None
        self.last_sync: dict | None = None
        self.progress: tuple[int, int] | None = None
        self._reported: dict[str, tuple | str] = {}  # rel -> what was logged of it
        self.stop_requested = threading.Event()
        self.scan = StartupScan()

    # --- reconciliation ------------------------------------------------------------------
    def reconcile(self) -> int:
        """Catch up with every change made while the daemon was down; returns notes synced."""
        indexer = self.memory.indexer
        scanning = self.scan.running
        rebuild = _rebuild_reason(indexer)
        if rebuild is not None:
            log.info("building the index (%s)", rebuild)
            if scanning:
                self.scan.building()
            with self.building(rebuild), self.gate.write():
                report = self._sync(None)
            self._note_report(report, [])
            self.notes_indexed = len(indexer.index.path_hashes()) if indexer.index.exists() else 0
            return report.added + report.updated + report.removed if report else 0
        started = time.perf_counter()
        if scanning:
            self.scan.listing()
        with self.gate.write():
            indexed = indexer.index.path_hashes()
            known = indexer.state.files()
        self.notes_indexed = len(indexed)
        present, suspects = set(), []
        root = self.vault.root
        prefix = str(root) + "/"
        for path in self.vault.iter_indexed():
            text = str(path)   # a string slice: pathlib per note cost seconds at 20k notes
            rel = text[len(prefix):] if text.startswith(prefix) else path.relative_to(root).as_posix()
            present.add(rel)
            seen = known.get(rel)
            try:
                st = os.stat(text)
            except OSError:
                suspects.append(rel)
                continue
            if (seen is None or seen.size != st.st_size or seen.mtime_ns != st.st_mtime_ns
                    or indexed.get(rel) != seen.content_hash):
                suspects.append(rel)
        gone = sorted((set(indexed) | set(known)) - present)
        log.info("startup scan: %d notes, %d to check, %d gone (%.2f s)",
                 len(present), len(suspects), len(gone), time.perf_counter() - started)
        if scanning:
            self.scan.checking(len(suspects) + len(gone))
        return self.index_paths(suspects + gone, scan=self.scan if scanning else None)

    def rebuild(self, build, busy_with: str) -> dict:
        """`reindex --full` asked of the daemon: `build()` (the `reindex` it serves) rebuilds
        the index it has open itself, between two batches of its own, inside the gate
        (`busy_with`: what a query kept waiting is told, unless a build is under way);
        meanwhile searches are told it is rebuilding and answered in-process from what is
        built so far, as during a first build."""
        with self.gate.query(timeout=QUERY_WAIT_SECONDS, busy_with=self.rebuilding or busy_with), \
                self.building("reindex --full"):
            log.info("rebuilding the index (reindex --full)")
            report = build()
        self.notes_indexed = report["added"]
        log.info("index rebuilt: %d notes, %d chunks (%.1f s)", report["added"],
                 report["chunks"], report["seconds"])
        return report

    @contextmanager
    def building(self, why: str):
        """While the whole index is built (`why`: "no index yet", "reindex --full", ...):
        `rebuilding` says so, for `status` and for queries, which are then answered
        in-process from what is built so far rather than kept waiting minutes."""
        self.rebuilding = why
        try:
            yield
        finally:
            self.rebuilding = None

    # --- incremental indexing -----------------------------------------------------------
    def index_paths(self, rels, scan: StartupScan | None = None, batch_notes: int = BATCH_NOTES) -> int:
        """Sync these vault-relative paths (present or deleted) in batches of `batch_notes`;
        returns how many. `scan`: the startup scan these belong to, told of each batch done."""
        rels = list(dict.fromkeys(rels))
        self.in_flight = len(rels)
        delay = float(os.environ.get(SCAN_DELAY_ENV) or 0) if scan is not None else 0.0
        try:
            for batch in chunks(rels, batch_notes):
                if self.stop_requested.is_set():
                    break  # the rest is found by the next startup reconciliation
                if delay:
                    self.stop_requested.wait(delay * len(batch))  # outside the gate
                with self.gate.write():
                    report = self._sync(batch)
                if report is None and len(batch) > 1:
                    # Something failed outside the per-note checks: find the culprit alone.
                    for rel in batch:
                        with self.gate.write():
                            self._note_report(self._sync([rel]), [rel])
                else:
                    self._note_report(report, batch)
                self.in_flight -= len(batch)
                if scan is not None:
                    scan.checked += len(batch)
        finally:
            self.in_flight = 0
        return len(rels)

    def _sync(self, paths):
        def progress(done, total):
            self.progress = (done, total)
            if self.scan.phase == "building":
                self.scan.embedded(done, total)

        try:
            return self.memory.indexer.sync(paths, progress=progress)
        except Exception as exc:  # the worker must outlive any failure
            where = paths[0] if paths and len(paths) == 1 else None
            if where:
                self._report_error(where, f"{type(exc).__name__}: {exc}")
            else:
                log.warning("indexing a batch of %s notes failed: %s: %s",
                            len(paths) if paths else "all", type(exc).__name__, exc)
            return None
        finally:
            self.progress = None

    def _note_report(self, report, batch) -> None:
        if report is None:
            return
        failed = {rel for rel, _ in report.errors}
        for rel, reason in report.errors:
            self._report_error(rel, reason)
        for rel in batch:
            if rel not in failed:
                self._reported.pop(rel, None)
        if self.notes_indexed is not None:
            self.notes_indexed = max(0, self.notes_indexed + report.added - report.removed)
        self.changes += report.added + report.updated + report.removed
        if report.added or report.updated or report.removed:
            log.info("indexed: %d added, %d updated, %d removed (%.2f s)", report.added,
                     report.updated, report.removed, report.seconds)
            self.last_sync = {"at": datetime.now().replace(microsecond=0).isoformat(),
                              "added": report.added,
                              "updated": report.updated, "removed": report.removed}

    def _report_error(self, rel: str, reason: str) -> None:
        # Keyed by content, not mtime: a save that rewrites the same broken bytes is not
        # news; any real change to the file is logged (and retried) again. Over the size
        # limit is one state whatever the size: a note seen while it is being written (10 MB,
        # then 20 MB) or saved again still too large is not news either.
        fingerprint = self._fingerprint(rel)
        signature = fingerprint if fingerprint == _TOO_LARGE else (reason, fingerprint)
        self.last_error = {"path": rel, "reason": reason,
                           "at": datetime.now().replace(microsecond=0).isoformat()}
        if self._reported.get(rel) != signature:
            self._reported[rel] = signature
            log.warning("skipped %s: %s", rel, reason)

    def _fingerprint(self, rel: str):
        path = self.vault.root / rel
        try:
            st = path.stat()
            if st.st_size > MAX_NOTE_BYTES:
                return _TOO_LARGE  # not read: the indexer refuses it unread too
            return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
        except OSError:
            return None


def _rebuild_reason(indexer) -> str | None:
    """Why the index must be rebuilt from scratch (None when it can be updated in place)."""
    check = getattr(indexer, "rebuild_reason", None) or getattr(indexer, "_rebuild_reason", None)
    return check() if check else None
