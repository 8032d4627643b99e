"""A first index of many notes: every core, resumable, with progress and time left (issue 36).

Real parts: the bundled model, real LanceDB tables, a real `vaultmem reindex` subprocess."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from vaultmem.index import ingest
from vaultmem.index.table import ChunkIndex
from vaultmem.store.vault import Vault

TOPICS = ["the garden and its tomatoes", "a trip to Lisbon in May", "the quarterly budget review",
          "learning the cello", "a bug in the build server", "the book club's next novel"]


def person_notes(root: Path, count: int) -> None:
    """`count` notes of a person's own, three short paragraphs each."""
    for n in range(count):
        topic = TOPICS[n % len(TOPICS)]
        body = "\n\n".join(f"## Part {p}\n\nNote {n}, part {p}: thoughts on {topic}, written on day {n + p}."
                           for p in range(3))
        path = root / "Notes" / f"note {n:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")


class Stop(Exception):
    """Stands for Ctrl-C / SIGTERM arriving while the index is being built."""


def test_an_index_stopped_halfway_keeps_what_it_wrote_and_the_next_sync_embeds_the_rest(
        tmp_path, indexer_for, monkeypatch):
    root = tmp_path / "vault"
    person_notes(root, 24)
    monkeypatch.setattr(ingest, "EMBED_BATCH_CHUNKS", 12)   # many batches from few notes
    indexer = indexer_for(Vault(root))
    seen = []

    def stop_after_two_batches(done, total):
        seen.append((done, total))
        if len(seen) == 3:      # (0, total), then one call per batch
            raise Stop

    try:
        indexer.sync(progress=stop_after_two_batches)
    except Stop:
        pass
    total = seen[0][1]
    kept = ChunkIndex(root)
    written = kept.count()
    assert 0 < written < total and written == seen[-1][0]
    kept_paths = set(kept.path_hashes())

    resumed = indexer_for(Vault(root)).sync()
    assert resumed.rebuilt is None                           # not started over
    assert resumed.chunks == total - written                 # only the rest embedded
    assert resumed.unchanged == len(kept_paths) and resumed.added == 24 - len(kept_paths)
    again = ChunkIndex(root)
    assert again.count() == total and len(again.path_hashes()) == 24
    # The same rows as an index built in one go.
    fresh = tmp_path / "fresh"
    person_notes(fresh, 24)
    indexer_for(Vault(fresh)).sync()
    ids = lambda index: sorted(r["chunk_id"] for r in index.rows(columns=["chunk_id"]))  # noqa: E731
    assert ids(again) == ids(ChunkIndex(fresh))


def test_bulk_encoding_on_every_core_gives_the_same_vectors(embedder):
    # Every length of 0-39 "and more"s three times: batches of short and of long texts, many
    # more batches than threads.
    texts = [f"Note {n}: thoughts on {TOPICS[n % len(TOPICS)]}, " + "and more " * (n % 40) for n in range(120)]
    alone = embedder.backend.encode(texts, 16)
    tokens_alone = embedder.backend.token_vectors(texts[:50], 8)
    with embedder.bulk(2):
        assert embedder.backend.model.workers == 2
        together = embedder.backend.encode(texts, 16)
        tokens_together = embedder.backend.token_vectors(texts[:50], 8)
    assert embedder.backend.model.workers == 1
    np.testing.assert_allclose(together, alone, atol=1e-5)
    for (a, offsets_a), (b, offsets_b) in zip(tokens_alone, tokens_together):
        assert offsets_a == offsets_b
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_a_big_sync_encodes_in_bulk_and_a_small_one_does_not(tmp_path, indexer_for, embedder, monkeypatch):
    root = tmp_path / "vault"
    person_notes(root, 8)
    used = []
    real = type(embedder).bulk

    def spy(self, workers=None):
        used.append(workers)
        return real(self, workers)

    monkeypatch.setattr(type(embedder), "bulk", spy)
    monkeypatch.setattr(ingest, "BULK_CHUNKS", 10**6)
    indexer_for(Vault(root)).sync()
    assert used == []
    monkeypatch.setattr(ingest, "BULK_CHUNKS", 4)
    indexer_for(Vault(root)).sync(full=True)
    assert used == [None]       # every core


def test_reindex_shows_its_rate_and_time_left_and_says_how_to_resume(tmp_path):
    root = tmp_path / "vault"
    person_notes(root, 12)
    vaultmem = str(Path(sys.executable).with_name("vaultmem"))
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    assert subprocess.run([vaultmem, "init", str(root)], capture_output=True, env=env, timeout=120).returncode == 0
    done = subprocess.run([vaultmem, "--vault", str(root), "reindex", "--full"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = re.findall(r"embedding ([\d,]+)/([\d,]+) chunks(.*)", done.stderr)
    assert lines and lines[0][0] == "0"
    last = lines[-1]
    assert last[0] == last[1] and re.fullmatch(r" · [\d,]+ chunks/s · ~\d+ s left", last[2]), done.stderr
    assert f"({last[1]} chunks" in done.stdout


def test_a_daemon_building_the_index_says_how_many_chunks_and_the_time_left(monkeypatch):
    import pytest

    from vaultmem.cli.daemon import _scan_text
    from vaultmem.daemon import worker

    now = [100.0]
    monkeypatch.setattr(worker.time, "monotonic", lambda: now[0])
    scan = worker.StartupScan()
    scan.begin()
    scan.building()
    assert scan.seconds_left() is None and scan.describe() == "building the index"
    scan.embedded(512, 42_000)          # the first report: the rate is timed from here
    now[0] += 60
    scan.embedded(6_512, 42_000)        # 100 chunks/s
    assert scan.seconds_left() == pytest.approx(354.88)
    assert scan.describe() == "6,512 of 42,000 chunks embedded, ~6 min left"
    assert scan.to_dict()["seconds_left"] == 355
    assert _scan_text(scan.to_dict()).startswith("building, 6,512 of 42,000 chunks embedded, ~6 min left")
    assert "~6 min left" in scan.warning()
