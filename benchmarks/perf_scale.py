"""perf.py's figures past memory (issue 36): a table grown to a million chunks, searched
through its vector index, with the recall of that index against exact search and the
daemon's memory while it answers.

The rows added are not random vectors (in 384 dimensions every random vector is about as far
from every other, the hardest case for any approximate index and unlike any text): each is
a mixture of two of the vault's own chunk vectors and a little noise,
normalise(a + 0.6 b + 0.3 g / sqrt(dim)), so that neighbourhoods look like those of real
embeddings, with a generated sentence as its text. The rows are chunks of real notes (a
thousand a note, under `Archive/Grown/`) recorded in `state.db` as indexed, so that a daemon
started on the vault finds them unchanged rather than removing rows whose notes are gone.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from perf_daemon import measure_daemon_start, measure_warm_cli
from perf_runtime import cli, percentile, process_memory
from perf_vault import sentence

CHUNKS_A_NOTE = 1000


def grow_table(root: Path, target: int, batch: int = 20_000) -> dict:
    """Top the index up to `target` rows of mixtures of its own vectors, then `maintain` it
    (the full-text index and, past ANN_AFTER_ROWS, the vector index)."""
    import numpy as np

    from vaultmem.index.state import FileStat, State
    from vaultmem.index.table import ChunkIndex
    from vaultmem.store.note import content_hash

    index = ChunkIndex(root)
    real = index.snapshot().vectors.copy()
    index.close()
    missing, rng, words = target - len(real), np.random.default_rng(11), random.Random(11)
    types = ["fact", "preference", "event", "procedure", "note"]
    started = time.perf_counter()
    notes, stats = -(-max(0, missing) // CHUNKS_A_NOTE), []
    for number in range(notes):
        path = root / "Archive" / "Grown" / f"{number}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = f"# Grown {number}\n\nA note standing for {CHUNKS_A_NOTE} chunks of a grown table.\n".encode()
        path.write_bytes(data)
        st = path.stat()
        stats.append(FileStat(f"Archive/Grown/{number}.md", st.st_size, st.st_mtime_ns, content_hash(data)))
    for start in range(0, max(0, missing), batch):
        size = min(batch, missing - start)
        mixed = real[rng.integers(0, len(real), size)] + 0.6 * real[rng.integers(0, len(real), size)] \
            + 0.3 * rng.standard_normal((size, real.shape[1])).astype(np.float32) / np.sqrt(real.shape[1])
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        rows = []
        for i, vector in enumerate(mixed.astype(np.float32)):
            number = start + i
            kind = types[number % len(types)]
            text = sentence(words, "fact" if kind == "note" else kind)
            note = stats[number // CHUNKS_A_NOTE]
            rows.append({"chunk_id": f"grown-{number}#0", "note_id": f"grown-{number // CHUNKS_A_NOTE}",
                         "path": note.path, "title": f"Grown {number // CHUNKS_A_NOTE}",
                         "type": kind, "status": "active", "user": "default",
                         "tags": "" if kind == "note" else f"|vaultmem/{kind}|", "entities": "",
                         "created": "2025-06-01T10:00:00", "updated": "2025-06-01T10:00:00", "valid_from": "",
                         "valid_to": "", "importance": 0.5, "content_hash": note.content_hash,
                         "source_messages": [],
                         "sources": [], "text": text, "search_text": text, "keywords": "", "vector": vector})
        index.replace([], rows)
        index.close()   # no snapshot kept while growing
    State(root).put_files(stats)
    inserted = time.perf_counter() - started
    started = time.perf_counter()
    index.maintain(force=True)
    maintained = time.perf_counter() - started
    meta = index.meta() or {}
    return {"large_chunks": index.count(), "large_vectors": "mixtures of the vault's own chunk vectors",
            "large_insert_s": inserted, "large_maintain_s": maintained,
            "large_ann_index": bool(meta.get("ann_rows")), "large_index_mb": _size_mb(root / ".vaultmem" / "index")}


def measure_fold(root: Path, rows: int = 1000) -> dict:
    """What folding `rows` new rows into the grown table's indexes costs (`maintain(force=True)`:
    compaction, full-text and vector index), as the daemon does after many edits."""
    from vaultmem.index.table import ChunkIndex

    index = ChunkIndex(root)
    sample = index._dataset().to_table(filter="chunk_id = 'grown-1#0'").to_pylist()[0]
    sample.pop("fts_text")
    # More chunks of the first grown note (the state records its file as indexed).
    index.replace([], [dict(sample, chunk_id=f"fold-{n}#0", keywords="") for n in range(rows)])
    index.close()
    started = time.perf_counter()
    index.maintain(force=True)
    return {"large_fold_rows": rows, "large_fold_s": time.perf_counter() - started}


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def measure_ann_recall(root: Path, embedder, texts: list[str]) -> dict:
    """recall@10 of the vector index (as searches ask it: `ChunkIndex.nearest`, no filter)
    against the exact ten nearest rows, by a product with every vector read block by block."""
    import numpy as np

    from vaultmem.index.table import ChunkIndex

    index = ChunkIndex(root)
    if not index.large:
        raise RuntimeError(f"the table of {index.count()} rows is searched in memory, not through a vector index")
    queries = np.stack([embedder.encode_query(t) for t in texts]).astype(np.float32)
    best = np.full((len(queries), 10), -np.inf, dtype=np.float32)
    ids = np.empty((len(queries), 10), dtype=object)
    for part in index._dataset().to_batches(columns=["chunk_id", "vector"], batch_size=50_000):
        vectors = part.column("vector")
        matrix = vectors.flatten().to_numpy(zero_copy_only=False).reshape(-1, vectors.type.list_size)
        names = np.array(part.column("chunk_id").to_pylist(), dtype=object)
        scores = queries @ matrix.T
        merged = np.concatenate([best, scores], axis=1)
        merged_ids = np.concatenate([ids, np.broadcast_to(names, scores.shape)], axis=1)
        top = np.argsort(-merged, axis=1)[:, :10]
        best, ids = np.take_along_axis(merged, top, 1), np.take_along_axis(merged_ids, top, 1)
    found, times = [], []
    for query, exact in zip(queries, ids):
        started = time.perf_counter()
        near = index.nearest(query, 10, None, ["chunk_id"])
        times.append(1000 * (time.perf_counter() - started))
        found.append(len({r["chunk_id"] for r in near} & set(exact)) / 10)
    return {"large_ann_recall_at_10": float(np.mean(found)), "large_ann_p50_ms": percentile(times, 0.5),
            "large_ann_queries": len(texts)}


def measure_large_daemon(root: Path, runtime: str, texts: list[str]) -> dict:
    """The daemon over the grown table: warm CLI searches, and its RSS after them."""
    daemon = {}
    try:
        start = measure_daemon_start(root, runtime, daemon)
        warm = measure_warm_cli(root, texts, None)
        memory = process_memory(daemon["pid"])
    finally:
        cli(root, "daemon", "stop", "--json")
    return {"large_daemon_start_s": start["daemon_start_s"], "large_warm_search_s": warm["warm_search_s"],
            "large_warm_search_p95_s": warm["warm_search_p95_s"], "large_daemon_rss_mb": memory["rss_mb"],
            "large_daemon_peak_rss_mb": memory["peak_rss_mb"]}
