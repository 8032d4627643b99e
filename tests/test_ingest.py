import os
from datetime import datetime

from conftest import memory_meta, write_note

from vaultmem.extract.sessions import render_session
from vaultmem.index.chunking import chunk_note
from vaultmem.store.config import Config
from vaultmem.store.note import parse_note
from vaultmem.store.session_note import Session, Turn
from vaultmem.store.vault import Vault
from vaultmem.text.script import word_count

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


def test_sync_of_memories_takes_changed_new_and_gone_memory_notes_and_leaves_the_rest(sample_vault, indexer_for):
    # What `add` runs before comparing: the memory folders only, the person's notes untouched.
    indexer = indexer_for(sample_vault)
    indexer.sync()
    own = write_note(sample_vault.root, "Journal/Later.md", {}, "A note of the person's, not yet indexed.")
    new = write_note(sample_vault.root, "Memory/Facts/Plays chess.md", memory_meta("01NEW"),
                     "The user plays chess on Sundays.")
    path = sample_vault.root / COFFEE
    path.write_text(path.read_text().replace("drink less of it", "stop entirely by spring"))
    gone = "Memory/Facts/Partner is Mei.md"
    (sample_vault.root / gone).unlink()
    report = indexer.sync_memories()
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    indexed = indexer.index.path_hashes()
    assert new.relative_to(sample_vault.root).as_posix() in indexed and gone not in indexed
    assert own.relative_to(sample_vault.root).as_posix() not in indexed
    assert [r["text"] for r in indexer.index.rows(f"path = '{COFFEE}'")] == [
        "The user is cutting back on coffee and wants to stop entirely by spring."]
    again = indexer.sync_memories()
    assert (again.added, again.updated, again.removed, again.chunks) == (0, 0, 0, 0)


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
    from vaultmem.index.chunking import read_for_index
    from vaultmem.store.note import render_note

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


def test_chinese_session_chunks_hold_three_short_turns_within_the_word_budget():
    """Chinese turns are short: three of them say what two English turns do. The budget counts
    a Chinese character as half a word, so a long Chinese turn is not paired (before, a turn
    without spaces counted as one word whatever its length)."""
    note, title = session_note([
        ("D1:1", "林晓", "我上个月搬到杭州了。"),
        ("D1:2", "陈默", "真的吗？住得习惯吗？"),
        ("D1:3", "林晓", "挺好的，西湖边上跑步特别舒服。"),
        ("D1:4", "陈默", "听起来不错！" + "我一直想去杭州看看那边的茶园和古镇。" * 6),
        ("D1:5", "林晓", "欢迎来玩！"),
    ])
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    assert [c.source_messages for c in chunks] == [
        ["D1:1", "D1:2", "D1:3"],
        ["D1:2", "D1:3"],        # D1:4 (~55 words' worth) would take them past 60
        ["D1:4", "D1:5"],        # (D1:3 and D1:5 are shown whole by the chunk before them)
    ]
    assert all(word_count(c.text) <= 61 for c in chunks)


