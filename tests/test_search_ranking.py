"""Final ranking rules of `ranking.best_per_note` and the filler test, on hand-made rows
(no model); `test_search_order.py` runs them through a real index."""

from vaultmem.retrieve.ranking import REPEAT_FACTOR, best_per_note, is_filler


def row(note_id, type, sources, chunk=0, session="chat"):
    """A hit's row; its turns are in the session note `session` (a session row is that note,
    a memory links into it), as extraction writes them."""
    return {"chunk_id": f"{note_id}#{chunk}", "note_id": note_id,
            "path": f"Memory/Sessions/{session}.md" if type == "session" else f"Memory/Facts/{note_id}.md",
            "type": type, "title": note_id, "text": f"text of {note_id}", "status": "active",
            "created": "2026-11-29", "updated": "2026-11-29", "source_messages": sources,
            "sources": [f"[[Sessions/{session}#^{m}]]" for m in sources] if type != "session" else [],
            "importance": 0.5}


def test_hit_repeating_turns_already_shown_waits_behind_hits_with_new_turns():
    scored = [(0.9, 0.9, 0.0, row("memory-of-m2", "fact", ["m2"])),
              (0.8, 0.8, 0.0, row("turns-1-2", "session", ["m2"])),
              (0.7, 0.7, 0.0, row("memory-of-m7", "fact", ["m7"])),
              (0.6, 0.6, 0.0, row("hub", "entity", []))]
    ids = [h.id for h in best_per_note(scored, 4)]
    assert ids == ["memory-of-m2", "memory-of-m7", "hub", "turns-1-2"]


def test_memories_are_never_repeats_of_the_turn_or_of_each_other():
    scored = [(1.0, 0.5, 0.8, row("turn-3", "session", ["m3"])),
              (0.8, 0.7, 0.5, row("first-week-at-orrin", "fact", ["m3"])),
              (0.7, 0.7, 0.0, row("staff-engineer-now", "fact", ["m3"])),
              (0.6, 0.6, 0.0, row("memory-of-m9", "fact", ["m9"]))]
    hits = best_per_note(scored, 4)
    assert [h.id for h in hits] == ["turn-3", "first-week-at-orrin", "staff-engineer-now", "memory-of-m9"]
    assert [h.score for h in hits] == [1.0, 0.8, 0.7, 0.6] and not any("repeat" in h.parts for h in hits)


def test_the_same_message_id_in_two_sessions_is_two_turns():
    scored = [(0.9, 0.9, 0.0, row("first-chat", "session", ["m-1"], session="monday")),
              (0.8, 0.8, 0.0, row("memory", "fact", ["m-1"], session="friday"))]
    hits = best_per_note(scored, 2)
    assert [h.id for h in hits] == ["first-chat", "memory"] and "repeat" not in hits[1].parts


def test_repeats_fill_the_list_only_when_new_turns_run_out():
    scored = [(0.9, 0.9, 0.0, row("a", "fact", ["m1"])),
              (0.8, 0.8, 0.0, row("b", "session", ["m1"])),
              (0.7, 0.7, 0.0, row("c", "fact", ["m2"]))]
    assert [h.id for h in best_per_note(scored, 2)] == ["a", "c"]
    assert [h.id for h in best_per_note(scored, 3)] == ["a", "c", "b"]


def test_memory_shows_once_and_session_turns_once_each():
    scored = [(0.9, 0.9, 0.0, row("m", "fact", ["x1"], chunk=0)),
              (0.85, 0.85, 0.0, row("m", "fact", ["x1"], chunk=1)),
              (0.8, 0.8, 0.0, row("s", "session", ["t1"], chunk=0)),
              (0.75, 0.75, 0.0, row("s", "session", ["t1"], chunk=1)),
              (0.7, 0.7, 0.0, row("s", "session", ["t2"], chunk=2))]
    hits = best_per_note(scored, 10)
    assert [(h.id, h.source_messages) for h in hits] == [("m", ["x1"]), ("s", ["t1"]), ("s", ["t2"])]
    assert hits[0].score == 0.9 and hits[0].parts == {"vector": 0.9, "keyword": 0.0}


def test_a_repeat_takes_its_place_by_its_lowered_score_so_order_follows_the_score_shown():
    scored = [(0.9, 0.9, 0.0, row("turns-1-2", "session", ["m1", "m2"])),
              (0.85, 0.85, 0.0, row("session-again", "session", ["m1"], chunk=1)),
              (0.8, 0.8, 0.0, row("memory-of-m2", "fact", ["m2"])),
              (0.5, 0.5, 0.0, row("memory-of-m7", "fact", ["m7"])),
              (0.3, 0.3, 0.0, row("memory-of-m8", "fact", ["m8"]))]
    hits = best_per_note(scored, 5)
    assert [h.id for h in hits] == ["turns-1-2", "memory-of-m2", "memory-of-m7", "session-again", "memory-of-m8"]
    assert [h.score for h in hits] == [0.9, 0.8, 0.5, 0.85 * REPEAT_FACTOR, 0.3]
    assert hits[3].parts == {"vector": 0.85, "keyword": 0.0, "repeat": REPEAT_FACTOR}
    assert "repeat" not in hits[1].parts


def test_greeting_and_filler_chunks_are_told_from_turns_that_say_something():
    assert is_filler("user: Hi there!\nassistant: Hello! How can I help?")
    assert is_filler("Caroline: Thanks, Mel!\nMelanie: Congrats!")
    # A short answer that names something answers the question before it: no filler.
    assert not is_filler("user: She moved to Chicago.") and not is_filler("user: Three.")
    assert is_filler("user: OK, cool.")
    assert is_filler("user: 你好！\nassistant: 你好，有什么可以帮你？")
    assert not is_filler("user: Hi there!\nassistant: Hello! How can I help?\nuser: I adopted a cat called Miso.")
    assert not is_filler("Mel: That sounds great! What did you paint?")
    # Longer reactions say how people relate (LoCoMo cites them as evidence): they stay.
    assert not is_filler("Gina: Way to go, Jon! Keep it up, you're almost there!")
    assert not is_filler("Jon: Hey Gina! Whoa, your store looks great! All your hard work really "
                         "paid off - congrats!")
    assert not is_filler("user: 我上周领养了一只猫，叫米索。")
    assert not is_filler("")
