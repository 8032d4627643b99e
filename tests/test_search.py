import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import copy_sample_vault, memory_meta, write_note

from vaultmem.api import Memory
from vaultmem.cli import cli
from vaultmem.retrieve.ranking import WHEN_BONUS

# SPEC §5's HIT, plus the days it held: `valid_from` (when it was said) and `valid_to`.
HIT_KEYS = {"id", "path", "type", "title", "text", "score", "status", "created", "updated",
            "valid_from", "valid_to", "source_messages", "sources"}


@pytest.fixture(scope="module")
def memory(tmp_path_factory, embedder):
    """The sample vault, indexed once for this module, with the shared model."""
    mem = Memory(copy_sample_vault(tmp_path_factory.mktemp("search") / "vault"), embedder=embedder)
    mem.reindex()
    return mem


def titles(result):
    return [hit["title"] for hit in result["hits"]]


def test_english_question_finds_its_memory_by_meaning_alone(memory):
    result = memory.search("What is the user trying to give up?")
    assert titles(result)[0] == "Cutting back on coffee"
    assert set(result["hits"][0]) == HIT_KEYS
    assert result["query"] == "What is the user trying to give up?" and "warning" not in result


def test_chinese_keyword_finds_the_chinese_memory(memory):
    assert titles(memory.search("咖啡"))[0] == "最近在戒咖啡"
    assert titles(memory.search("乌龙茶"))[0] == "喜欢喝乌龙茶"


def test_type_tag_user_and_since_filters(memory):
    procedures = memory.search("how do I ship the garden planner?", type="procedure")["hits"]
    assert procedures and {h["type"] for h in procedures} == {"procedure"}
    assert titles(memory.search("where is the user travelling?", tag="travel")) == ["Trip to Tokyo in December"]
    assert memory.search("coffee", user="mei")["hits"] == []
    recent = memory.search("coffee", since="2026-11-29")["hits"]
    assert [h["title"] for h in recent] == ["Cutting back on coffee"]


def test_superseded_memory_is_hidden_unless_all(memory):
    question = "does the user take milk in tea?"
    default = titles(memory.search(question))
    assert default[0] == "Now drinks tea without milk" and "Likes oat milk in tea" not in default
    everything = memory.search(question, all=True)["hits"]
    assert {"Likes oat milk in tea": "superseded"}.items() <= {h["title"]: h["status"] for h in everything}.items()


def test_as_of_returns_what_was_valid_on_that_date(memory):
    question = "does the user take milk in tea?"
    then = titles(memory.search(question, as_of="2026-10-01"))
    assert then[0] == "Likes oat milk in tea" and "Now drinks tea without milk" not in then
    later = titles(memory.search(question, as_of="2026-11-25"))
    assert later[0] == "Now drinks tea without milk" and "Likes oat milk in tea" not in later
    assert "Trip to Tokyo in December" in titles(memory.search("where is the user?", as_of="2026-12-07"))
    assert "Trip to Tokyo in December" not in titles(memory.search("where is the user?", as_of="2026-12-20"))


def test_unrelated_question_gets_no_hits(memory):
    assert memory.search("What is the capital of Mongolia?")["hits"] == []
    assert memory.context("What is the capital of Mongolia?")["text"] == "No relevant memories."


def test_search_hits_are_recorded_as_accesses(memory):
    top = memory.search("Who is the user's partner?")["hits"][0]
    assert memory.indexer.state.access_stats(top["id"])["count"] >= 1


def test_filters_apply_before_top_k(tmp_path, embedder):
    root = tmp_path / "vault"
    for n in range(40):
        write_note(root, f"Memory/Facts/Green tea {n}.md", memory_meta(f"01T{n:02d}"),
                   f"The user likes green tea, variant {n}.")
    write_note(root, "Memory/Events/Kyoto.md", memory_meta("01KYOTO", type="event"),
               "The user once visited a small tea garden in Kyoto.")
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    assert titles(mem.search("green tea", k=1, type="event")) == ["Kyoto"]


def test_missing_or_broken_index_falls_back_to_a_keyword_scan(tmp_path, embedder):
    mem = Memory(copy_sample_vault(tmp_path / "vault"), embedder=embedder)
    result = mem.search("coffee")
    assert "keyword scan" in result["warning"]
    assert "Cutting back on coffee" in titles(result)
    assert all(set(h) == HIT_KEYS for h in result["hits"])
    mem.reindex()
    index_dir = mem.vault.root / ".vaultmem" / "index" / "chunks.lance"
    shutil.rmtree(index_dir)
    index_dir.mkdir()
    (index_dir / "garbage").write_text("not lance")
    fresh = Memory(mem.vault.root, embedder=embedder)
    result = fresh.search("coffee")
    assert "warning" in result and "Cutting back on coffee" in titles(result)


