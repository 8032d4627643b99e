import numpy as np
import pytest

from vaultmem.errors import IndexUnavailable
from vaultmem.index.table import DATA_STORAGE_VERSION, ChunkIndex, cjk_bigrams


def row(n, text, path=None, status="active", vector=None, dim=4):
    rng = np.random.default_rng(n)
    vec = rng.random(dim).astype(np.float32) if vector is None else np.asarray(vector, np.float32)
    return {"chunk_id": f"N{n}#0", "note_id": f"N{n}", "path": path or f"Memory/Facts/n{n}.md",
            "title": f"n{n}", "type": "fact", "status": status, "user": "default",
            "tags": "|vaultmem/fact|", "entities": "", "created": "2026-11-01T09:00:00",
            "updated": "2026-11-01T09:00:00", "valid_from": "", "valid_to": "", "held_from": "",
            "importance": 0.5, "content_hash": f"h{n}", "source_messages": [f"m-{n}"],
            "sources": [], "text": text, "search_text": text, "keywords": f"n{n} fact",
            "vector": vec / np.linalg.norm(vec)}


@pytest.fixture
def index(tmp_path):
    index = ChunkIndex(tmp_path)
    index.reset("test-model", 4)
    return index


def test_cjk_runs_become_bigrams_and_other_text_stays():
    assert cjk_bigrams("用户最近在戒咖啡") .split() == ["用户", "户最", "最近", "近在", "在戒", "戒咖", "咖啡"]
    assert cjk_bigrams("I like 茶 a lot").split() == ["I", "like", "茶", "a", "lot"]


def test_full_text_finds_chinese_and_stemmed_english(index):
    index.replace([], [row(1, "用户最近在戒咖啡"), row(2, "The user is cutting back on coffee drinks")])
    index.maintain()
    assert [h["chunk_id"] for h in index.fts("咖啡")] == ["N1#0"]
    assert [h["chunk_id"] for h in index.fts("drinking")] == ["N2#0"]
    assert index.fts("n2 fact")[0]["chunk_id"] == "N2#0"   # keywords are searchable too
    assert index.fts("") == []


def test_rows_added_after_the_fts_index_are_found(index):
    index.replace([], [row(1, "tea with oat milk")])
    index.maintain()
    index.replace([], [row(2, "green tea in winter")])
    assert {h["chunk_id"] for h in index.fts("tea")} == {"N1#0", "N2#0"}


def test_filters_apply_inside_the_full_text_query(index):
    rows = [row(n, "coffee " * (n + 1), status="superseded") for n in range(30)]
    rows.append(row(99, "coffee once", status="active"))
    index.replace([], rows)
    index.maintain()
    hits = index.fts("coffee", where="status = 'active'", limit=5)
    assert [h["chunk_id"] for h in hits] == ["N99#0"]


def test_replace_swaps_all_chunks_of_a_path_and_delete_removes_them(index):
    index.replace([], [row(1, "old text", path="a.md"), row(2, "other", path="b.md")])
    index.replace(["a.md"], [row(3, "new text", path="a.md")])
    assert sorted(index.path_hashes().items()) == [("a.md", "h3"), ("b.md", "h2")]
    index.delete_paths(["a.md"])
    assert list(index.path_hashes()) == ["b.md"]
    assert index.count() == 1


def test_snapshot_follows_writes_and_ranked_rows_come_whole(index):
    index.replace([], [row(1, "first")])
    snap = index.snapshot()
    assert len(snap) == 1 and snap.vectors.shape == (1, 4)
    assert index.snapshot() is snap                      # unchanged table: cached
    index.replace([], [row(2, "second"), row(3, "second and third", path="p3.md")])
    snap = index.snapshot()
    assert sorted(snap.columns["chunk_id"]) == ["N1#0", "N2#0", "N3#0"]
    assert snap.offsets_of(["N2#0", "nope"]) == [list(snap.columns["chunk_id"]).index("N2#0")]
    index.delete_paths(["Memory/Facts/n1.md"])
    index.maintain(force=True)   # compacted: rows are read by their address in the version asked
    ranked = index.fts("second", columns=["chunk_id", "text", "source_messages"])
    assert {r["chunk_id"]: (r["text"], r["source_messages"]) for r in ranked} == {
        "N2#0": ("second", ["m-2"]), "N3#0": ("second and third", ["m-3"])}
    assert [r["_score"] for r in ranked] == [h["_score"] for h in index.fts("second")]
    assert ranked[0]["_score"] >= ranked[1]["_score"]


