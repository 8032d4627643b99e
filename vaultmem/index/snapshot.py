"""The chunk table held in memory (`Snapshot`): its filterable and shown columns and its
vectors, and the vector half of a search over them (exact, or through the vectors' principal
directions past PROJECT_AFTER_ROWS rows), patched in place of a reload after each write.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache

# From this many rows the vector half of a search scores every row first in the
# PROJECTED_DIMS principal directions of the table's vectors, then exactly the
# PROJECTED_CANDIDATES best of those (`Snapshot.nearest_rows`). At 100k rows (the perf
# vault topped up with random vectors) the product with the whole matrix reads 150 MB and a
# search given its query vector took 27.8 ms here, this way 15.9 ms, with the same first hit
# for 200 of 200 questions and the same ten hits in the same order for 187 (96 directions
# and 1,000 candidates: 10-12 ms, 195 and 175). Below 50k rows the candidates are fewer,
# one row in 25 but at least 500: at 12k rows (the perf vault, 200 questions) the product
# with the whole matrix took 1.44 ms alone and ~2.7 ms beside BM25's thread, this way 0.67
# ms alone, with every question's exact ten best among its candidates and 99.97 % of its
# sixty (2,000 candidates: 100 %, 1.16 ms). Below 10k rows the product is exact.
PROJECT_AFTER_ROWS = 10_000
PROJECTED_DIMS = 128
PROJECTED_CANDIDATES = 2000
PROJECTED_SHARE = 25
MIN_PROJECTED_CANDIDATES = 500
_PROJECTION_SAMPLE = 20_000   # rows the principal directions are computed from
# Short columns filters narrow by: a search holding the table narrows LanceDB's BM25 scan by
# the values its allowed rows take in them (`search._narrowing`); past ANN_AFTER_ROWS they
# have bitmap indexes (`vector_index`), with which a prefiltered vector search at 1M rows
# took 18-28 ms instead of 57-96.
NARROWING_COLUMNS = ("type", "user", "status")
# Filter columns compared with == or <= on every query; the others stay Python objects.
SHORT_COLUMNS = {"type", "status", "user", "created", "valid_from", "valid_to", "held_from"}
# Held in memory too, so that a hit is built without reading the table again.
HIT_COLUMNS = ["text", "fts_text", "source_messages", "sources"]
FILTER_COLUMNS = ["chunk_id", "note_id", "path", "title", "type", "status", "user", "tags",
                  "entities", "created", "updated", "valid_from", "valid_to", "held_from", "importance"]
SNAPSHOT_COLUMNS = FILTER_COLUMNS + HIT_COLUMNS


@dataclass
class Snapshot:
    """The filterable and shown columns and the vectors of the whole table, held in memory
    so that a search reads nothing from disk but the BM25 index."""

    version: int
    columns: dict          # column name -> numpy array (object dtype for strings)
    vectors: object        # (n, dim) float32, rows of norm 1
    _positions: dict | None = None
    cache: dict = field(default_factory=dict)   # derived arrays and filter masks

    def __len__(self):
        return len(self.vectors)

    def offsets_of(self, chunk_ids) -> list[int]:
        """Row offsets of the given chunk ids (unknown ids are skipped)."""
        positions = self.positions()
        return [positions[c] for c in chunk_ids if c in positions]

    def positions(self) -> dict:
        """chunk id -> row offset, built once per snapshot."""
        if self._positions is None:
            self._positions = {c: i for i, c in enumerate(self.columns["chunk_id"])}
        return self._positions

    def nearest_rows(self, vector, mask, allowed: int, limit: int):
        """(offsets of the `limit` rows passing `mask` with the largest dot product with
        `vector`, in no order; every row's dot product, or None where not computed).

        Exact below `PROJECT_AFTER_ROWS` rows and for a snapshot's first search; otherwise
        the rows are ranked first by their projection on the table's principal directions
        and only the best of that ranking (`PROJECTED_CANDIDATES` at most) are scored exactly."""
        import numpy as np

        # A snapshot's first search is exact: a one-shot command would pay more for the
        # projection (~0.3 s at 100k rows) than it saves; the daemon's next ones use it.
        first = not self.cache.get("searched") and "projection" not in self.cache
        self.cache["searched"] = True
        if len(self) < PROJECT_AFTER_ROWS or first:
            with one_blas_thread():
                sims = self.vectors @ vector     # one BLAS call beats gathering the allowed rows
            sims[~mask] = -np.inf
            top = min(allowed, limit)
            best = np.argpartition(-sims, top - 1)[:top] if top < len(sims) else np.flatnonzero(mask)
            return best, sims
        basis, projected = self.projection()
        with one_blas_thread():
            rough = projected @ (vector @ basis)
        rough[~mask] = -np.inf
        wanted = min(PROJECTED_CANDIDATES, max(MIN_PROJECTED_CANDIDATES, len(self) // PROJECTED_SHARE))
        pool = min(allowed, max(wanted, limit))
        rows = np.argpartition(-rough, pool - 1)[:pool] if pool < len(rough) else np.flatnonzero(mask)
        exact = self.vectors[rows] @ vector
        top = min(len(rows), limit)
        return (rows[np.argpartition(-exact, top - 1)[:top]] if top < len(rows) else rows), None

    def projection(self):
        """(basis (dim, PROJECTED_DIMS), the rows projected on it), made once per snapshot
        (a patched snapshot inherits them)."""
        found = self.cache.get("projection")
        if found is None:
            # One BLAS thread: another one's buffers stay in the daemon's RSS (+8 MB at 12k rows).
            with one_blas_thread():
                basis = _principal_directions(self.vectors)
                found = self.cache["projection"] = (basis, _project(self.vectors, basis))
        return found


@lru_cache(maxsize=1)
def _blas_limit():
    """threadpoolctl's `limit`, with the BLAS libraries found once (finding them per query
    costs milliseconds); None when threadpoolctl cannot read this numpy's BLAS."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:  # an unknown BLAS build: run as configured
        return None


