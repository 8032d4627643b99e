"""The one indexing pipeline: vault notes -> chunks -> embeddings -> LanceDB rows.

    >>> indexer = Indexer(vault, embedder_factory=lambda: Embedder(vault.config.model))  # doctest: +SKIP
    >>> indexer.sync()                      # reconcile the whole vault      # doctest: +SKIP
    SyncReport(added=12, updated=0, removed=0, unchanged=0, ...)
    >>> indexer.sync(["Memory/Facts/Tea.md"])   # just these files         # doctest: +SKIP

`reindex`, the daemon, `extract`, `add` and the MCP server all call it. A whole-vault scan
compares size and mtime with `state.db` first and hashes only files that differ, and only
notes whose content hash changed are embedded; the model loads only when something must be.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import VaultmemError
from vaultmem.index.chunking import Chunk, chunk_note, read_for_index
from vaultmem.index.passages import chunk_vectors
from vaultmem.index.state import FileStat, State
from vaultmem.index.table import SCHEMA_VERSION, ChunkIndex
from vaultmem.store.limits import note_too_large
from vaultmem.store.note import content_hash

# Chunks embedded per model call: large enough that sentence-transformers' length sorting
# keeps padding low, small enough that progress moves and memory stays flat.
EMBED_BATCH_CHUNKS = 512
# From this many chunks to embed, batches run on every core at once (`Embedder.bulk`): a
# first index, a rebuild, a folder of notes pasted in. Fewer (an edit, an extraction) keep to
# the configured threads, so a running daemon leaves the other core to its searches.
BULK_CHUNKS = 2048


@dataclass
class SyncReport:
    """What one `Indexer.sync` did. `errors` holds `(rel_path, reason)` of skipped notes."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    errors: list = field(default_factory=list)
    rebuilt: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "unchanged": self.unchanged, "chunks": self.chunks,
                "errors": [{"path": p, "reason": r} for p, r in self.errors],
                "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3)}