def test_a_long_message_to_an_assistant_is_also_found_by_its_sentences():
    """Issue 51: the aside of a long message to an assistant ("By the way, ... my dermatologist,
    Dr. Lee") is embedded on its own, shown alone and citing its turn; the assistant's long answer
    lends the person's chunk only its opening. Between two people nothing changes."""
    from vaultmem.index.chunking import LONG_NEIGHBOUR_WORDS

    message = ("I'm having some issues with my nasal spray prescription. Can you help me use it more "
               "effectively? By the way, I just got back from a follow-up appointment with my "
               "dermatologist, Dr. Lee, and the mole on my back was benign.")
    answer = "Sure! " + "Tilt your head forward and aim the nozzle away from the septum. " * 14
    note, title = session_note([("D3:1", "user", message), ("D3:2", "assistant", answer)])
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    alone = [c for c in chunks if c.window is None]
    assert [c.text for c in alone] == [
        "user: I'm having some issues with my nasal spray prescription.",
        "user: Can you help me use it more effectively?",
        "user: By the way, I just got back from a follow-up appointment with my dermatologist, "
        "Dr. Lee, and the mole on my back was benign."]
    assert all(c.source_messages == ["D3:1"] and c.search_text == c.text for c in alone)
    assert all(c.sources == [f"[[{title}#^D3-1]]"] and c.type == "session" for c in alone)
    [whole] = [c for c in chunks if c.window is not None and c.source_messages == ["D3:1"]]
    borrowed = whole.search_text.split("\n")[-1]
    # the speaker, the first LONG_NEIGHBOUR_WORDS words, "…"
    assert borrowed.startswith("assistant: Sure!") and len(borrowed.split()) == LONG_NEIGHBOUR_WORDS + 2
    note, title = session_note([("D3:1", "Caroline", message), ("D3:2", "Melanie", answer)])
    assert all(c.window is not None for c in chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h"))


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
    from vaultmem.index.chunking import read_for_index
    from vaultmem.store.note import parse_note_bytes

    for path in sample_vault.iter_notes():
        data = path.read_bytes()
        rel = sample_vault.rel(path)
        fast = chunk_note(read_for_index(data, path), rel, content_hash="h")
        full = chunk_note(parse_note_bytes(data, path), rel, content_hash="h")
        assert [c.__dict__ for c in fast] == [c.__dict__ for c in full], rel


# --- session chunks embedded in context, each turn about once -----------------------------

LOCOMO_TURNS = [
    ("D1:1", "Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("D1:2", "Melanie", "Hey Caroline! I'm swamped with the kids & work. What's up with you?"),
    ("D1:3", "Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("D1:4", "Melanie", "Wow, that's cool, Caroline! What happened that was so awesome?"),
    ("D1:5", "Caroline", "The transgender stories were so inspiring! I was so happy and thankful "
                         "for all the support. One woman told us how she came out to her parents "
                         "after years of hiding, and how her father hugged her at the door. Another "
                         "talked about finding a doctor who listened. We ended the evening with tea "
                         "and cake, and I signed up to volunteer at the front desk on Thursdays. I "
                         "left feeling lighter than I have in months, honestly."),
    ("D1:6", "Melanie", "That is great to hear. 我们下周六去杭州看画展吧！"),
    ("D1:7", "Caroline", "Sounds good, I'll bring the camera."),
    ("D1:8", "Melanie", "By the way, I ran a charity race for mental health last Saturday."),
    ("D1:9", "Caroline", "That's amazing, Mel! How did it go?"),
    ("D1:10", "Melanie", "Great! We raised a lot for the local clinic."),
]


def embedded_lines(chunk):
    """The text a session chunk's window points at, line by line, as `search_text` holds it."""
    window = chunk.window
    lines = {}
    for turn, start, end in window.ranges:
        lines.setdefault(turn, []).append(window.lines[turn][start:end])
    return [" ".join(part.strip() for part in parts) for _, parts in sorted(lines.items())]


def test_a_session_chunks_window_points_at_exactly_what_it_embeds():
    note, title = session_note(LOCOMO_TURNS)
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    assert all(c.window is not None and c.window.lines is chunks[0].window.lines for c in chunks)
    assert any(len(c.source_messages) == 1 and c.source_messages[0] == "D1:5" for c in chunks)
    for chunk in chunks:
        expected = [line.replace(" …", "") for line in chunk.search_text.split("\n")]
        assert embedded_lines(chunk) == expected, chunk.chunk_id
        assert "window" not in chunk.to_row([0.0])   # not an index column


def test_session_chunks_are_embedded_in_context_with_about_each_turn_once(embedder, monkeypatch):
    import numpy as np

    from vaultmem.index import passages

    note, title = session_note(LOCOMO_TURNS)
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    encoded = []
    real = type(embedder.backend).token_vectors

    def spy(self, texts, batch_size):
        encoded.extend(texts)
        return real(self, texts, batch_size)

    monkeypatch.setattr(type(embedder.backend), "token_vectors", spy)
    vectors = passages.chunk_vectors(embedder, chunks)
    turn_tokens = sum(embedder.count_tokens(line) for line in chunks[0].window.lines)
    embedded_alone = sum(embedder.count_tokens(c.search_text) for c in chunks)
    tokens = sum(embedder.count_tokens(text) for text in encoded)
    assert turn_tokens <= tokens <= 1.5 * turn_tokens and tokens < embedded_alone / 2
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Each chunk's vector stays close to its text embedded alone (what it was before); how
    # well they retrieve is benchmarks/locomo.py's to say (R@10 82.4 alone, 83.0 in context).
    alone = embedder.encode([c.search_text for c in chunks])
    own = np.sum(vectors * alone, axis=1)
    assert own.mean() >= 0.75 and own.min() >= 0.7, own.round(2)


def test_session_vectors_in_context_agree_across_runtimes_and_a_too_long_turn_is_embedded_alone(embedder):
    import numpy as np

    from vaultmem.index.embed import Embedder
    from vaultmem.index.passages import chunk_vectors

    turns = LOCOMO_TURNS[:4] + [("D1:5", "Caroline", "word " * 300)] + LOCOMO_TURNS[5:]
    note, title = session_note(turns)
    chunks = chunk_note(note, f"Memory/Sessions/{title}.md", content_hash="h")
    onnx = embedder if embedder.runtime == "onnx" else Embedder("all-MiniLM-L6-v2", runtime="onnx")
    torch_ = Embedder("all-MiniLM-L6-v2", runtime="torch")
    ours, theirs = chunk_vectors(onnx, chunks), chunk_vectors(torch_, chunks)
    assert np.sum(ours * theirs, axis=1).min() >= 0.999
    # A 300-word turn fills more than a passage: the chunks that read it are embedded alone.
    long_ones = [n for n, c in enumerate(chunks) if any(c.window.lines[t].count("word") > 200
                                                        for t, _, _ in c.window.ranges)]
    assert long_ones
    alone = onnx.encode([chunks[n].search_text for n in long_ones])
    np.testing.assert_allclose(ours[long_ones], alone, atol=1e-5)


def test_passages_share_one_turn_and_stay_within_the_budget():
    from vaultmem.index.passages import PASSAGE_OVERLAP, _passages

    tokens = [30, 40, 25, 60, 10, 90, 35, 20, 300, 15, 15]
    passages = _passages(tokens, 120)
    assert passages[0][0] == 0 and passages[-1][1] == len(tokens)
    for (first, end), (after, _) in zip(passages, passages[1:]):
        assert after == max(first + 1, end - PASSAGE_OVERLAP)
    assert all(sum(tokens[a:b]) <= 120 for a, b in passages if b - a > 1)
    assert (8, 9) in passages   # the 300-token turn alone, over the budget
