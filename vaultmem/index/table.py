"""The LanceDB chunk index under `.vaultmem/index/`: storage and raw queries, no ranking.

The table is read and written with pylance (see `ChunkIndex._dataset`).

One row per chunk (see docs/ARCHITECTURE.md). Besides the table, `meta.json` records the
embedding model and dimension the vectors were made with, so vectors of two models never mix.

The full-text side indexes `fts_text`: `search_text` plus the chunk's keywords (title,
type, entities, date), with every run of CJK characters
rewritten as overlapping bigrams ("戒咖啡" -> "戒咖 咖啡"), so LanceDB's English tokenizer
(stemming, stop words) also finds Chinese and Japanese words; queries get the same rewrite.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from datetime import timedelta
from pathlib import Path

from vaultmem.errors import IndexUnavailable
from vaultmem.index.snapshot import (
    FILTER_COLUMNS,
    HIT_COLUMNS,
    SNAPSHOT_COLUMNS,
    Snapshot,
    TakenRows,
    column_array,
    matrix,
    patched,
)
from vaultmem.store.layout import STATE_DIR

log = logging.getLogger(__name__)

TABLE = "chunks"
# Bumped when a column's layout or meaning changes; `Indexer.sync` then rebuilds the index
# (4: a session chunk's `valid_from` is the day its turns were said; 5: Chinese session
# chunks hold three turns, and a Chinese character counts half a word in their budget;
# 6: `held_from`, the day an event told ahead of its day was known, for `--as-of`; 7: a long
# message to an assistant also has a chunk per sentence, and a long neighbour lends 20 words).
SCHEMA_VERSION = 7
# Rows added since the last FTS/compaction pass before `maintain()` folds them in;
# below it LanceDB's flat scan of unindexed rows costs less than re-optimising.
OPTIMIZE_AFTER_ROWS = 2000
# ... or once the table has this many fragments: every edit the daemon indexes writes one
# (and a deletion file), and BM25 reads each. A 10k-note vault after ~250 edits and adds
# (72 fragments, 430 rows pending) took 6 ms for BM25 and 11 ms a search, 2 and 7.8 ms once
# compacted (0.5 s); its rows pending stayed under the row count's trigger.
OPTIMIZE_AFTER_FRAGMENTS = 48
# The full-text index: LanceDB's `FTS()` defaults, spelled out (the index was built with
# lancedb before; the same settings give the same tokens and BM25 scores).
FTS_PARAMS = dict(with_position=False, base_tokenizer="simple", language="English",
                  max_token_length=40, lower_case=True, stem=True, remove_stop_words=True,
                  ascii_folding=True)

# From this many rows a search no longer holds the table in memory (`snapshot`): its vector
# half asks an IVF-PQ index of the vectors for candidates (`nearest`), its keyword half the
# full-text index, and only those rows are read (`retrieve/search.py`). Below it the exact
# in-memory matrix is faster and holds everything a search reads; above it its memory grows
# past the daemon's budget (at 1M chunks the vectors alone are 1.5 GB).
ANN_AFTER_ROWS = 200_000
# The vector index, built in `maintain` once the table passes ANN_AFTER_ROWS and again when
# it has grown REBUILD_ANN_GROWTH times past the rows it was built on (rows added between are
# folded in by `optimize_indices`, and rows not yet folded are searched exactly by Lance).
# IVF-PQ: a partition per ANN_ROWS_PER_PARTITION rows, 48 sub-vectors of 8 dimensions
# (all-MiniLM's 384; other sizes take the nearest divisor); a search reads ANN_PROBED_SHARE of
# the partitions and re-scores about ANN_REFINED_ROWS candidates exactly (at least 2 x k).
# Trials at 1M rows of mixtures of real chunk vectors, 400 questions: 256 partitions, 64
# probed, 20 x k re-scored: recall@10 against exact 0.970 at 14-18 ms a query, 235 MB RSS;
# 512 partitions, 100 probed: 0.960; none re-scored: 0.47-0.73; IVF_HNSW_SQ: 0.944 but its
# 576 MB index stays in memory. perf.py at 1M rows (these settings): 0.960. Built in 76-89 s
# on 2 cores, in a child process (`vector_index`: 0.8 GB at its peak).
ANN_ROWS_PER_PARTITION = 4000
ANN_SUB_VECTOR_DIMS = 8
ANN_PROBED_SHARE = 0.25
ANN_REFINED_ROWS = 400   # 40 x k for k = 10: recall@10 0.980 in the trials; 20 x k: 0.970
REBUILD_ANN_GROWTH = 4
# Such a search checks the filters' SQL condition before the vector index is asked
# (Lance's prefilter) only when the condition leaves out more than half of the rows; a
# broader one (the default `user = me OR type = note`, nearly every row) is left to the
# search's own mask over the candidates, asking again for more when it keeps too few. At
# 1M rows a prefilter that keeps every row made the index lookup 30 ms instead of 13.
PREFILTER_BELOW_SHARE = 0.5
# Lance file format of the table's data files. pylance 14 writes 2.2 by default, whose
# encoding of short, repetitive columns (type, status, user, dates) must decode a whole
# block to read one value: reading 60 rows' 18 columns at random from a 1M-row table took
# 15-28 ms there, 7-10 ms in 2.1 (a full scan is as fast in both). Tables written before
# keep 2.2 until `reindex --full` or a purge's rewrite.
DATA_STORAGE_VERSION = "2.1"

# Lance caches each version's manifest and file metadata it reads, by default up to 1 GiB:
# a long extraction writes a version per step and grew it ~1 MB a thousand turns.
METADATA_CACHE_BYTES = 16 << 20

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def cjk_bigrams(text: str) -> str:
    """Rewrite CJK runs as space-separated bigrams (a lone character stays itself)."""
    def split(match):
        run = match.group(0)
        if len(run) == 1:
            return f" {run} "
        return " " + " ".join(run[i:i + 2] for i in range(len(run) - 1)) + " "

    return _CJK_RUN.sub(split, text)


def sql_str(value: str) -> str:
    """A SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_in(column: str, values) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