class Indexer:
    """Keeps `.vaultmem/index/` in step with the vault. Call it from one thread at a time."""

    def __init__(self, vault, embedder_factory):
        self.vault = vault
        self.root = Path(vault.root)
        self._embedder_factory = embedder_factory
        self.index = ChunkIndex(self.root)
        self.state = State(self.root)

    @property
    def model_name(self) -> str:
        return self.vault.config.model

    def _rebuild_reason(self) -> str | None:
        meta = self.index.meta()
        if meta is None or not self.index.exists():
            return "no index yet"
        if meta.get("schema") != SCHEMA_VERSION:
            return "index layout changed"
        if meta.get("model") != self.model_name:
            return f"model changed from {meta.get('model')} to {self.model_name}"
        return None

    # --- public ------------------------------------------------------------------------
    def sync(self, paths=None, full: bool = False, progress=None) -> SyncReport:
        """Bring the index up to date with the vault (or with just `paths`).

        `paths`: absolute or vault-relative paths that changed (deleted ones leave the index);
        None reconciles the whole vault. `full` rebuilds everything. `progress(done, total)`
        is called as chunks are embedded. A note that cannot be read is reported in
        `errors` and skipped; its previous rows stay until it parses again. A note over
        `limits.MAX_NOTE_BYTES` is reported the same way and its rows are removed, so no
        stale text of it stays searchable (it is indexed again once it is small enough).
        """
        started = time.perf_counter()
        report = SyncReport()
        reason = "--full" if full else self._rebuild_reason()
        first_write = None
        if reason is not None:
            dim = self._embedder_factory().dim
            self.state.clear_files()
            report.rebuilt, paths, indexed = reason, None, {}
            # Opening LanceDB (its import alone takes a second) overlaps the first batch.
            first_write = lambda: self.index.reset(self.model_name, dim)  # noqa: E731
        else:
            indexed = self.index.path_hashes()
        if paths is not None:
            paths = [self._rel(p) for p in paths]
        known = self.state.files(paths)
        present, gone = self._candidates(paths, indexed, known)

        pending, stats, too_large, readings = [], [], [], []
        statement_folders = set(self._statement_folders().values())
        for rel, abs_path in present.items():
            self._check(rel, abs_path, indexed, known, report, pending, stats, too_large,
                        readings if rel.rpartition("/")[0] in statement_folders else None)
        self._embed_and_write(pending, indexed, report, progress, first_write)
        gone = sorted(set(gone) | set(too_large))
        if gone:
            # Only indexed paths: a delete that matches nothing still writes a LanceDB
            # version whose transaction file holds the path (a purged note's title).
            removed = [p for p in gone if p in indexed]
            if removed:
                self.index.delete_paths(removed)
            self.state.delete_files(gone)
            report.removed = len(removed)
        self.state.put_files(stats)
        if readings:
            self.state.put_memory_fields(readings)
        self.index.maintain(force=report.rebuilt is not None)
        report.seconds = time.perf_counter() - started
        return report

    def sync_memories(self) -> SyncReport:
        """`sync` of the typed memory notes that changed since they were indexed (size or
        mtime not as recorded, new, or gone), which is what the write policy compares a new
        memory with: a cold `add` no longer walks and stats the whole vault (the person's
        notes included) first. A whole rebuild, when one is due, is done as `sync` does."""
        if self._rebuild_reason() is not None:
            return self.sync()
        folders = self._statement_folders()
        known, changed, seen = self.state.files(folders=folders.values()), [], set()
        for note_type, prefix in folders.items():
            try:
                entries = list(os.scandir(self.vault.folder_for(note_type)))
            except OSError:
                continue
            for entry in entries:
                if not entry.name.endswith(".md"):
                    continue
                rel = f"{prefix}/{entry.name}"
                seen.add(rel)
                try:
                    st = entry.stat()
                except OSError:
                    continue
                old = known.get(rel)
                if old is None or old.size != st.st_size or old.mtime_ns != st.st_mtime_ns:
                    changed.append(rel)
        changed += [rel for rel in known if rel not in seen]
        return self.sync(changed) if changed else SyncReport()

    def _statement_folders(self) -> dict[str, str]:
        """note type -> vault path of its folder, for the types the write policy compares."""
        from vaultmem.store.layout import STATEMENT_TYPES

        return {note_type: self.vault.rel(self.vault.folder_for(note_type)) for note_type in STATEMENT_TYPES}

    def remove(self, rel_paths) -> int:
        """Drop notes from the index (e.g. deleted files); returns how many were indexed."""
        rels = [self._rel(p) for p in rel_paths]
        if not self.index.exists():
            return 0
        indexed = self.index.path_hashes()
        self.index.delete_paths(rels)
        self.state.delete_files(rels)
        return len([r for r in rels if r in indexed])

    # --- steps ---------------------------------------------------------------------------
    def _rel(self, path) -> str:
        path = Path(path)
        if path.is_absolute():
            return self.vault.rel(path)
        return path.as_posix()

    def _candidates(self, paths, indexed, known):
        """(rel -> absolute path of notes to check, rel paths to remove)."""
        if paths is None:
            present = {}
            # The walk yields paths under the vault's root as given: their vault path is a
            # string slice (`Vault.rel` resolves each folder, 0.2 ms a note: 4 s at 20k notes).
            root = str(self.root) + "/"
            for item in self.vault.iter_indexed():
                abs_path = Path(getattr(item, "path", item))
                text = str(abs_path)
                present[text[len(root):] if text.startswith(root) else self.vault.rel(abs_path)] = abs_path
            gone = sorted((set(indexed) | set(known)) - set(present))
            return present, gone
        present, gone = {}, []
        for path in paths:
            rel = self._rel(path)
            abs_path = self.root / rel
            if abs_path.is_file() and self._indexable(rel):
                present[rel] = abs_path
            elif rel in indexed or rel in known or not abs_path.exists():
                gone.append(rel)
        return present, sorted(set(gone))

    def _indexable(self, rel: str) -> bool:
        return self.vault.is_indexed_path(rel)

    def _check(self, rel, abs_path, indexed, known, report, pending, stats, too_large, readings=None):
        """Decide whether a note changed; queue `(rel, old_hash, chunks)` when it did.
        A note over the size limit goes to `too_large` (its rows are to be removed). For a
        memory note read here, `readings` gets its reading for the write policy
        (`readings.fresh_reading`): the first cold `add` after an index need not read every note."""
        try:
            st = abs_path.stat()
        except OSError as exc:
            report.errors.append((rel, f"cannot stat: {exc.strerror}"))
            return
        reason = note_too_large(st.st_size)
        if reason:  # checked first: a note indexed before it grew must not stay "unchanged"
            report.errors.append((rel, reason))
            too_large.append(rel)
            return
        seen = known.get(rel)
        if (seen is not None and seen.size == st.st_size and seen.mtime_ns == st.st_mtime_ns
                and indexed.get(rel) == seen.content_hash):
            report.unchanged += 1
            return
        try:
            data = abs_path.read_bytes()
        except OSError as exc:
            report.errors.append((rel, f"cannot read: {exc.strerror}"))
            return
        digest = content_hash(data)
        stats.append(FileStat(rel, st.st_size, st.st_mtime_ns, digest))
        if readings is not None:
            from vaultmem.index.readings import fresh_reading

            row = fresh_reading(rel, st, data, abs_path)
            if row is not None:
                readings.append(row)
        if indexed.get(rel) == digest:
            report.unchanged += 1
            return
        try:
            chunks = chunks_of(self.vault, rel, data, abs_path, digest, st.st_mtime)
        except VaultmemError as exc:
            stats.pop()  # not indexed: look at it again next time
            report.errors.append((rel, getattr(exc, "reason", None) or str(exc)))
            return
        pending.append((rel, chunks))

    def _embed_and_write(self, pending, indexed, report, progress, first_write=None):
        """Embed queued notes in batches; each batch is written while the next one is
        being embedded (LanceDB writes and torch both release the GIL). `first_write`
        runs on the writer before any batch. Each batch is in the table once written, so an
        index stopped halfway keeps what it wrote: the next sync finds those notes indexed
        (their content hash in the table) and embeds only the rest."""
        from concurrent.futures import ThreadPoolExecutor
        from contextlib import nullcontext

        if not pending:
            if first_write is not None:
                first_write()
            return
        total = sum(len(chunks) for _, chunks in pending)
        embedder = self._embedder_factory()
        if progress:
            progress(0, total)
        bulk = embedder.bulk() if total >= BULK_CHUNKS and hasattr(embedder, "bulk") else nullcontext()
        with bulk, ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultmem-write") as writer:
            writing = writer.submit(first_write) if first_write is not None else None
            for batch in _batches(pending, EMBED_BATCH_CHUNKS):
                chunks = [chunk for _, note_chunks in batch for chunk in note_chunks]
                vectors = chunk_vectors(embedder, chunks)
                rows = [chunk.to_row(vector) for chunk, vector in zip(chunks, vectors)]
                if writing is not None:
                    writing.result()  # one write at a time, in order; re-raises its error
                writing = writer.submit(self.index.replace, [rel for rel, _ in batch], rows)
                for rel, _ in batch:
                    if rel in indexed:
                        report.updated += 1
                    else:
                        report.added += 1
                report.chunks += len(chunks)
                if progress:
                    progress(report.chunks, total)
            if writing is not None:
                writing.result()


def chunks_of(vault, rel: str, data: bytes, path, digest: str = "", mtime=None) -> list[Chunk]:
    """The index chunks of the note at `rel`: a memory note by its frontmatter (a bad one is
    a VaultmemError naming it), one of the person's notes by `user_notes` (never an error:
    whatever a person writes is read as well as it can be)."""
    if vault.is_memory_path(rel):
        note = read_for_index(data, path)
        return chunk_note(note, rel, content_hash=digest, default_user=vault.config.user)
    from vaultmem.index.user_notes import chunk_user_note

    return chunk_user_note(data, rel, content_hash=digest, user=vault.config.user, mtime=mtime)


def _batches(pending, size):
    """Groups of whole notes holding about `size` chunks each."""
    batch, count = [], 0
    for item in pending:
        batch.append(item)
        count += len(item[1])
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch
