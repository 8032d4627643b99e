"""One filter (issue 14): the keyword half of a search obeys the same filters as the vector half.

`Filters.mask` is the only definition of `--as-of`, `--since`, `--type`, `--tag`, `--user`
and `--all`; LanceDB ranks the whole table by BM25 and the mask picks from that ranking.
Real vault, real LanceDB, the real bundled model; the clock is faked with VAULTMEM_NOW."""

import itertools
import shutil

import pytest
from conftest import memory_meta, write_note

from vaultmem.retrieve.search import Searcher
from vaultmem.store.vault import Vault

NOW = "2026-12-10T09:00:00"
TODAY = NOW[:10]
USERS = ["default", "alice", "shared"]
TYPES = ["fact", "preference", "event"]
TAGS = ["travel", "travel/coast", "home"]
CREATED = ["2026-09-01T08:00:00", "2026-11-01T09:00:00", "2026-12-05T10:00:00"]
STATUSES = ["active", "active", "superseded", "archived"]
# (valid_from, valid_to): open, ended before the as-of days, ending on one, still running.
VALIDITY = [("", ""), ("2026-10-01", "2026-11-20"), ("2026-11-10", "2026-12-03"), ("2026-12-01", "2027-01-31"),
            ("", "2026-12-09")]
NOTES = 30


