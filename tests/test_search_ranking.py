"""Final ranking rules of `search._best_per_note`, on hand-made scored rows (no model)."""

from vaultmem.search import _best_per_note


def row(note_id, type, sources, chunk=0):
    return {"chunk_id": f"{note_id}#{chunk}", "note_id": note_id, "path": f"{note_id}.md",
            "type": type, "title": note_id, "text": f"text of {note_id}", "status": "active",
            "created": "2026-11-29", "updated": "2026-11-29", "source_messages": sources,
            "sources": [], "importance": 0.5}


def test_hit_repeating_turns_already_shown_waits_behind_hits_with_new_turns():
    scored = [(0.9, 0.9, 0.0, row("turns-1-2", "session", ["m1", "m2"])),
              (0.8, 0.8, 0.0, row("memory-of-m2", "fact", ["m2"])),
              (0.7, 0.7, 0.0, row("memory-of-m7", "fact", ["m7"])),
              (0.6, 0.6, 0.0, row("hub", "entity", []))]
    ids = [h.id for h in _best_per_note(scored, 4)]
    assert ids == ["turns-1-2", "memory-of-m7", "hub", "memory-of-m2"]


def test_repeats_fill_the_list_only_when_new_turns_run_out():
    scored = [(0.9, 0.9, 0.0, row("a", "fact", ["m1"])),
              (0.8, 0.8, 0.0, row("b", "event", ["m1"])),
              (0.7, 0.7, 0.0, row("c", "fact", ["m2"]))]
    assert [h.id for h in _best_per_note(scored, 2)] == ["a", "c"]
    assert [h.id for h in _best_per_note(scored, 3)] == ["a", "c", "b"]


def test_memory_shows_once_and_session_turns_once_each():
    scored = [(0.9, 0.9, 0.0, row("m", "fact", ["x1"], chunk=0)),
              (0.85, 0.85, 0.0, row("m", "fact", ["x1"], chunk=1)),
              (0.8, 0.8, 0.0, row("s", "session", ["t1"], chunk=0)),
              (0.75, 0.75, 0.0, row("s", "session", ["t1"], chunk=1)),
              (0.7, 0.7, 0.0, row("s", "session", ["t2"], chunk=2))]
    hits = _best_per_note(scored, 10)
    assert [(h.id, h.source_messages) for h in hits] == [("m", ["x1"]), ("s", ["t1"]), ("s", ["t2"])]
    assert hits[0].score == 0.9 and hits[0].parts == {"vector": 0.9, "keyword": 0.0}