def one_blas_thread():
    """A context that keeps numpy's BLAS to one thread. The query's product with the
    vector matrix is bound by memory, not arithmetic, and OpenBLAS's second thread waking
    up next to the model's made it cost 30 ms instead of 1 (12k rows, 2 busy cores);
    the sums are the same either way (each row's dot product is one thread's)."""
    limit = _blas_limit()
    return limit(limits=1, user_api="blas") if limit is not None else nullcontext()


def _principal_directions(vectors):
    """The PROJECTED_DIMS directions of most variance of a sample of `vectors` (fixed seed:
    the same table gives the same basis)."""
    import numpy as np

    rng = np.random.default_rng(0)
    sample = vectors if len(vectors) <= _PROJECTION_SAMPLE else \
        vectors[np.sort(rng.choice(len(vectors), _PROJECTION_SAMPLE, replace=False))]
    _, directions = np.linalg.eigh(sample.T @ sample)
    return np.ascontiguousarray(directions[:, ::-1][:, :PROJECTED_DIMS], dtype=np.float32)


def _project(vectors, basis):
    import numpy as np

    return np.ascontiguousarray(vectors @ basis, dtype=np.float32)


def matrix(data):
    """A table's `vector` column as one (rows, dim) float32 matrix."""
    import numpy as np

    vectors = data.column("vector").combine_chunks()
    dim = vectors.type.list_size
    matrix = vectors.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    return matrix.reshape(-1, dim) if len(data) else np.zeros((0, dim), np.float32)


