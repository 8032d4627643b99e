"""Search hits come out in the order of the score they show, and small talk never outranks a
memory that answers (a real index, the real model, notes written as the extractor writes them)."""

import pytest
from conftest import copy_sample_vault, memory_meta, write_note

from vaultmem.api import Memory

GREETING_SESSION = """**user** · 2026-11-29 10:00
Hi there! ^m-1

**assistant** · 2026-11-29 10:00
Hello! How can I help? ^m-2

**user** · 2026-11-29 10:01
I have a cat now! I adopted a cat called Miso last week. ^m-3

**assistant** · 2026-11-29 10:01
Congratulations! Give her a quiet room and a litter box to start. ^m-4
"""


@pytest.fixture(scope="module")
def cat(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("order") / "vault"
    (root / ".obsidian").mkdir(parents=True)
    write_note(root, "Memory/Sessions/2026-11-29 chat.md",
               {"id": "01SESS", "type": "session", "created": "2026-11-29T10:00:00",
                "updated": "2026-11-29T10:00:00", "status": "active", "user": "default",
                "session": "chat", "message_ids": ["m-1", "m-2", "m-3", "m-4"],
                "tags": ["vaultmem/session"]}, GREETING_SESSION)
    write_note(root, "Memory/Events/Adopted a cat called Miso.md",
               memory_meta("01CAT", type="event", importance=0.3, valid_from="2026-11-29",
                           source_messages=["m-3"]),
               "The user adopted a cat called Miso.")
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    return mem


def test_a_greeting_never_ranks_above_the_memory_that_answers(cat):
    hits = cat.search("does the user have a cat?")["hits"]
    ranked = [h["id"] if h["type"] != "session" else tuple(h["source_messages"]) for h in hits]
    assert "01CAT" in ranked
    greeting = ranked.index(("m-1", "m-2")) if ("m-1", "m-2") in ranked else len(ranked)
    assert ranked.index("01CAT") < greeting
    # Without the filler factor this greeting scored 1.17 and came first.
    assert ranked[0] != ("m-1", "m-2")


def test_session_excerpts_carry_the_day_their_turns_were_said(cat):
    hit = next(h for h in cat.search("does the user have a cat?")["hits"] if h["type"] == "session")
    assert hit["valid_from"] == "2026-11-29"


@pytest.fixture(scope="module")
def sample(tmp_path_factory, embedder):
    mem = Memory(copy_sample_vault(tmp_path_factory.mktemp("sample") / "vault"), embedder=embedder)
    mem.reindex()
    return mem


@pytest.mark.parametrize("query", ["does the user have a cat?", "What does the user drink?",
                                   "Where does the user live?", "用户在戒什么？"])
def test_hits_come_out_in_the_order_of_the_score_they_show(query, cat, sample):
    for memory in (cat, sample):
        scores = [h["score"] for h in memory.search(query, k=10, all=True)["hits"]]
        assert scores == sorted(scores, reverse=True)
