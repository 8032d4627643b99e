"""The daemon process: lock, logging, signals, the query server and the indexing loop.

    $ vaultmem daemon run          # foreground (what systemd/launchd run)
    $ vaultmem daemon start        # detached; returns once the socket answers

Threads: watchdog's observer only queues events; one worker thread reconciles at startup,
indexes settled batches, extracts inbox transcripts and commits quiet user edits; the
server answers queries on their own threads. Everything blocks on queues, conditions or
selectors with deadlines: an idle daemon does no work. What the daemon answers to each
request is `handlers.py`'s (`Daemon` takes it from `Handlers`).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import select
import signal
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

from vaultmem import __version__
from vaultmem.daemon.chores import Chores
from vaultmem.daemon.handlers import Handlers
from vaultmem.daemon.inbox import Inbox
from vaultmem.daemon.lock import DaemonLock
from vaultmem.daemon.server import SocketServer
from vaultmem.daemon.watcher import BULK_NOTES, HEAD_MOVED, Coalescer, make_handler, start_observer
from vaultmem.daemon.worker import BATCH_NOTES, BULK_BATCH_NOTES, Gate, IndexWorker
from vaultmem.errors import DaemonError, VaultmemError
from vaultmem.ipc import protocol
from vaultmem.ipc.client import LOG_NAME, socket_path, state_dir

log = logging.getLogger("vaultmem.daemon")
# .vaultmem/sync_head: the commit the daemon last saw HEAD at, for "did a merge happen since".
SYNC_HEAD = "sync_head"

LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3
# A stop waits this long for the batch in flight before the process exits anyway; the
# next start's reconciliation picks up whatever was left.
STOP_GRACE_SECONDS = 120.0


def setup_logging(vault_root: Path, foreground: bool) -> logging.Handler:
    """Log to `.vaultmem/daemon.log` (rotated), and to stderr too in the foreground."""
    path = state_dir(vault_root) / LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES,
                                                   backupCount=LOG_BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(message)s"))
    package = logging.getLogger("vaultmem")
    package.setLevel(logging.INFO)
    package.addHandler(handler)
    if foreground:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        package.addHandler(console)
    logging.captureWarnings(True)
    threading.excepthook = lambda hook: log.error(
        "thread %s crashed", hook.thread.name if hook.thread else "?",
        exc_info=(hook.exc_type, hook.exc_value, hook.exc_traceback))
    return handler


class Daemon(Handlers):
    """One vault's daemon. `run()` blocks until `stop()` (or SIGTERM/SIGINT)."""

    def __init__(self, vault_root, foreground: bool = False, embedder=None):
        """`embedder`: an already loaded model to serve with (tests share one); loaded on
        first use otherwise."""
        from vaultmem.api import Memory

        self.memory = Memory(vault_root, serving=True, embedder=embedder)
        self.vault = self.memory.vault
        self.root = self.vault.root
        self.foreground = foreground
        config = self.vault.config
        self.gate = Gate()
        self.worker = IndexWorker(self.memory, self.gate)
        self.inbox = Inbox(self.vault, self._run_extract, settle=config.inbox_settle_seconds)
        self.coalescer = Coalescer(quiet=config.debounce_ms / 1000, max_wait=config.max_wait_ms / 1000)
        self.chores = Chores(self.memory, self.gate)
        self.lock = DaemonLock(state_dir(self.root))
        self.server = SocketServer(socket_path(self.root), self.dispatch)
        # What runs each operation of the protocol table. Reads keep the model warm; writes
        # go through here too so that one process writes the index (no two writers racing).
        self.handlers = {"status": self.status, "flush": self.flush, "shutdown": self.shutdown,
                         "obsidian_api": self.obsidian_api,
                         **{op.name: getattr(self.memory, op.name)
                            for op in protocol.OPS.values() if op.memory}}
        self.state = "starting"
        self.started_at = time.monotonic()
        self.started_iso = datetime.now().replace(microsecond=0).isoformat()
        self._stop = threading.Event()
        # While it runs, the main thread sleeps on a pipe `stop()` and the signal handlers
        # write a byte to (made in `run`: a Daemon built and never run holds no descriptors).
        self._wake_r = self._wake_w = -1
        self._signalled = False
        self._idle = threading.Condition()
        self._applying = False
        self._observer = None
        self._thread: threading.Thread | None = None
        self.mcp_http = None  # the MCP HTTP server `[mcp] http` asks for, once serving
        self.mcp_http_error: str | None = None
        self.plugin_api = None  # the Obsidian plugin's HTTP API (`http_api`), once serving
        self.plugin_api_error: str | None = None
        self._plugin_lock = threading.Lock()

    # --- lifecycle -----------------------------------------------------------------------
    def run(self, install_signals: bool = True) -> None:
        self.lock.acquire()
        # From now on a query knows the index may lag the vault until the scan ends.
        self.worker.scan.begin()
        try:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_w, False)
            log.info("vaultmem %s daemon starting for %s (pid %d)", __version__, self.root,
                     os.getpid())
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, self._on_signal)
            self.obsidian_api()  # before the socket: once `daemon start` returns, the plugin is served
            self.server.start()
            # Watch before scanning, so nothing changed during the scan is missed.
            handler = make_handler(self.root, self._accept, self.coalescer,
                                   on_root_gone=self._vault_gone)
            self._observer = start_observer(self.root, handler)
            self._thread = threading.Thread(target=self._work, name="vaultmem-worker",
                                            daemon=True)
            self._thread.start()
            self._start_mcp_http()  # after the scan started: importing the SDK takes seconds
            while not self._stop.is_set():
                if self._signalled:  # marked before the pipe was there, or since the last wake
                    self.stop()
                    break
                select.select([self._wake_r], [], [])
                os.read(self._wake_r, 512)
        finally:
            self._shutdown()

    def stop(self) -> None:
        """Ask for a graceful stop: the batch in flight is finished, then everything closes."""
        self.state = "stopping"
        self.worker.stop_requested.set()
        self._stop.set()
        self.coalescer.wake()
        self._wake()

    def _on_signal(self, *_) -> None:
        # A handler runs in the main thread between two of its steps, perhaps while that thread
        # holds a lock `stop()` takes: Event.set() from a handler while the main thread is in
        # Event.wait() deadlocks now and then (once in ~14,000 tries here; a SIGTERM as the main
        # loop began waiting hung `daemon run`). It takes no lock: it marks, and wakes the loop.
        self._signalled = True
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:  # full (the loop is already due to wake) or closed (shut down)
            pass

    def _vault_gone(self) -> None:
        log.warning("the vault folder %s was deleted or moved; stopping", self.root)
        self.stop()

    def _shutdown(self) -> None:
        self.state = "stopping"
        self.worker.stop_requested.set()
        self.coalescer.wake()
        if self._observer is not None:
            self._observer.stop()
        if self.mcp_http is not None:
            self.mcp_http.stop()
        with self._plugin_lock:
            if self.plugin_api is not None:
                self.plugin_api.stop()
                self.plugin_api = None
        self.server.close()  # no new requests; those in flight finish below
        if self._thread is not None:
            self._thread.join(STOP_GRACE_SECONDS)
            if self._thread.is_alive():
                log.warning("the indexing batch in flight did not finish in %.0f s; exiting "
                            "anyway (the next start catches up)", STOP_GRACE_SECONDS)
        if not self.gate.close(STOP_GRACE_SECONDS):
            log.warning("a request was still running at exit")
        if self._observer is not None:
            self._observer.join(timeout=5)
        log.info("daemon stopped")
        self.lock.release()
        fds, self._wake_r, self._wake_w = (self._wake_r, self._wake_w), -1, -1
        for fd in fds:  # a late signal now writes to -1, never to a file that took the number
            if fd >= 0:
                os.close(fd)

    def _start_mcp_http(self) -> None:
        """Serve MCP on HTTP beside the socket when `[mcp] http` asks for it, with the warm
        Memory. A problem (no token yet, the port taken) is logged and shown by `status`:
        the daemon goes on with its own work."""
        address = self.vault.config.mcp_http
        if not address:
            return
        from vaultmem.agents.mcp_http import HttpServer
        from vaultmem.agents.mcp_server import Backend

        try:
            server = HttpServer(self.root, address,
                                backend=Backend(memory=self.memory, serve=self.serve_mcp))
        except VaultmemError as exc:
            self.mcp_http_error = str(exc)
            log.error("not serving MCP on HTTP: %s", exc)
            return
        server.start()
        self.mcp_http = server
        log.info("serving MCP on %s", server.url)

    def obsidian_api(self) -> dict:
        """Serve the Obsidian plugin (`http_api`) if some user has its token and it is not
        served yet (the `obsidian_api` request: `vaultmem obsidian token` sends it).
        `{"url"}` once serving; `{"url": None, "error"}` when it cannot (no token yet, the
        port taken), logged and shown by `status`: the daemon goes on with its own work."""
        from vaultmem.agents import mcp_tokens
        from vaultmem.daemon.http_api import CLIENT, PluginApi

        with self._plugin_lock:
            if self.plugin_api is None and not self._stop.is_set():
                try:
                    if not mcp_tokens.any_for(self.root, CLIENT):
                        self.plugin_api_error = ("no Obsidian token yet — run `vaultmem obsidian token` "
                                                 "and paste it in Obsidian → Settings → vaultmem")
                        return {"url": None, "error": self.plugin_api_error}
                    api = PluginApi(self.root, self.serve_plugin, self.vault.config.obsidian_port)
                    try:
                        api.start()
                    except OSError as exc:  # .vaultmem/ unwritable: nobody could find it
                        api.stop()
                        raise DaemonError(f"cannot write {exc.filename}: {exc.strerror}") from exc
                except VaultmemError as exc:
                    self.plugin_api_error = str(exc)
                    log.error("not serving the Obsidian plugin: %s", exc)
                    return {"url": None, "error": self.plugin_api_error}
                self.plugin_api, self.plugin_api_error = api, None
                log.info("serving the Obsidian plugin on %s", api.url)
            if self.plugin_api is None:
                return {"url": None, "error": self.plugin_api_error or "the daemon is stopping"}
            return {"url": self.plugin_api.url}

    # --- the worker thread -----------------------------------------------------------------
    def _work(self) -> None:
        try:
            self.state = "reconciling"
            try:
                self._recover()
                self._register_merge_driver()
                self.inbox.scan()
                self.worker.reconcile()
            finally:
                self.worker.scan.finish()
                log.info("startup scan done (%.2f s)", self.worker.scan.seconds or 0.0)
            self._repair_sync()  # a pull made while no daemon ran
            if not self._stop.is_set():
                self.state = "warming"
                self._warm()
        except Exception:
            log.exception("startup reconciliation failed; watching anyway")
        self.state = "watching" if not self._stop.is_set() else "stopping"
        while not self._stop.is_set():
            self._signal_idle()
            batch = self.coalescer.take(timeout=self._next_deadline())
            if self._stop.is_set():
                break
            self._applying = True
            try:
                if batch is not None:
                    self._apply(*batch)
                self.inbox.process_due()
                self.chores.run_due()
            except Exception:
                log.exception("worker step failed; continuing")
            finally:
                self._applying = False
        self._signal_idle()

    def _accept(self, rel: str) -> bool:
        return self.inbox.wants(rel) or self.vault.is_indexed_path(rel)

    def _apply(self, changes: dict[str, str], rescan: bool) -> None:
        head_moved = changes.pop(HEAD_MOVED, None) is not None
        notes = []
        for rel, change in changes.items():
            if self.inbox.wants(rel):
                self.inbox.observe(rel, change)
            else:
                notes.append(rel)
        # Only memory notes are committed; the user's own notes are read, never committed.
        self.chores.edited([rel for rel in notes if self.vault.is_memory_path(rel)])
        before = self.worker.changes
        bulk = len(notes) >= BULK_NOTES
        if rescan:
            self.inbox.scan()
            self.worker.reconcile()
        else:
            self.worker.index_paths(notes, batch_notes=BULK_BATCH_NOTES if bulk else BATCH_NOTES)
        if head_moved or bulk or rescan:
            self._repair_sync(arrived=notes if bulk else ())
        if self.worker.changes != before:
            self.chores.changed()
        log.debug("applied %d changes (%s)", len(changes),
                  ", ".join(f"{rel}:{c}" for rel, c in list(changes.items())[:5]))

    def _recover(self) -> None:
        # A previous daemon or CLI run may have been killed mid-write: its temp files and
        # git lock would otherwise stay (the lock blocks obsidian-git too).
        try:
            with self.gate.write():
                left = self.memory.recover()
        except Exception:
            log.exception("could not clear what a killed run left behind")
            return
        if left["temp_files"] or left["git"]:
            log.warning("removed what a killed vaultmem run left behind: %s",
                        ", ".join(left["temp_files"] + [f".git/{n}" for n in left["git"]]))

    def _register_merge_driver(self) -> None:
        # .git/config, .git/info/exclude and .vaultmem/ are not cloned: a fresh clone's first
        # daemon names the driver and keeps vaultmem's state and Obsidian's trash out of git.
        from vaultmem.sync.remote import ensure_ignores, register_driver

        try:
            if register_driver(self.root):
                log.info("registered the vaultmem merge driver in .git/config")
            for written in ensure_ignores(self.root):
                log.info("kept out of git: %s", written)
        except Exception as exc:
            log.warning("could not register the merge driver or git's ignores: %s", exc)

    def _repair_sync(self, arrived=()) -> None:
        """Repair what two devices' writes left (`reconcile`) among the notes a merge or a
        sync tool brought: after HEAD moved through a merge commit since the commit last
        seen (kept in .vaultmem/sync_head, so a pull made while no daemon ran is repaired
        at the next start), the paths that changed since; after a bulk arrival, `arrived`.
        vaultmem's own commits, fast-forwards and a vault's first daemon (nothing seen yet)
        call for none, and nothing outside what arrived is touched: a vault of 10,000
        memories is not re-examined (and rewritten) at every start."""
        from vaultmem.errors import HistoryError
        from vaultmem.history.repo import Repo

        touching = set(arrived)
        try:
            with Repo(self.root) as repo:
                head, before = repo.head(), self._seen_head()
                if head is not None and head != before:
                    if before is not None and not _fast_forward(repo, before, head):
                        touching |= set(repo.run("diff", "--name-only", "-z", before, head,
                                                 ok_codes=(0, 128)).split("\0"))
                    self._see_head(head)
        except HistoryError:
            pass   # no repository: nothing was merged
        touching = sorted(rel for rel in touching if rel and self.vault.is_memory_path(rel))
        if not touching:
            return
        try:
            with self.gate.write():
                result = self.memory.repair(touching=touching)
        except Exception as exc:  # a merge still under way, git busy: tried again on the next move
            log.warning("sync repair skipped: %s", exc)
            return
        for item in result["repairs"]:
            log.info("%s", item["message"])

    def _seen_head(self) -> str | None:
        try:
            return (self.root / ".vaultmem" / SYNC_HEAD).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def _see_head(self, head: str) -> None:
        from vaultmem.store.files import atomic_write

        atomic_write(self.root / ".vaultmem" / SYNC_HEAD, head + "\n")

    def _next_deadline(self) -> float | None:
        deadlines = [d for d in (self.inbox.next_due(), self.chores.next_due()) if d is not None]
        return min(deadlines) if deadlines else None

    def _warm(self) -> None:
        # Load the model now so that the first query does not pay for torch.
        with self.gate.write():
            self.memory.embedder.encode(["warm up"])

    def _run_extract(self, paths):
        extract = getattr(self.memory, "extract", None)
        if extract is None:
            raise DaemonError("this vaultmem has no extractor (Memory.extract is missing)")
        with self.gate.write():
            return extract(paths)

    def _signal_idle(self) -> None:
        with self._idle:
            self._idle.notify_all()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every queued change is indexed (what `flush` answers after)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while not (self.state == "watching" and not self._applying
                       and len(self.coalescer) == 0 and not self.coalescer.has_rescan()):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    return False
                self._idle.wait(min(remaining, 0.5))
        return True


def _fast_forward(repo, before: str, head: str) -> bool:
    """HEAD moved from `before` to `head` along one line of commits without a merge (a
    commit, a fast-forward pull): nothing two devices wrote met in it."""
    if not repo.is_ancestor(before, head):
        return False
    return repo.run("rev-list", "--merges", "--count", f"{before}..{head}", ok_codes=(128,)).strip() == "0"


def run_daemon(vault_root, foreground: bool = True) -> None:
    """Run the vault's daemon in this process until it is stopped (the `run` command)."""
    daemon = Daemon(vault_root, foreground=foreground)
    handler = setup_logging(daemon.root, foreground)
    try:
        daemon.run()
    except DaemonError as exc:
        log.error("%s", exc)
        raise
    finally:
        logging.getLogger("vaultmem").removeHandler(handler)
        handler.close()