def note_meta(n: int) -> dict:
    valid_from, valid_to = VALIDITY[n % len(VALIDITY)]
    extra = {key: value for key, value in (("valid_from", valid_from), ("valid_to", valid_to)) if value}
    type_ = TYPES[n % len(TYPES)]
    meta = memory_meta(f"N{n:02d}", type=type_, status=STATUSES[n % len(STATUSES)],
                       user=USERS[(n // 2) % len(USERS)], created=CREATED[(n // 3) % len(CREATED)],
                       updated=CREATED[(n // 3) % len(CREATED)], **extra)
    meta["tags"] = [f"vaultmem/{type_}", TAGS[(n // 4) % len(TAGS)]]
    return meta


def note_text(n: int) -> str:
    # Two notes in three share the query's rare word, so both halves have something to lose.
    place = "lighthouse" if n % 3 else "harbour"
    return f"Note {n}: the user visited the {place} on the island and wrote about the weather."


def allowed(meta: dict, user, type_, tag, since, as_of, all_) -> bool:
    """What the SPEC's filters mean, written out for one note (the test's own oracle)."""
    if meta["user"] != (user or "default"):
        return False
    if type_ and meta["type"] != type_:
        return False
    if tag and not any(t == tag or t.startswith(tag + "/") for t in meta["tags"]):
        return False
    if since and meta["created"] < since:
        return False
    valid_to = meta.get("valid_to", "")
    if as_of:
        # no valid_from: since its creation, unless it has an end (a past state told later:
        # it held since before, so no start bounds it)
        start = meta.get("valid_from") or ("" if meta.get("valid_to") else meta["created"][:10])
        ends_after = not valid_to or valid_to > as_of or (valid_to == as_of and meta["status"] != "superseded")
        return start <= as_of and ends_after and (all_ or meta["status"] != "archived")
    return all_ or (meta["status"] == "active" and (not valid_to or valid_to >= TODAY))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):
    """A vault of NOTES memories spread over every filter dimension, indexed once."""
    root = tmp_path_factory.mktemp("filters") / "vault"
    metas = {}
    for n in range(NOTES):
        meta = note_meta(n)
        write_note(root, f"Memory/Facts/n{n:02d}.md", meta, note_text(n))
        metas[meta["id"]] = meta
    vault = Vault(root)
    from vaultmem.index.ingest import Indexer

    indexer = Indexer(vault, embedder_factory=lambda: embedder)
    indexer.sync()
    return vault, indexer.index, metas


@pytest.fixture
def searcher(indexed, embedder, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    vault, index, _ = indexed
    return Searcher(vault, lambda: embedder, index=index)


COMBOS = list(itertools.product([None, "alice"], [None, "preference"], [None, "travel"],
                                [None, "2026-11-01"], [None, "2026-11-15", "2026-12-03"], [False, True]))


def test_every_filter_combination_keeps_exactly_the_allowed_keyword_and_vector_hits(indexed, searcher):
    _, index, metas = indexed
    # Without any filter: every chunk BM25 finds for the query, straight from LanceDB.
    unfiltered_keyword = {hit["chunk_id"].split("#")[0] for hit in index.fts("lighthouse", limit=1000)}
    assert unfiltered_keyword == {note_id for note_id in metas if int(note_id[1:]) % 3}
    nonempty = 0
    for user, type_, tag, since, as_of, all_ in COMBOS:
        passing = {note_id for note_id, meta in metas.items()
                   if allowed(meta, user, type_, tag, since, as_of, all_)}
        hits = searcher.search("lighthouse", k=100, user=user, type=type_, tag=tag, since=since,
                               as_of=as_of, all=all_, min_score=-1.0)
        combo = dict(user=user, type=type_, tag=tag, since=since, as_of=as_of, all=all_)
        assert hits.warning is None, combo
        # The vector half scores every chunk: it returns exactly the notes the filters allow.
        assert {hit.id for hit in hits} == passing, combo
        # The keyword half: the unfiltered keyword hits minus those the filters exclude.
        keyword = {hit.id for hit in hits if hit.parts["keyword"] > 0}
        assert keyword == unfiltered_keyword & passing, combo
        nonempty += bool(keyword)
    assert nonempty >= len(COMBOS) // 4   # not vacuous: many combinations keep keyword hits


def test_as_of_search_keeps_its_keyword_half(tmp_path, embedder, monkeypatch):
    """A note that shares the query's rare word but not its meaning is found by BM25 alone;
    before issue 14 every `--as-of` search lost that half (LanceDB rejected the SQL filter)."""
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    root = tmp_path / "vault"
    write_note(root, "Memory/Facts/parcel.md", memory_meta("PARCEL", valid_from="2026-11-20"),
               "Parcel tracking code ZX81QUOKKA arrives Thursday at the depot.")
    write_note(root, "Memory/Facts/tea.md", memory_meta("TEA"), "The user drinks green tea every morning.")
    vault = Vault(root)
    from vaultmem.index.ingest import Indexer

    indexer = Indexer(vault, embedder_factory=lambda: embedder)
    indexer.sync()
    searcher = Searcher(vault, lambda: embedder, index=indexer.index)
    query = "which song makes the user cry? zx81quokka"
    for flags in ({}, {"as_of": "2026-11-25"}, {"as_of": "2026-11-25", "all": True}):
        hits = searcher.search(query, k=5, **flags)
        assert hits.warning is None
        parcel = [hit for hit in hits if hit.id == "PARCEL"]
        assert parcel, flags
        # Far in meaning: the vector part alone stays under the threshold.
        assert parcel[0].parts["vector"] < vault.config.min_score
        assert parcel[0].parts["keyword"] > 0, flags
    # And the filter still holds on the keyword half: not yet said on the 19th.
    assert "PARCEL" not in {hit.id for hit in searcher.search(query, k=5, as_of="2026-11-19")}


def test_a_filter_that_excludes_the_top_keyword_hits_does_not_starve_the_rest(tmp_path, embedder, monkeypatch):
    """100 old notes say the word five times and rank first in BM25; the three recent notes
    that say it once must still come back under `--since`, however many old ones lie ahead."""
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    # Few candidates per retriever, so that the old notes overflow LanceDB's first answer.
    monkeypatch.setattr("vaultmem.retrieve.search.CANDIDATES", 5)
    root = tmp_path / "vault"
    for n in range(100):
        write_note(root, f"Memory/Facts/old{n}.md", memory_meta(f"OLD{n}", created="2026-01-05T09:00:00"),
                   f"Entry {n}. " + "zephyrine " * 5)
    for n in range(20):
        write_note(root, f"Memory/Facts/filler{n}.md", memory_meta(f"FILL{n}"),
                   f"Filler note {n} about the garden, the bicycle and the kitchen shelf.")
    for n in range(3):
        write_note(root, f"Memory/Facts/new{n}.md", memory_meta(f"NEW{n}"),
                   f"A recent note {n}: a zephyrine breeze over the bay.")
    vault = Vault(root)
    from vaultmem.index.ingest import Indexer

    indexer = Indexer(vault, embedder_factory=lambda: embedder)
    indexer.sync()
    ranked = [hit["chunk_id"].split("#")[0] for hit in indexer.index.fts("zephyrine", limit=1000)]
    assert all(note_id.startswith("OLD") for note_id in ranked[:100])  # the old ones come first
    hits = Searcher(vault, lambda: embedder, index=indexer.index).search(
        "zephyrine", k=3, since="2026-06-01", min_score=-1.0)
    assert {hit.id for hit in hits if hit.parts["keyword"] > 0} == {"NEW0", "NEW1", "NEW2"}


def test_a_quoted_query_keeps_its_keyword_half(indexed, searcher):
    """LanceDB's parser reads `"lighthouse"` as a phrase query, which an index without
    positions cannot answer; the words are matched as they are instead."""
    plain = {hit.id for hit in searcher.search("lighthouse", k=100, min_score=-1.0) if hit.parts["keyword"] > 0}
    quoted = {hit.id for hit in searcher.search('"lighthouse"', k=100, min_score=-1.0) if hit.parts["keyword"] > 0}
    assert plain and quoted == plain
    for odd in ['"', '""', "lighthouse:", "(lighthouse", "+lighthouse -harbour", "lighthouse~2", "AND OR NOT"]:
        assert searcher.search(odd, k=5).warning is None


def test_a_bad_full_text_query_raises_instead_of_finding_nothing(indexed):
    _, index, _ = indexed
    with pytest.raises(ValueError):
        index.fts("lighthouse", where="no_such_column = 'x'")


def test_a_damaged_full_text_index_is_reported_not_ignored(tmp_path, embedder, monkeypatch):
    """The search answers from the plain keyword scan and says why, instead of quietly
    returning the vector half alone."""
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    root = tmp_path / "vault"
    for n in range(3):
        write_note(root, f"Memory/Facts/n{n}.md", memory_meta(f"N{n}"), note_text(n))
    vault = Vault(root)
    from vaultmem.index.ingest import Indexer

    indexer = Indexer(vault, embedder_factory=lambda: embedder)
    indexer.sync()
    tokens = list((indexer.index.dir / "chunks.lance" / "_indices").glob("*/*tokens.lance"))
    assert tokens   # the full-text index's token list
    for part in tokens:
        shutil.rmtree(part) if part.is_dir() else part.unlink()
    hits = Searcher(vault, lambda: embedder, index=indexer.index).search("lighthouse", k=5)
    assert hits.warning and "search index unavailable" in hits.warning
    assert {hit.id for hit in hits} == {"N1", "N2"}   # the plain keyword scan answered