class TakenRows:
    """The HIT_COLUMNS of a snapshot read without them (`ChunkIndex.hits_on_demand`, a
    one-shot command's search): a search looks at them for its ~120 candidates only, so
    they are read for those rows, by position in the version the snapshot was read from,
    all of them at once, and kept. At 42k chunks, reading them for every row cost a cold
    `search` 0.3 s of its ~1 s."""

    def __init__(self, dataset, names: list[str]):
        self.dataset, self.names, self.rows = dataset, names, {}

    def gather(self, offsets: list[int]) -> None:
        missing = sorted({o for o in offsets if o not in self.rows})
        if missing:
            taken = self.dataset.take(missing, columns=self.names).to_pylist()
            self.rows.update(zip(missing, taken))

    def column(self, name: str, length: int) -> "TakenColumn":
        return TakenColumn(self, name, length)


class TakenColumn:
    """One column of `TakenRows`, indexed as the numpy arrays beside it are: by an offset
    or an array of offsets."""

    __slots__ = ("source", "name", "length")

    def __init__(self, source: TakenRows, name: str, length: int):
        self.source, self.name, self.length = source, name, length

    def __len__(self):
        return self.length

    def __getitem__(self, key):
        import numpy as np

        if isinstance(key, (int, np.integer)):
            self.source.gather([int(key)])
            return self.source.rows[int(key)][self.name]
        key = np.asarray(key)
        offsets = (np.flatnonzero(key) if key.dtype == bool else key).tolist()
        self.source.gather(offsets)
        rows = self.source.rows
        return np.fromiter((rows[o][self.name] for o in offsets), dtype=object, count=len(offsets))


def of_rows(rows: list[dict], columns=SNAPSHOT_COLUMNS) -> Snapshot:
    """Rows as dicts (read from the table, or a chunk of the no-index fallback) as a Snapshot
    of just them: their `columns`, and their vectors where they have a `vector`."""
    import numpy as np

    if rows and "vector" in rows[0]:
        vectors = np.array([r["vector"] for r in rows], dtype=np.float32).reshape(len(rows), -1)
    else:
        vectors = np.zeros((len(rows), 1), dtype=np.float32)
    return Snapshot(version=-1, columns={name: column_array(name, [r[name] for r in rows]) for name in columns},
                    vectors=vectors)


def column_array(name: str, values: list):
    import numpy as np

    if name == "importance":
        return np.array(values, dtype=np.float32)
    if name in SHORT_COLUMNS:  # fixed-width strings compare in C, not per object
        return np.array(values, dtype=str) if values else np.array([], dtype="U1")
    # fromiter keeps lists (source_messages) as elements instead of a 2-D array.
    return np.fromiter(values, dtype=object, count=len(values))


def patched(snap: Snapshot, paths, rows: list[dict], version: int) -> Snapshot:
    """`snap` without the chunks of `paths` and with `rows` added, as a new Snapshot. Each
    array is written once into its new size: a gather and then a stack held three copies of
    the vectors at once (six edits at 12,200 rows in a scratch loop: RSS 340 -> 290 MB)."""
    import numpy as np

    gone = set(paths)
    keep = np.fromiter((p not in gone for p in snap.columns["path"]), bool, len(snap))
    columns = {name: np.concatenate([snap.columns[name][keep], column_array(name, [r[name] for r in rows])])
               for name in SNAPSHOT_COLUMNS}
    added = np.array([r["vector"] for r in rows], dtype=np.float32).reshape(len(rows), snap.vectors.shape[1])
    patched = Snapshot(version=version, columns=columns, vectors=_kept_then(snap.vectors, keep, added))
    if "projection" in snap.cache:  # the same basis, the new rows projected on it
        basis, projected = snap.cache["projection"]
        patched.cache["projection"] = (basis, _kept_then(projected, keep, _project(added, basis)))
    return patched


def _kept_then(matrix, keep, added):
    """The rows of `matrix` where `keep`, then `added`, in one new C-contiguous array."""
    import numpy as np

    kept = int(np.count_nonzero(keep))
    out = np.empty((kept + len(added), matrix.shape[1]), dtype=matrix.dtype)
    np.compress(keep, matrix, axis=0, out=out[:kept])
    out[kept:] = added
    return out