def test_cli_search_json_and_fallback_warning_on_stderr(tmp_path):
    root = copy_sample_vault(tmp_path / "vault")
    runner = CliRunner()
    result = runner.invoke(cli, ["--vault", str(root), "search", "oat milk", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["query"] == "oat milk" and "keyword scan" in data["warning"]
    assert "keyword scan" in result.stderr

    result = runner.invoke(cli, ["--vault", str(root), "reindex", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] > 0
    result = runner.invoke(cli, ["--vault", str(root), "search", "What is the user trying to give up?",
                                 "-k", "3", "--json"])
    data = json.loads(result.stdout)
    assert result.stderr == "" or "warning" not in result.stderr
    assert data["hits"][0]["title"] == "Cutting back on coffee"
    assert all(set(h) == HIT_KEYS for h in data["hits"]) and len(data["hits"]) <= 3

    result = runner.invoke(cli, ["--vault", str(root), "search", "when", "--as-of", "someday"])
    assert result.exit_code != 0 and "YYYY-MM-DD" in result.output


def test_an_edit_synced_by_path_is_searchable_at_once(tmp_path, embedder):
    mem = Memory(copy_sample_vault(tmp_path / "vault"), embedder=embedder)
    mem.reindex()
    assert "piano" in mem.search("Does the user's partner play the cello?")["hits"][0]["text"]
    note = mem.vault.root / "Memory/Facts/Partner is Mei.md"
    note.write_text(note.read_text().replace("who teaches piano", "who plays the cello"))
    mem.indexer.sync([note])
    hits = mem.search("Does the user's partner play the cello?")["hits"]
    assert hits[0]["title"] == "Partner is Mei" and "cello" in hits[0]["text"]
    assert mem.searcher.index is mem.indexer.index     # one snapshot, patched in place


def when_vault(root, embedder, notes, model=None):
    from vaultmem.api import init

    init(root, model=model or embedder.name)
    for title, meta, body in notes:
        write_note(root, title, meta, body)
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    return mem


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_question_asking_when_favours_what_says_when(tmp_path, embedder, multilingual, language):
    if language == "en":
        notes = [("Memory/Facts/New car.md", memory_meta("01CAR"), "The user's new car is a BYD Song, a plug-in hybrid."),
                 ("Memory/Events/Picked up.md", memory_meta("01PICK", type="event"),
                  "The user picked it up last Saturday after work.")]
        mem = when_vault(tmp_path / "vault", embedder, notes)
        asks, other = "When did the user pick up the new car?", "What car does the user drive?"
    else:
        notes = [("Memory/Facts/New car.md", memory_meta("01CAR"), "用户的新车是比亚迪宋PLUS，插混的。"),
                 ("Memory/Events/Picked up.md", memory_meta("01PICK", type="event"), "上周六下班后去4S店提的车。")]
        mem = when_vault(tmp_path / "vault", multilingual, notes)
        asks, other = "用户哪天提的车？", "用户开的是什么车？"
    hits = mem.searcher.search(asks, k=2)
    assert [h.title for h in hits] == ["Picked up", "New car"]
    assert hits[0].parts["when"] == WHEN_BONUS and "when" not in hits[1].parts
    # a question that does not ask when: no bonus anywhere
    assert not any("when" in h.parts for h in mem.searcher.search(other, k=2))


QUESTIONS = ["What is the user trying to give up?", "咖啡", "where is the user travelling?",
             "does the user take milk in tea?", "how do I ship the garden planner?", "Who is Mei?",
             "用中文回答", "what editor theme?"]


def test_a_large_vault_ranks_by_projection_first_and_keeps_the_same_hits(tmp_path, embedder, monkeypatch):
    # Past PROJECT_AFTER_ROWS chunks the vector half ranks every row by its projection on
    # the table's principal directions, then scores the best PROJECTED_CANDIDATES exactly.
    # With as many candidates as rows that is exact again, so every hit (filters included)
    # must be the whole product's; with few candidates the exact scores still hold.
    from vaultmem.index import snapshot as index_module

    mem = Memory(copy_sample_vault(tmp_path / "vault"), embedder=embedder)
    mem.reindex()
    asks = [(q, {}) for q in QUESTIONS] + [("coffee", {"since": "2026-11-29"}), ("tea", {"type": "preference"}),
                                           ("does the user take milk in tea?", {"all": True}),
                                           ("does the user take milk in tea?", {"as_of": "2026-10-01"})]
    # Through the searcher, which records no accesses (they would move later scores).
    exact = [mem.searcher.search(q, **kw) for q, kw in asks]
    snap = mem.searcher.index.snapshot()
    assert "projection" not in snap.cache

    monkeypatch.setattr(index_module, "PROJECT_AFTER_ROWS", 1)
    monkeypatch.setattr(index_module, "PROJECTED_DIMS", 16)
    monkeypatch.setattr(index_module, "PROJECTED_CANDIDATES", len(snap))
    projected = [mem.searcher.search(q, **kw) for q, kw in asks]
    basis, rows = snap.cache["projection"]
    assert basis.shape == (snap.vectors.shape[1], 16) and rows.shape == (len(snap), 16)
    for before, after in zip(exact, projected):
        assert [(h.id, round(h.score, 4)) for h in after] == [(h.id, round(h.score, 4)) for h in before]
    assert all(exact) and exact[0][0].title == "Cutting back on coffee"

    monkeypatch.setattr(index_module, "PROJECTED_CANDIDATES", 5)
    few = mem.searcher.search(QUESTIONS[0])
    scores = {h.id: h.score for h in exact[0]}
    assert few[0].title == "Cutting back on coffee" and all(abs(scores[h.id] - h.score) < 1e-4 for h in few if h.id in scores)

    # A write patches the snapshot: the new row is projected on the same basis.
    write_note(mem.vault.root, "Memory/Facts/Plays chess.md", memory_meta("01CHESS"), "The user plays chess on Sundays.")
    mem.reindex()
    patched = mem.searcher.index.snapshot()
    new_basis, new_rows = patched.cache["projection"]
    assert new_basis is basis and len(new_rows) == len(patched)
    np_rows = patched.vectors @ basis
    assert abs(np_rows - new_rows).max() < 1e-5
    assert mem.searcher.search("Does the user play chess?")[0].title == "Plays chess"


def _sample_with_filler(tmp_path, embedder, count: int):
    """The sample vault indexed, with `count` filler rows added to its table: (Memory, index)."""
    mem = Memory(copy_sample_vault(tmp_path / "vault"), embedder=embedder)
    mem.reindex()
    index = mem.searcher.index
    index.replace([], _filler_rows(count, embedder.dim))
    return mem, index


def _filler_rows(count: int, dim: int) -> list[dict]:
    """Rows of a table grown large: random unit vectors, texts no question here asks about."""
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [{"chunk_id": f"filler-{n}#0", "note_id": f"filler-{n}", "path": f"Archive/filler {n}.md",
             "title": f"filler {n}", "type": "note", "status": "active", "user": "default", "tags": "",
             "entities": "", "created": "2024-01-01T00:00:00", "updated": "2024-01-01T00:00:00",
             "valid_from": "", "valid_to": "", "held_from": "", "importance": 0.5, "content_hash": f"f{n}", "source_messages": [],
             "sources": [], "text": f"archived line {n}", "search_text": f"archived line {n}", "keywords": "",
             "vector": vector} for n, vector in enumerate(vectors)]


def test_a_table_past_the_ann_size_is_searched_through_its_indexes_with_the_same_hits(tmp_path, embedder,
                                                                                      monkeypatch):
    """Past ANN_AFTER_ROWS the table is not held in memory: candidates come from LanceDB's
    IVF-PQ and full-text indexes, narrowed by the filters in SQL and decided by their mask.
    Every hit, filters included, must be the in-memory search's, and no snapshot is loaded."""
    from vaultmem.index import table as table_module

    mem, index = _sample_with_filler(tmp_path, embedder, 2000)
    asks = [(q, {}) for q in QUESTIONS] + [
        ("coffee", {"since": "2026-11-29"}), ("tea", {"type": "preference"}), ("coffee", {"user": "mei"}),
        ("where is the user travelling?", {"tag": "travel"}), ("archived line 7", {"scope": "notes"}),
        ("archived line 7", {"scope": "memories"}), ("does the user take milk in tea?", {"all": True}),
        ("does the user take milk in tea?", {"as_of": "2026-10-01"})]
    assert not index.large

    monkeypatch.setattr(table_module, "ANN_AFTER_ROWS", 1000)
    index.maintain()
    assert (index.meta() or {}).get("ann_rows") == index.count() and index.large
    assert index.meta()["pending"] == 0     # the full-text index took the rows in too
    # The same table searched in memory (as below the size) and through its indexes.
    monkeypatch.setattr(table_module, "ANN_AFTER_ROWS", 10**9)
    in_memory = [mem.searcher.search(q, **kw) for q, kw in asks]
    monkeypatch.setattr(table_module, "ANN_AFTER_ROWS", 1000)
    index._snapshot = None
    through_indexes = [mem.searcher.search(q, **kw) for q, kw in asks]
    assert index._snapshot is None                          # nothing held in memory
    for (question, kw), before, after in zip(asks, in_memory, through_indexes):
        assert [(h.id, round(h.score, 4)) for h in after] == [(h.id, round(h.score, 4)) for h in before], \
            (question, kw)
    assert in_memory[0][0].title == "Cutting back on coffee" and in_memory[-4][0].path == "Archive/filler 7.md"
    assert all(h.type != "note" for h in in_memory[-3])

    # A note written now is found at once (rows the index has not folded in are searched
    # exactly), and a purge's rewrite builds the vector index again.
    rows = index.count()
    write_note(mem.vault.root, "Memory/Facts/Plays chess.md", memory_meta("01CHESS"),
               "The user plays chess on Sundays.")
    mem.reindex(paths=["Memory/Facts/Plays chess.md"])     # (a whole sync would drop the filler)
    assert index.large and index.count() == rows + 1
    assert mem.searcher.search("Does the user play chess?")[0].title == "Plays chess"
    assert index._snapshot is None
    index.rewrite()
    assert (index.meta() or {}).get("ann_rows") == index.count() and index.large
    assert mem.searcher.search("Does the user play chess?")[0].title == "Plays chess"


def test_a_vector_index_that_fails_to_build_leaves_searches_in_memory(tmp_path, embedder, monkeypatch, caplog):
    from vaultmem.index import table as table_module
    from vaultmem.index import vector_index

    mem, index = _sample_with_filler(tmp_path, embedder, 300)
    monkeypatch.setattr(table_module, "ANN_AFTER_ROWS", 100)
    tries = []
    monkeypatch.setattr(vector_index, "build_apart", lambda *args: tries.append(args) or "MemoryError: out of memory")
    index.maintain()
    assert not index.large and "out of memory" in caplog.text
    index.maintain()                                   # not tried again at the same size
    assert len(tries) == 1
    assert mem.searcher.search("What is the user trying to give up?")[0].title == "Cutting back on coffee"


def test_a_one_shot_search_reads_the_hits_text_for_its_candidates_alone(tmp_path, embedder):
    """`vaultmem search` without a daemon (cli/fallback) holds the filter columns and vectors
    of every chunk but reads the text and sources of its candidates alone: every hit, with
    every field, is the one a snapshot holding everything gives, filters included, and a
    write drops the on-demand snapshot instead of patching it."""
    from vaultmem.index.snapshot import TakenColumn
    from vaultmem.retrieve.search import CANDIDATES

    mem, index = _sample_with_filler(tmp_path, embedder, 300)
    asks = [(q, {}) for q in QUESTIONS] + [
        ("coffee", {"since": "2026-11-29"}), ("tea", {"type": "preference"}), ("archived line 7", {"scope": "notes"}),
        ("does the user take milk in tea?", {"all": True}), ("does the user take milk in tea?", {"as_of": "2026-10-01"})]
    whole = [list(mem.searcher.search(q, **kw)) for q, kw in asks]   # (records no access)
    index.hits_on_demand = True
    index._snapshot = None
    first = list(mem.searcher.search(asks[0][0]))
    snap = index._snapshot
    assert isinstance(snap.columns["text"], TakenColumn) and len(snap.columns["text"]) == len(snap)
    assert 0 < len(snap.columns["text"].source.rows) <= 2 * CANDIDATES < len(snap)   # the candidates' rows only
    on_demand = [first] + [list(mem.searcher.search(q, **kw)) for q, kw in asks[1:]]
    assert on_demand == whole and whole[0][0].title == "Cutting back on coffee"
    assert all(hit.text for hits in on_demand for hit in hits)
    index.replace([], _filler_rows(1, embedder.dim))
    assert index._snapshot is None


def test_the_cli_without_a_daemon_searches_with_hits_on_demand(tmp_path, monkeypatch):
    root = copy_sample_vault(tmp_path / "vault")
    monkeypatch.setenv("VAULTMEM_NO_DAEMON", "1")
    seen = {}
    from vaultmem.index.table import ChunkIndex

    real = ChunkIndex.snapshot

    def snapshot(self):
        seen["on_demand"] = self.hits_on_demand
        return real(self)

    monkeypatch.setattr(ChunkIndex, "snapshot", snapshot)
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(root), "reindex", "--json"]).exit_code == 0
    result = runner.invoke(cli, ["--vault", str(root), "search", "What is the user trying to give up?", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["hits"][0]["title"] == "Cutting back on coffee"
    assert seen == {"on_demand": True}
