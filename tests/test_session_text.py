"""The turn format of session notes (`extract/session_text.py`): a turn holding blank lines
and fenced code is one turn wherever a note is read, by `turn_spans` as by the index.

A note is rendered by the real writer and saved in a real vault; the index and search are
the real ones, with the bundled model."""

from datetime import datetime

import pytest

from vaultmem.api import Memory
from vaultmem.extract.sessions import render_session
from vaultmem.index.chunking import chunk_note
from vaultmem.store.note import parse_note
from vaultmem.store.session_note import Session, Turn, parse_session_turns, turn_spans

FIRST = "The payments suite has been red all week and I finally cornered it."
SECOND = ("It only fails when the Zanzibar fixture runs before the refund tests, because that "
          "fixture leaves a pending ledger row behind and the refund totals then come out one "
          "cent short. Reordering the files hides it but does not fix it.")
CODE = "```bash\n# reproduce it\npytest -p no:randomly tests/test_zanzibar.py tests/test_refunds.py\n```"
THIRD = "Clearing the ledger in the fixture's teardown fixed it."
MULTI = f"{FIRST}\n\n{SECOND}\n\n{CODE}\n\n{THIRD}"
ENDS_IN_CODE = "Here is the teardown:\n\n```python\ndef teardown():\n\n    ledger.clear()\n```"


def session(*texts) -> Session:
    turns = [Turn("chat-7", f"m-{n}", datetime(2026, 11, 29, 10, n), who, role, text, n)
             for n, (who, role, text) in enumerate(texts, 1)]
    return Session("chat-7", "chat-7", turns, "chat.jsonl", datetime(2026, 11, 29, 10, 0))


CHAT = session(("Alice", "user", "Good morning!"),
               ("Assistant", "assistant", "Good morning, how can I help?"),
               ("Alice", "user", MULTI),
               ("Assistant", "assistant", ENDS_IN_CODE),
               ("Alice", "user", "Thanks, that was it."))


def test_a_turn_spans_its_blank_lines_and_code_up_to_its_block_id():
    body = parse_note(render_session(CHAT).text).body
    lines = body.split("\n")
    spans = turn_spans(body)
    assert [turn.block_id for turn, _, _ in spans] == ["m-1", "m-2", "m-3", "m-4", "m-5"]
    for turn, first, end in spans:
        assert lines[first].startswith(f"**{turn.speaker}** · 2026-11-29")
        assert lines[end - 1].endswith(f"^{turn.block_id}")
        assert end == len(lines) or not lines[end].strip()  # the turn ends there: a blank line next
    _, first, end = spans[2]
    assert lines[first + 1:end] == (MULTI + " ^m-3").split("\n")
    _, first, end = spans[3]  # ends in code: its block id on a line of its own
    assert lines[first + 1:end] == ENDS_IN_CODE.split("\n") + ["", "^m-4"]
    assert [t.text for t in parse_session_turns(body)][2:4] == [MULTI, ENDS_IN_CODE]


def test_every_chunk_of_a_turn_cites_that_turn():
    note = parse_note(render_session(CHAT).text)
    chunks = chunk_note(note, "Memory/Sessions/2026-11-29 chat-7.md")
    holding = [c for c in chunks if "Zanzibar fixture" in c.text]
    assert holding, [c.text for c in chunks]
    assert all(c.source_messages == ["m-3"] for c in holding), [(c.text, c.source_messages) for c in holding]
    assert all(c.sources == ["[[2026-11-29 chat-7#^m-3]]"] for c in holding)
    code = [c for c in chunks if "no:randomly" in c.text]
    assert code and all("m-3" in c.source_messages for c in code)
    teardown = [c for c in chunks if "ledger.clear()" in c.text]
    assert teardown and all("m-4" in c.source_messages for c in teardown)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("turns") / "vault"
    (root / ".obsidian").mkdir(parents=True)
    note = root / "Memory" / "Sessions" / "2026-11-29 chat-7.md"
    note.parent.mkdir(parents=True)
    note.write_text(render_session(CHAT).text, encoding="utf-8")
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    return mem


def test_search_finds_a_later_paragraph_of_a_turn_and_cites_its_block(indexed):
    query = "refund totals one cent short ledger row Zanzibar fixture"
    hits = indexed.search(query)["hits"]
    found = [h for h in hits if "Zanzibar fixture" in h["text"]]
    assert found and found[0] is hits[0] and found[0]["type"] == "session", hits
    assert all(hit["source_messages"] == ["m-3"] for hit in found), found
    links = {tuple(h.sources) for h in indexed.searcher.search(query) if "Zanzibar fixture" in h.text}
    assert links == {("[[2026-11-29 chat-7#^m-3]]",)}
    assert "[[2026-11-29 chat-7#^m-3]]" in indexed.context(query)["text"]
    assert indexed.indexer.index.fts("zanzibar")


def test_search_finds_code_of_a_turn_ending_in_code_and_cites_its_block(indexed):
    hits = indexed.search("ledger.clear teardown")["hits"]
    found = [h for h in hits if "ledger.clear()" in h["text"]]
    assert found and all("m-4" in h["source_messages"] for h in found), hits