def schema(dim: int):
    import pyarrow as pa

    text = pa.string()
    return pa.schema([
        ("chunk_id", text), ("note_id", text), ("path", text), ("title", text),
        ("type", text), ("status", text), ("user", text), ("tags", text), ("entities", text),
        ("created", text), ("updated", text), ("valid_from", text), ("valid_to", text),
        ("held_from", text), ("importance", pa.float32()), ("content_hash", text),
        ("source_messages", pa.list_(text)), ("sources", pa.list_(text)), ("text", text),
        ("search_text", text), ("fts_text", text), ("vector", pa.list_(pa.float32(), dim)),
    ])



class ChunkIndex:
    """The chunk table of one vault. Open it with `ChunkIndex(vault_root)`.

    Writers: `reset(model, dim)`, `replace(paths, rows)`, `delete_paths(paths)`, `maintain()`.
    Readers: `check_model(model)`, `snapshot()`, `fts(query, where, limit)`, `rows(where)`.
    """

    def __init__(self, vault_root: str | Path):
        self.dir = Path(vault_root) / STATE_DIR / "index"
        self.meta_path = self.dir / "meta.json"
        self._snapshot = None
        self._reader = None     # the dataset reads go through (see `_dataset`)
        self._shares = {}       # (version, condition) -> share of the rows meeting it (`_narrows`)
        # A one-shot command's search (`cli/fallback`): the snapshot holds the filter columns
        # and vectors, and reads HIT_COLUMNS for the candidates alone (`TakenRows`).
        self.hits_on_demand = False

    # --- metadata ----------------------------------------------------------------------
    def meta(self) -> dict | None:
        """`{"model", "dim", "schema", "pending"}` of the existing index, or None."""
        try:
            return json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _write_meta(self, **changes):
        meta = dict(self.meta() or {}, **changes)
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        tmp.replace(self.meta_path)

    def exists(self) -> bool:
        return self.meta() is not None and (self.dir / f"{TABLE}.lance").exists()

    def check_model(self, model: str) -> None:
        """Raise IndexUnavailable unless the index exists and was built with `model`."""
        meta = self.meta()
        if meta is None or not (self.dir / f"{TABLE}.lance").exists():
            raise IndexUnavailable("the search index has not been built; run `vaultmem reindex`")
        if meta.get("schema") != SCHEMA_VERSION:
            raise IndexUnavailable("the search index has an old layout; run `vaultmem reindex --full`")
        if meta.get("model") != model:
            raise IndexUnavailable(
                f"the search index was built with model {meta.get('model')!r} but config.toml "
                f"names {model!r}; run `vaultmem reindex --full` to rebuild it")

    # --- table -------------------------------------------------------------------------
    @property
    def uri(self) -> str:
        return str(self.dir / f"{TABLE}.lance")

    def _dataset(self):
        """The table as a Lance dataset at its latest version, for reading and writing.

        The table is a LanceDB table (`lancedb.connect(".vaultmem/index").open_table("chunks")`
        opens it), read and written with pylance, the Lance library LanceDB is built on:
        importing lancedb costs 2.4 CPU-s and 30 MB more (its namespace client), which every
        cold command and every `add` paid, for the same files.

        One dataset object is kept and moved to each new version (`checkout_version` keeps
        its caches): a fresh one reads the full-text index again for every query (BM25 at
        12k chunks took 3.6 ms instead of 1.2). A version written by another process (the
        daemon) is seen at the next call."""
        dataset = self._reader
        try:
            if dataset is None:
                import lance

                dataset = lance.dataset(self.uri, session=_session())
            else:
                latest = dataset.latest_version
                if dataset.version != latest:
                    dataset = dataset.checkout_version(latest)
        except Exception as exc:  # pylance raises ValueError, OSError or its own errors
            self._reader = None
            raise IndexUnavailable(
                f"the search index at {self.dir} cannot be opened ({exc}); "
                "run `vaultmem reindex --full`") from exc
        self._reader = dataset
        return dataset

    def reset(self, model: str, dim: int) -> None:
        """Drop everything and start an empty table for `model` vectors of size `dim`."""
        import lance

        self.close()
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        empty = schema(dim)
        self._reader = lance.write_dataset(empty.empty_table(), self.uri, schema=empty, session=_session(),
                                           data_storage_version=DATA_STORAGE_VERSION)
        self._write_meta(model=model, dim=dim, schema=SCHEMA_VERSION, pending=0, fts=False)

    def close(self) -> None:
        self._snapshot = self._reader = None

    def count(self) -> int:
        return self._dataset().count_rows()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.dir.rglob("*") if p.is_file())

    # --- writes ------------------------------------------------------------------------
    def replace(self, paths, rows: list[dict]) -> None:
        """Delete every chunk of `paths`, then add `rows` (the new chunks of those notes)."""
        import pyarrow as pa

        paths = sorted(set(paths))
        dataset = self._dataset()
        before, snap = dataset.version, self._snapshot
        if paths:
            dataset.delete(sql_in("path", paths))
        if rows:
            for row in rows:
                keywords = row.pop("keywords", "")
                row["fts_text"] = cjk_bigrams(f"{row['search_text']}\n{keywords}")
            table = pa.Table.from_pylist(rows, schema=dataset.schema)
            dataset.insert(table)
        meta = self.meta() or {}
        self._write_meta(pending=int(meta.get("pending", 0)) + len(rows))
        # Patch the in-memory snapshot rather than reload it: reloading 100k vectors after
        # every edit would make the daemon's edit-to-searchable time seconds, not ms.
        if snap is not None and snap.version == before and not self.hits_on_demand:
            self._snapshot = patched(snap, paths, rows, dataset.version)
        else:
            self._snapshot = None

    def delete_paths(self, paths) -> None:
        self.replace(paths, [])

    def maintain(self, force: bool = False) -> None:
        """Build the FTS index if missing, the vector index when due (`ANN_AFTER_ROWS`); fold
        pending rows into them and compact the table once there are many of them or many
        fragments."""
        meta = self.meta() or {}
        if self.count() == 0:
            return
        if not meta.get("fts"):
            self._build_indexes()
        elif force or int(meta.get("pending", 0)) >= OPTIMIZE_AFTER_ROWS \
                or len(self._dataset().get_fragments()) >= OPTIMIZE_AFTER_FRAGMENTS:
            self._optimize(timedelta(days=7))
            self._write_meta(pending=0)
        # After the full-text index took the new rows in: a vector index built first would
        # leave them to a flat scan of every BM25 query.
        if self._vector_index_due(meta):
            self._build_vector_index()

    def _optimize(self, keep) -> None:
        """What LanceDB's `Table.optimize` does: compact small files, fold new rows into the
        indexes, delete versions older than `keep`."""
        import warnings

        dataset = self._dataset()
        dataset.optimize.compact_files()
        dataset.optimize.optimize_indices()
        with warnings.catch_warnings():
            # Lance warns that concurrent readers of old versions fail: the daemon, the
            # index's one writer, runs this with its queries held back.
            warnings.simplefilter("ignore", UserWarning)
            dataset.cleanup_old_versions(older_than=keep, delete_unverified=keep == timedelta(0))

    def _build_indexes(self) -> None:
        dataset = self._dataset()
        dataset.create_scalar_index("fts_text", "INVERTED", replace=True, **FTS_PARAMS)
        # B-trees serve fetch-by-chunk and delete-by-path without a full scan.
        dataset.create_scalar_index("chunk_id", "BTREE", replace=True)
        dataset.create_scalar_index("path", "BTREE", replace=True)
        self._write_meta(fts=True, pending=0)

    def _vector_index_due(self, meta: dict) -> bool:
        rows = self.count()
        if rows < ANN_AFTER_ROWS:
            return False
        built, failed = int(meta.get("ann_rows") or 0), int(meta.get("ann_failed_rows") or 0)
        if failed and rows < 2 * failed:   # tried at this size: again once it has doubled
            return False
        return not built or rows >= REBUILD_ANN_GROWTH * built

    def _build_vector_index(self) -> None:
        """The IVF-PQ index of the vectors, sized by the rows, and bitmap indexes of the
        columns filters narrow by, built by a child process (`vector_index`). A build that
        fails leaves searches on the in-memory table, and is logged."""
        from vaultmem.index.vector_index import build_apart

        rows = self.count()
        dim = int((self.meta() or {}).get("dim") or 384)
        sub_vectors = max(d for d in range(1, dim + 1) if dim % d == 0 and dim // d >= ANN_SUB_VECTOR_DIMS)
        partitions = max(16, rows // ANN_ROWS_PER_PARTITION)
        failed = build_apart(self.uri, partitions, sub_vectors)
        if failed:
            log.warning("building the vector index of %s rows failed (%s); searches read the table "
                        "in memory", rows, failed)
            self._write_meta(ann_failed_rows=rows)
            return
        self._write_meta(ann_rows=rows, ann_partitions=partitions, ann_failed_rows=0)

    @property
    def large(self) -> bool:
        """Whether searches go through the vector index instead of the in-memory table."""
        meta = self.meta() or {}   # (no vector index: no count asked for, as in most vaults)
        return bool(meta.get("ann_rows")) and self.count() >= ANN_AFTER_ROWS

    def nearest(self, vector, limit: int, where: str | None, columns: list[str]) -> list[dict]:
        """The `limit` rows nearest `vector`, through the vector index, with `columns` and
        `vector`: among the rows meeting `where` when it leaves out most of them
        (PREFILTER_BELOW_SHARE), otherwise among all rows, the caller's mask deciding."""
        import numpy as np

        dataset = self._dataset()   # one version: row ids are positions in it
        partitions = int((self.meta() or {}).get("ann_partitions") or 0)
        narrow = bool(where) and self._narrows(dataset, where)
        found = dataset.to_table(
            columns=["_distance"], with_row_id=True, filter=where if narrow else None, prefilter=narrow,
            nearest={"column": "vector", "q": np.asarray(vector, dtype=np.float32), "k": int(limit),
                     "nprobes": max(20, int(partitions * ANN_PROBED_SHARE)),
                     "refine_factor": max(2, -(-ANN_REFINED_ROWS // int(limit)))})
        return _taken(dataset, found.column("_rowid").to_pylist(), columns + ["vector"])

    def _narrows(self, dataset, where: str) -> bool:
        """Whether `where` leaves out more than PREFILTER_BELOW_SHARE of the rows (counted
        once a version: 0.4 ms with the bitmap indexes at 1M rows, a scan for `tag`)."""
        key = (dataset.version, where)
        share = self._shares.get(key)
        if share is None:
            if len(self._shares) > 64:
                self._shares.clear()
            share = self._shares[key] = dataset.count_rows(where) / max(1, dataset.count_rows())
        return share < PREFILTER_BELOW_SHARE

    def rewrite(self) -> dict:
        """Rewrite the table from its live rows alone, rebuild its indexes and delete every
        older version: data files, deletion files, transaction files (a delete's holds its
        predicate, i.e. the paths), full-text and B-tree index files. Afterwards no byte of
        a deleted row is left under `.vaultmem/index/` (a purge's erasure relies on it).
        Returns `{"rows", "versions_removed", "files_removed"}`."""
        import lance

        dataset = self._dataset()
        versions = len(dataset.versions())
        before = {p for p in self.dir.rglob("*") if p.is_file()}
        # Lance keeps the old fragments until the cleanup below, so the table can be read
        # while its overwrite is written: the rows stream through, never all in memory.
        self._reader = lance.write_dataset(dataset.scanner().to_reader(), self.uri, mode="overwrite",
                                           session=_session(), data_storage_version=DATA_STORAGE_VERSION)
        rows = self._reader.count_rows()
        self._write_meta(ann_rows=0)   # the overwrite left the old vector index behind
        if rows:
            self._build_indexes()
            if rows >= ANN_AFTER_ROWS:
                self._build_vector_index()
        else:
            self._write_meta(fts=False, pending=0)
        self._optimize(timedelta(0))
        self._snapshot = None
        after = {p for p in self.dir.rglob("*") if p.is_file()}
        return {"rows": rows, "versions_removed": max(0, versions - len(self._dataset().versions())),
                "files_removed": len(before - after)}

    # --- reads -------------------------------------------------------------------------
    def path_hashes(self) -> dict[str, str]:
        """Vault-relative path -> content hash of every indexed note."""
        data = self._dataset().to_table(columns=["path", "content_hash"]).to_pydict()
        return dict(zip(data["path"], data["content_hash"]))

    def rows(self, where: str | None = None, columns: list[str] | None = None) -> list[dict]:
        """Rows matching a SQL filter (all rows when None), without vectors unless asked."""
        columns = columns or [c for c in schema(1).names if c not in ("vector", "fts_text")]
        return self._dataset().to_table(columns=columns, filter=where).to_pylist()

    def snapshot(self) -> Snapshot:
        """Filter columns and the vector matrix, reloaded only when the table changed."""
        dataset = self._dataset()
        version = dataset.version
        if self._snapshot is not None and self._snapshot.version == version:
            return self._snapshot
        held = FILTER_COLUMNS if self.hits_on_demand else SNAPSHOT_COLUMNS
        data = dataset.to_table(columns=held + ["vector"])
        columns = {name: column_array(name, data.column(name).to_pylist()) for name in held}
        if self.hits_on_demand:
            taken = TakenRows(dataset, HIT_COLUMNS)   # this version's positions
            columns.update({name: taken.column(name, len(data)) for name in HIT_COLUMNS})
        self._snapshot = Snapshot(version=version, columns=columns, vectors=matrix(data))
        return self._snapshot

    def vectors_of(self, where: str) -> Snapshot:
        """The rows matching `where` with only their path, user and status and their
        vectors, read without the whole snapshot (`add` compares with the user's memories:
        converting every column of every row cost a cold `add` 0.2 s at 12k rows). The
        loaded snapshot serves when there is one."""
        import numpy as np

        if self._snapshot is not None and self._snapshot.version == self._dataset().version:
            return self._snapshot
        data = self._dataset().to_table(columns=["path", "user", "status", "vector"], filter=where)
        columns = {name: np.fromiter(data.column(name).to_pylist(), dtype=object, count=len(data))
                   for name in ("path", "user", "status")}
        return Snapshot(version=-1, columns=columns, vectors=matrix(data))

    def fts(self, query: str, where: str | None = None, limit: int = 50,
            columns: list[str] | None = None) -> list[dict]:
        """BM25 hits for `query` as `{"chunk_id", "_score"}`, best first; with `columns`,
        the hits' rows with those columns and `_score`.

        The query's words are matched as they are (a `MatchQuery`): a plain string would go
        through LanceDB's query parser, which reads `"tea"` as a phrase query and fails on
        an index built without positions. So no query text is rejected, and any error here
        (a bad `where`, a damaged index) is raised, never taken for "no keyword hits"."""
        from lance.query import MatchQuery

        text = cjk_bigrams(query).strip()
        if not text or not (self.meta() or {}).get("fts"):
            return []
        dataset = self._dataset()   # one version: row ids are positions in it
        found = dataset.to_table(columns=["chunk_id", "_score"], with_row_id=columns is not None, filter=where,
                                 prefilter=bool(where), full_text_query=MatchQuery(text, "fts_text"), limit=limit)
        rows = found.to_pydict()
        order = sorted(range(len(rows["_score"])), key=lambda i: -rows["_score"][i])
        if columns is None:
            return [{"chunk_id": rows["chunk_id"][i], "_score": rows["_score"][i]} for i in order]
        taken = _taken(dataset, [rows["_rowid"][i] for i in order], columns)   # the rows, by row id
        return [dict(row, _score=rows["_score"][i]) for row, i in zip(taken, order)]


def _taken(dataset, row_ids: list[int], columns: list[str]) -> list[dict]:
    """The rows of `dataset` with these row ids, in that order, with `columns`. The table
    has no stable row ids, so a row id is the row's address in this version of it, read
    straight from its data files: `dataset.take` wants positions, and a filter on chunk_id
    scans the B-tree and then the rows (pylance 14's `_take_rows`, pinned below 15)."""
    if not row_ids:
        return []
    return dataset._take_rows(row_ids, columns=list(dict.fromkeys(columns))).to_pylist()


def _session():
    """A Lance session whose metadata cache is capped at METADATA_CACHE_BYTES (Lance's own
    default is 1 GiB), one per process."""
    global _SESSION
    if _SESSION is None:
        import lance

        _SESSION = lance.Session(metadata_cache_size_bytes=METADATA_CACHE_BYTES)
    return _SESSION


_SESSION = None
