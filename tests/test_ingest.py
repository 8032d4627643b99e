import os
from datetime import datetime

from conftest import memory_meta, write_note

from vaultmem.config import Config
from vaultmem.extract.importers import Session, Turn
from vaultmem.extract.sessions import render_session
from vaultmem.ingest import chunk_note
from vaultmem.note import parse_note
from vaultmem.vault import Vault

COFFEE = "Memory/Preferences/Cutting back on coffee.md"


def notes_in(vault):
    """What the index holds: memory notes and the person's own notes in scope."""
    return len(list(vault.iter_indexed()))


def test_first_sync_indexes_every_note_and_second_sync_embeds_nothing(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    report = indexer.sync()
    assert report.errors == []
    assert report.added == notes_in(sample_vault) and report.chunks >= report.added
    assert report.rebuilt == "no index yet"
    calls = indexer_for.calls

    again = indexer_for(sample_vault).sync()          # a fresh process: state.db remembers
    assert (again.added, again.updated, again.removed) == (0, 0, 0)
    assert again.unchanged == notes_in(sample_vault)
    assert indexer_for.calls == calls                 # the model was not even asked for


def test_edited_note_is_re_embedded_and_unchanged_ones_are_not(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    indexer.sync()
    path = sample_vault.root / COFFEE
    path.write_text(path.read_text().replace("drink less of it", "stop entirely by spring"))
    report = indexer.sync()
    assert (report.added, report.updated, report.chunks) == (0, 1, 1)
    assert report.unchanged == notes_in(sample_vault) - 1
    texts = [r["text"] for r in indexer.index.rows(f"path = '{COFFEE}'")]
    assert texts == ["The user is cutting back on coffee and wants to stop entirely by spring."]


def test_touched_but_identical_note_is_hashed_not_embedded(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    indexer.sync()
    path = sample_vault.root / COFFEE
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    calls = indexer_for.calls
    report = indexer.sync([path])
    assert (report.updated, report.chunks, report.unchanged) == (0, 0, 1)
    assert indexer_for.calls == calls


def test_deleted_note_leaves_the_index(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    indexer.sync()
    (sample_vault.root / COFFEE).unlink()
    report = indexer.sync()
    assert report.removed == 1
    assert COFFEE not in indexer.index.path_hashes()
    hits = {h["chunk_id"] for h in indexer.index.fts("cutting back")}
    assert "01JDQ7ZK3M8X2V4N6P9R0S1T2U#0" not in hits


def test_sync_of_given_paths_adds_and_removes_only_those(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    indexer.sync()
    new = write_note(sample_vault.root, "Memory/Facts/Plays chess.md", memory_meta("01NEW"),
                     "The user plays chess on Sundays.")
    (sample_vault.root / COFFEE).unlink()
    report = indexer.sync([new, COFFEE])
    assert (report.added, report.removed, report.unchanged) == (1, 1, 0)
    assert indexer.remove(["Memory/Facts/Plays chess.md"]) == 1
    assert "Memory/Facts/Plays chess.md" not in indexer.index.path_hashes()


def test_a_bad_note_is_reported_and_the_rest_indexed(sample_vault, indexer_for):
    bad = sample_vault.root / "Memory/Facts/Broken.md"
    bad.write_text("---\nid: [unclosed\ntype: fact\n---\nbody\n")
    (sample_vault.root / "Memory/Facts/Binary.md").write_bytes(b"\xff\xfe\x00bad")
    report = indexer_for(sample_vault).sync()
    assert {path for path, _ in report.errors} == {"Memory/Facts/Broken.md", "Memory/Facts/Binary.md"}
    assert all(reason for _, reason in report.errors)
    assert report.added == notes_in(sample_vault) - 2


def test_model_change_rebuilds_instead_of_mixing_vectors(sample_vault, indexer_for):
    indexer_for(sample_vault).sync()
    # Another name for the same files: the index cannot know, so it must rebuild.
    other = Vault(sample_vault.root, Config(model="sentence-transformers/all-MiniLM-L6-v2"))
    report = indexer_for(other).sync()
    assert report.rebuilt == "model changed from all-MiniLM-L6-v2 to sentence-transformers/all-MiniLM-L6-v2"
    assert report.added == notes_in(sample_vault)
    assert indexer_for(other).index.meta()["model"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_full_sync_rebuilds_everything(sample_vault, indexer_for):
    indexer = indexer_for(sample_vault)
    indexer.sync()
    progress = []
    report = indexer.sync(full=True, progress=lambda done, total: progress.append((done, total)))
    assert report.rebuilt == "--full" and report.added == notes_in(sample_vault)
    assert progress[0][0] == 0 and progress[-1][0] == progress[-1][1] == report.chunks


def session_note(turns):
    start = datetime(2023, 5, 8, 13, 56)
    session = Session("conv-26-s1", "conv-26-s1",
                      [Turn("conv-26-s1", mid, start, who, "user", text, n + 1)
                       for n, (mid, who, text) in enumerate(turns)], "locomo.jsonl")
    rendered = render_session(session, note_id="01SESSION")
    return parse_note(rendered.text), rendered.title


def test_session_chunks_pair_turns_that_fit_with_neighbours_in_search_text():
    note, title = session_note([
        ("D1:1", "Caroline", "I went to a LGBTQ support group yesterday."),
        ("D1:2", "Melanie", "Wow, how did it go?"),
        ("D1:3", "Caroline", "It was powerful. " * 40),
        ("D1:4", "Melanie", "That is great to hear."),
    ])
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    from vaultmem.chunking import read_for_index
    from vaultmem.note import render_note

    fast = chunk_note(read_for_index(render_note(note).encode(), None), f"Memory/Sessions/{title}.md",
                      content_hash="h")
    assert [c.__dict__ for c in fast] == [c.__dict__ for c in chunks]
    # D1:2 is shown whole by the first pair and D1:3 is too long to pair: no chunk of D1:2 alone.
    assert chunks[0].source_messages == ["D1:1", "D1:2"]
    assert all(c.source_messages == ["D1:3"] for c in chunks[1:-1]) and len(chunks) > 3
    assert chunks[-1].source_messages == ["D1:4"]
    assert all(len(c.text.split()) <= 61 for c in chunks)              # 60 words + speaker
    pair = chunks[0]
    assert pair.text == "Caroline: I went to a LGBTQ support group yesterday.\nMelanie: Wow, how did it go?"
    assert "powerful" in pair.search_text                               # the turn after the pair
    assert "2023-05-08" in pair.keywords
    assert pair.sources == [f"[[{title}#^D1-1]]", f"[[{title}#^D1-2]]"]
    last = chunks[-1]
    assert last.text == "Melanie: That is great to hear." and "powerful" in last.search_text
    assert {c.chunk_id for c in chunks} == {f"01SESSION#{n}" for n in range(len(chunks))}


def test_memory_chunk_carries_metadata_for_filters():
    note = parse_note("---\nid: 01M\ntype: preference\ncreated: 2026-11-29T10:30:00\n"
                      "updated: 2026-11-29T10:30:00\nstatus: active\nuser: alice\n"
                      "tags:\n  - vaultmem/preference\n  - health\nentities:\n  - \"[[Coffee]]\"\n"
                      "source_messages:\n  - m-12\n---\nThe user is cutting back on coffee.\n")
    [chunk] = chunk_note(note, "Memory/Preferences/Less coffee.md", content_hash="h")
    assert chunk.tags == "|vaultmem/preference|health|" and chunk.entities == "|Coffee|"
    assert (chunk.user, chunk.type, chunk.created) == ("alice", "preference", "2026-11-29T10:30:00")
    assert chunk.source_messages == ["m-12"]
    assert chunk.search_text == "The user is cutting back on coffee."
    assert "Less coffee" in chunk.keywords and "Coffee" in chunk.keywords


def test_fast_index_parser_agrees_with_the_round_trip_parser(sample_vault):
    from vaultmem.chunking import read_for_index
    from vaultmem.note import parse_note_bytes

    for path in sample_vault.iter_notes():
        data = path.read_bytes()
        rel = sample_vault.rel(path)
        fast = chunk_note(read_for_index(data, path), rel, content_hash="h")
        full = chunk_note(parse_note_bytes(data, path), rel, content_hash="h")
        assert [c.__dict__ for c in fast] == [c.__dict__ for c in full], rel