def test_tables_are_written_in_the_format_read_fast_at_random_and_prefilter_only_when_it_narrows(index):
    """New tables and a purge's rewrite use DATA_STORAGE_VERSION (2.1: a search of a large
    table reads its candidates' rows at random); a condition is checked before the vector
    index only when it leaves out most rows."""
    assert index._dataset().data_storage_version == DATA_STORAGE_VERSION
    index.replace([], [row(n, f"note {n}", status="superseded" if n < 2 else "active") for n in range(8)])
    dataset = index._dataset()
    assert index._narrows(dataset, "status = 'superseded'")       # 2 of 8 rows
    assert not index._narrows(dataset, "status = 'active'")       # 6 of 8
    index.rewrite()
    assert index._dataset().data_storage_version == DATA_STORAGE_VERSION and index.count() == 8


def test_own_writes_patch_the_snapshot_to_what_a_reload_would_give(index, tmp_path):
    index.replace([], [row(n, f"note {n}", path=f"p{n}.md") for n in range(5)])
    index.maintain()
    basis, _ = index.snapshot().projection()
    index.replace(["p1.md", "p3.md"], [row(7, "note 7, replacing p1", path="p1.md")])
    patched = index.snapshot()
    assert patched.vectors.flags.c_contiguous and patched.vectors.shape == (4, 4)
    kept_basis, projected = patched.cache["projection"]   # inherited: its rows follow the vectors
    assert kept_basis is basis and np.allclose(projected, patched.vectors @ basis, atol=1e-6)
    fresh = ChunkIndex(tmp_path).snapshot()
    assert patched.version == fresh.version
    order = np.argsort(patched.columns["chunk_id"]), np.argsort(fresh.columns["chunk_id"])
    for name in ("chunk_id", "path", "status", "importance"):
        assert list(patched.columns[name][order[0]]) == list(fresh.columns[name][order[1]])
    assert np.allclose(patched.vectors[order[0]], fresh.vectors[order[1]])
    index.delete_paths(["p0.md"])                     # a delete alone patches too
    assert sorted(index.snapshot().columns["path"]) == ["p1.md", "p2.md", "p4.md"]
    assert index.snapshot().vectors.shape == (3, 4)


def test_writes_by_another_handle_are_seen(index, tmp_path):
    index.replace([], [row(1, "first")])
    before = len(index.snapshot())
    ChunkIndex(tmp_path).replace([], [row(2, "from the daemon")])
    assert len(index.snapshot()) == before + 1


def test_model_is_recorded_and_checked(index, tmp_path):
    assert index.meta()["model"] == "test-model" and index.meta()["dim"] == 4
    index.check_model("test-model")
    with pytest.raises(IndexUnavailable, match="reindex --full"):
        index.check_model("paraphrase-multilingual-MiniLM-L12-v2")
    with pytest.raises(IndexUnavailable, match="run `vaultmem reindex`"):
        ChunkIndex(tmp_path / "elsewhere").check_model("test-model")


def test_the_index_is_a_lancedb_table_that_lancedb_opens_and_searches(index):
    """vaultmem writes the table with pylance; it stays a LanceDB table: lancedb opens it,
    finds rows by vector and by full text, and sees what vaultmem deleted as deleted."""
    import lancedb

    rows = [row(1, "The user is cutting back on coffee drinks"), row(2, "The user keeps bees"),
            row(3, "The user grows tomatoes", path="Memory/Facts/gone.md")]
    index.replace([], rows)
    index.maintain()
    index.delete_paths(["Memory/Facts/gone.md"])
    table = lancedb.connect(str(index.dir)).open_table("chunks")
    assert table.count_rows() == 2
    near = table.search(rows[1]["vector"]).limit(1).to_list()
    assert near[0]["chunk_id"] == "N2#0"
    assert [r["chunk_id"] for r in table.search("coffee", query_type="fts").limit(5).to_list()] == ["N1#0"]
    assert {i.index_type for i in table.list_indices()} >= {"FTS", "BTree"}


def test_the_full_text_index_has_lancedbs_settings(index):
    from vaultmem.index.table import FTS_PARAMS

    index.replace([], [row(1, "Running shoes"), row(2, "The user runs")])
    index.maintain()
    params = index._dataset().index_statistics("fts_text_idx")["indices"][0]["params"]
    assert {k: params[k] for k in FTS_PARAMS} == FTS_PARAMS
    assert [h["chunk_id"] for h in index.fts("run")] != []   # stemmed: runs, running


