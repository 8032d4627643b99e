"""The chunk table's vector index, built in a process of its own.

    python -m vaultmem.index.vector_index .vaultmem/index/chunks.lance 250 48

Training an IVF-PQ index (k-means for the partitions, a codebook per sub-vector) peaked at
0.8-0.9 GB at a million rows, and a process keeps what its allocator once held: built in the
daemon, that would stay in its RSS for the rest of its life. `ChunkIndex.maintain` runs this
module as a child instead and reads the new version when it exits. Beside the vector index
it builds bitmap indexes of the short columns filtered searches narrow by.
"""

from __future__ import annotations

import subprocess
import sys

from vaultmem.index.snapshot import NARROWING_COLUMNS


def build(uri: str, partitions: int, sub_vectors: int) -> None:
    """The IVF-PQ index of `vector` (cosine: the vectors have norm 1) and the bitmaps."""
    import lance

    dataset = lance.dataset(uri)
    dataset.create_index("vector", index_type="IVF_PQ", metric="cosine", replace=True,
                         num_partitions=partitions, num_sub_vectors=sub_vectors)
    for column in NARROWING_COLUMNS:   # bitmap indexes
        dataset.create_scalar_index(column, "BITMAP", replace=True)


def build_apart(uri: str, partitions: int, sub_vectors: int, timeout: float = 3600.0) -> str | None:
    """`build` in a child process; None when it worked, else why not (its last words)."""
    import os
    from pathlib import Path

    import vaultmem

    # The child imports this vaultmem, wherever it was imported from (a checkout on sys.path).
    home = str(Path(vaultmem.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")])))
    try:
        done = subprocess.run([sys.executable, "-m", __name__, uri, str(partitions), str(sub_vectors)],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return None


def main(argv=None) -> int:
    uri, partitions, sub_vectors = (sys.argv[1:] if argv is None else argv)
    build(uri, int(partitions), int(sub_vectors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