def test_from_ten_thousand_rows_the_vector_half_projects_and_keeps_the_exact_ten_best():
    """A snapshot's first search is exact; from PROJECT_AFTER_ROWS rows the next ones rank by
    the projection and score a share of the rows exactly (500 of 12,000 here), and the ten
    best of each query are still the exact product's. The vectors have a text collection's
    shape: 300 topics in a 96-dimensional space, spread over all 384 with noise, so that
    the 128 principal directions hold ~97 % of the variance (MiniLM's vectors of the perf
    vault: 97.3 %, of a LoCoMo conversation's chunks: 96.1 %)."""
    from vaultmem.index import snapshot as index_module
    from vaultmem.index.snapshot import Snapshot

    rng = np.random.default_rng(7)
    latent = rng.normal(size=(300, 96))[rng.integers(0, 300, 12_000)] + 0.5 * rng.normal(size=(12_000, 96))
    vectors = latent @ rng.normal(size=(96, 384)) / np.sqrt(96) + 0.25 * rng.normal(size=(12_000, 384))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    spectrum = np.linalg.eigvalsh(vectors.T @ vectors)[::-1]
    assert 0.95 < spectrum[:128].sum() / spectrum.sum() < 0.975
    snap = Snapshot(version=1, columns={"chunk_id": np.arange(12_000)}, vectors=vectors)
    mask = np.ones(len(vectors), dtype=bool)
    assert len(snap) >= index_module.PROJECT_AFTER_ROWS
    queries = vectors[rng.choice(12_000, 40, replace=False)] + 0.02 * rng.normal(size=(40, 384)).astype(np.float32)
    first, sims = snap.nearest_rows(queries[0], mask, len(snap), 60)
    assert sims is not None and "projection" not in snap.cache   # the first one is exact
    for query in queries:
        best, sims = snap.nearest_rows(query, mask, len(snap), 60)
        assert sims is None and "projection" in snap.cache
        exact = np.argsort(-(vectors @ query))[:10]
        assert set(exact) <= set(best.tolist())


def test_lance_metadata_cache_stays_within_its_cap(tmp_path, monkeypatch):
    """Lance caches the manifest and file metadata of every version it reads (1 GiB by
    default): a long extraction writes a version per step. Capped, it stays bounded."""
    import vaultmem.index.table as index_module

    def cached_after_edits(cap: int, where) -> int:
        monkeypatch.setattr(index_module, "METADATA_CACHE_BYTES", cap)
        monkeypatch.setattr(index_module, "_SESSION", None)   # a fresh process's session
        index = ChunkIndex(where)
        index.reset("test-model", 4)
        index.replace([], [row(n, f"note {n} about tea", path=f"p{n}.md") for n in range(200)])
        index.maintain()
        for n in range(90):   # 90 versions, each read by a search (uncapped: ~5.5 MiB cached)
            index.replace([f"p{n}.md"], [row(n, f"note {n} about coffee", path=f"p{n}.md")])
            index.fts("coffee")
            index.snapshot()
        session = index._dataset().session()
        return session.size_bytes() - session.index_cache_size_bytes()

    assert cached_after_edits(256 << 10, tmp_path / "capped") <= 256 << 10
    assert cached_after_edits(1 << 30, tmp_path / "uncapped") > 4 << 20   # what the cap bounds


def test_many_small_writes_are_compacted_before_they_slow_bm25(index):
    """Each edit the daemon indexes adds a fragment that BM25 reads (and a deletion file to
    the one the old version was in); maintain() compacts the table once there are
    OPTIMIZE_AFTER_FRAGMENTS, however few rows they hold."""
    from vaultmem.index.table import OPTIMIZE_AFTER_FRAGMENTS, OPTIMIZE_AFTER_ROWS

    notes = OPTIMIZE_AFTER_FRAGMENTS + 5
    index.replace([], [row(n, f"note {n} about tea", path=f"p{n}.md") for n in range(notes)])
    index.maintain()
    for n in range(OPTIMIZE_AFTER_FRAGMENTS - 2):   # a different note edited each time
        index.replace([f"p{n}.md"], [row(n, f"note {n} about coffee", path=f"p{n}.md")])
        index.maintain()
    assert len(index._dataset().get_fragments()) == OPTIMIZE_AFTER_FRAGMENTS - 1
    assert int(index.meta()["pending"]) < OPTIMIZE_AFTER_ROWS       # the row trigger is far off
    index.replace(["p50.md"], [row(50, "note 50 about cocoa now", path="p50.md")])
    index.maintain()
    assert len(index._dataset().get_fragments()) <= 2 and index.meta()["pending"] == 0
    assert [hit["chunk_id"] for hit in index.fts("cocoa")] == ["N50#0"]
    assert len(index.fts("coffee", limit=100)) == OPTIMIZE_AFTER_FRAGMENTS - 2
    assert len(index.fts("tea", limit=100)) == notes - OPTIMIZE_AFTER_FRAGMENTS + 1
    assert sorted(index.snapshot().columns["path"]) == sorted(f"p{n}.md" for n in range(notes))
