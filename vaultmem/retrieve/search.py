"""Hybrid retrieval: vector similarity plus BM25 full-text search, fused and re-weighted.

    >>> searcher = Searcher(vault, embedder_factory=lambda: Embedder(vault.config.model))  # doctest: +SKIP
    >>> hits = searcher.search("what does the user drink?", k=5)                           # doctest: +SKIP
    >>> hits[0].to_dict()["text"], hits.warning                                             # doctest: +SKIP

How a hit is scored (all parts visible in `Hit.parts`). The score shown is the ranking
score: hits come out in its order, highest first.
- `vector`: cosine similarity of query and chunk (the whole filtered table is scanned as
  one in-memory matrix, so metadata filters apply before top-k, not after; past
  `ANN_AFTER_ROWS` chunks the IVF-PQ index's candidates, prefiltered, are re-scored exactly).
- `keyword`: the share of the query's words found in the chunk, weighted by where the
  chunk ranks in LanceDB's BM25 results. The same filter mask picks from that ranking
  (`Filters.mask` is the one definition of the filters; no SQL copy of it can drift).
- score = (vector + KEYWORD_WEIGHT * keyword) * (weights for importance and recency),
  where recency is the age of the day the memory was said (`valid_from`, else its last
  update), times SESSION_FACTOR for a session chunk, times FILLER_FACTOR for a session
  chunk whose turns are only greetings, thanks or filler ("Hi there!" / "Hello! How can I
  help?"), times STALE_FACTOR for a memory nobody recalled nor updated for
  `[gc] stale_after_days`, and times REPEAT_FACTOR for a hit whose source turns are all
  shown by higher hits already (`parts["repeat"]`; see `ranking.best_per_note`). A question that
  asks when adds WHEN_BONUS to the match of a chunk that says when (`parts["when"]`); one
  that names a past time ("four weeks ago", "last weekend") adds DATE_BONUS to the match of a
  chunk said then, less the further from a day it names (`parts["date"]`,
  `ranking.date_bonus`), and its best chunks by vector are candidates as well.
  The query's vector is made without the words that only ask to count
  (`ranking.embedded_query`: "how many", "the total number of").
Hits under `min_score` (config `[search] min_score`) are dropped, so an unrelated question
gets no hits rather than the least bad ones. When the index is missing or unusable, a plain
keyword scan of the vault answers instead and `hits.warning` says so.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from vaultmem import clock
from vaultmem.errors import ConfigError, IndexUnavailable, VaultmemError
from vaultmem.index.snapshot import NARROWING_COLUMNS, SNAPSHOT_COLUMNS, of_rows
from vaultmem.index.table import ChunkIndex, sql_in
from vaultmem.index.user_notes import NOTE_TYPE
from vaultmem.retrieve.filters import Filters, check_scope, normalise_day, row_passes
from vaultmem.retrieve.hits import Hit, Hits
from vaultmem.retrieve.keywords import keyword_coverage, term_patterns, terms
from vaultmem.retrieve.ranking import (
    ASKS_WHEN,
    ASSISTANT_FACTOR,
    FILLER_FACTOR,
    KEYWORD_WEIGHT,
    KEYWORD_WEIGHT_CJK,
    KEYWORD_WEIGHT_CJK_MULTILINGUAL,
    NOTE_FACTOR,
    SESSION_FACTOR,
    STALE_FACTOR,
    WHEN_BONUS,
    SnapshotRow,
    asked_span,
    best_per_note,
    by_assistant_alone,
    date_bonus,
    embedded_query,
    favours_the_person,
    is_filler,
    says_when_cached,
    weight,
)
from vaultmem.store.config import MULTILINGUAL_MODELS
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.text.script import is_chinese

# The access map is re-read from state.db at most this often (other processes record too).
ACCESS_REFRESH_SECONDS = 60.0
CANDIDATES = 60          # per retriever, before fusion
# A search of a large table (`ChunkIndex.large`) asks its indexes for at most this many
# candidates a side while a filter the SQL narrowing cannot express leaves too few.
LARGE_MAX_CANDIDATES = 4000
# What scoring reads of each candidate (`_hybrid` unpacks them in this order).
SCORING_COLUMNS = ("chunk_id", "note_id", "type", "text", "fts_text", "created", "updated", "valid_from",
                   "importance", "source_messages")


class Searcher:
    """Search over one vault's index; keep it alive (e.g. in the daemon) to stay warm."""

    def __init__(self, vault, embedder_factory, index: ChunkIndex | None = None,
                 access_source=None):
        self.vault = vault
        # `access_source()` -> {note_id: {"last_access": iso, ...}} (State.all_access); read
        # once per ACCESS_REFRESH_SECONDS, never per hit.
        self._access_source = access_source
        self._access: dict = {}
        self._access_read_at = None
        # Share the Indexer's ChunkIndex where there is one: its writes then patch the
        # in-memory vectors instead of forcing a reload.
        self.index = index or ChunkIndex(vault.root)
        self._embedder_factory = embedder_factory
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultmem-fts")

    def search(self, query: str, k: int = 10, type: str | None = None, tag: str | None = None,
               user: str | None = None, since=None, as_of=None, all: bool = False,
               min_score: float | None = None, vector=None, scope: str = "all",
               under: list | None = None) -> Hits:
        """The `k` best hits for `query` that pass the filters and the score threshold.
        `scope`: memories, notes (the person's own) or all. `vector`: the query's embedding
        when the caller has it (a context asks twice). `under`: a list that receives the `k`
        best memories (statements) scoring under the threshold, for the read-time net
        (`current.mark_current`), which may find one of them is the very slot asked for."""
        config = self.vault.config
        scope = check_scope(scope)
        user = user or config.user
        also = ("shared",) if config.share_shared and user != "shared" else ()
        filters = Filters(user=user, type=type, tag=(tag or "").lstrip("#") or None,
                          since=normalise_day(since), as_of=normalise_day(as_of), all=all,
                          also_users=also, today=clock.today().isoformat(), scope=scope)
        threshold = config.min_score if min_score is None else min_score
        try:
            self.index.check_model(config.model)
            hits = self._hybrid(query, k, filters, threshold, vector, under)
        except (IndexUnavailable, ConfigError, OSError, ValueError, RuntimeError) as exc:
            hits = Hits(keyword_search(self.vault, query, k, filters, threshold))
            hits.warning = f"search index unavailable ({exc}); used a plain keyword scan of the vault"
        return hits

    def note_access(self, note_ids, stamp: str) -> None:
        """Keep the cached access map current after the caller recorded accesses."""
        for note_id in note_ids:
            entry = self._access.setdefault(note_id, {})
            entry["last_access"] = max(entry.get("last_access") or "", stamp)

    def _last_access(self) -> dict:
        import time

        if self._access_source is None:
            return {}
        now = time.monotonic()
        if self._access_read_at is None or now - self._access_read_at > ACCESS_REFRESH_SECONDS:
            try:
                self._access = self._access_source()
            except Exception:  # state.db busy or gone: rank without staleness this time
                self._access = {}
            self._access_read_at = now
        return self._access

    def _mask(self, snap, filters):
        """The filter mask of a snapshot, cached: most queries repeat the default filters."""
        mask = snap.cache.get(filters)
        if mask is None:
            if len(snap.cache) > 64:
                snap.cache.clear()
            mask = snap.cache[filters] = filters.mask(snap)
        return mask

    def _from_snapshot(self, query, filters, qvec, limit, span=None):
        """(snapshot, candidate offsets, their cosines, chunk id -> BM25 score) from the table
        held in memory: the mask over every row, the exact (or projected) vector half."""
        import numpy as np

        snap = self.index.snapshot()
        if not len(snap):
            return None
        mask = self._mask(snap, filters)
        allowed = int(np.count_nonzero(mask))
        if not allowed:
            return None
        # BM25 runs in LanceDB's threads while the model embeds the query.
        keyword_hits = self._pool.submit(self._keyword_hits, query, snap, filters, mask, allowed, limit)
        if qvec is None:
            qvec = self._embedder_factory().encode_query(embedded_query(query))
        best, sims = snap.nearest_rows(qvec, mask, allowed, limit)
        bm25 = keyword_hits.result()
        order = list(dict.fromkeys([int(i) for i in best] + self._said_within(snap, mask, span, qvec, limit)
                                   + snap.offsets_of(bm25)))
        picked = np.array(order, dtype=np.intp)
        # Each candidate's cosine, from the snapshot's vectors where not computed already.
        return snap, order, (sims[picked] if sims is not None else snap.vectors[picked] @ qvec), bm25

    @staticmethod
    def _said_within(snap, mask, span, qvec, limit) -> list[int]:
        """Offsets of the `limit` rows passing `mask` said within `span` (first day, last
        day) nearest to `qvec`: a question naming a time looks among what was said then."""
        import numpy as np

        if span is None:
            return []
        days = snap.cache.get("said_day")
        if days is None:
            cols = snap.columns
            days = snap.cache["said_day"] = np.array(
                [str(v or u or c)[:10] for v, u, c in zip(cols["valid_from"], cols["updated"], cols["created"])],
                dtype=object)
        rows = np.flatnonzero(mask & (days >= span.first) & (days <= span.last))
        if len(rows) > limit:
            rows = rows[np.argpartition(-(snap.vectors[rows] @ qvec), limit - 1)[:limit]]
        return [int(i) for i in rows]

    def _from_indexes(self, query, filters, qvec, limit):
        """The same from a table past `ANN_AFTER_ROWS`, not held in memory: the `limit`
        nearest rows the filters keep, from LanceDB's vector index (IVF-PQ, re-scored
        exactly; asked among the rows meeting `Filters.where` where that narrows them
        much), and the `limit` best by BM25 from its full-text index, each read by row id
        with the columns a hit needs and decided by `Filters.mask` over those rows alone."""
        import numpy as np

        where = filters.where()
        keyword_where = filters.where(user=False)   # a prefilter costs BM25 ~120 ms at 1M rows
        keyword = self._pool.submit(self._large_side, filters, limit, lambda wanted: self._ranked_rows(
            query, keyword_where, wanted))
        if qvec is None:
            qvec = self._embedder_factory().encode_query(embedded_query(query))
        near = self._large_side(filters, limit, lambda wanted: self.index.nearest(
            qvec, wanted, where, SNAPSHOT_COLUMNS))
        ranked = keyword.result()
        have = {row["chunk_id"] for row in near}
        rows = near + [row for row in ranked if row["chunk_id"] not in have]
        if not rows:
            return None
        snap = of_rows(rows)
        sims = snap.vectors @ np.asarray(qvec, dtype=np.float32)
        best = np.argsort(-sims[:len(near)], kind="stable")
        bm25 = {row["chunk_id"]: float(row["_score"]) for row in ranked}
        order = list(dict.fromkeys([int(i) for i in best] + snap.offsets_of(bm25)))
        return snap, order, sims[np.array(order, dtype=np.intp)], bm25

    def _ranked_rows(self, query, where, wanted) -> list[dict]:
        """The rows of the `wanted` best BM25 hits, best first, each with its `_score`."""
        return self.index.fts(query, where=where, limit=wanted, columns=SNAPSHOT_COLUMNS + ["vector"])

    @staticmethod
    def _large_side(filters, limit, read) -> list[dict]:
        """The first `limit` rows of `read(wanted)` (best first) that the filters' mask keeps,
        asking for four times as many while it keeps too few of a full answer."""
        wanted = limit
        while True:
            rows = read(wanted)
            kept = [row for row, keep in zip(rows, filters.mask(of_rows(rows))) if keep] if rows else []
            if len(kept) >= limit or len(rows) < wanted or wanted >= LARGE_MAX_CANDIDATES:
                return kept[:limit]
            wanted *= 4

    def _keyword_hits(self, query, snap, filters, mask, allowed, limit) -> dict[str, float]:
        """chunk id -> BM25 score of the best `limit` chunks that pass `mask`, best first.

        LanceDB ranks the table and the mask picks from its ranking, so the filtered hits
        are exactly the unfiltered ones minus those the filters exclude. It asks for as
        many as the mask's share of the ranked rows suggests and, while the filters leave
        fewer than `limit` and LanceDB has more, for as many more as the share they kept
        suggests (a selective filter is never starved by the hits it excludes)."""
        where, ranked_rows = self._narrowing(snap, filters, mask, allowed)
        positions = snap.positions()
        # Twice what the mask's share suggests: a second round costs more than a longer first.
        wanted = limit if allowed == ranked_rows else min(ranked_rows, -(-2 * limit * ranked_rows // allowed))
        while True:
            ranked = self.index.fts(query, where=where, limit=wanted)
            found = {}
            for hit in ranked:
                # Rows written after the snapshot was taken wait for the next search.
                offset = positions.get(hit["chunk_id"])
                if offset is not None and mask[offset]:
                    found[hit["chunk_id"]] = float(hit["_score"])
                    if len(found) == limit:
                        return found
            if len(ranked) < wanted:
                return found
            wanted = max(2 * wanted, -(-2 * limit * wanted // max(len(found), 1)))

    @staticmethod
    def _narrowing(snap, filters, mask, allowed) -> tuple[str | None, int]:
        """(SQL condition, rows meeting it): the values the rows passing `mask` take in a
        few short columns, read off the mask itself, so LanceDB can skip rows no filter
        lets through (`--type`, `--user`). Only a shortcut: it holds for every allowed row
        by construction, and the mask still decides. None when it would skip little."""
        import numpy as np

        if allowed * 2 > len(snap):   # a prefilter costs LanceDB more than it saves here
            return None, len(snap)
        key = ("narrowing", filters)
        if key not in snap.cache:
            clauses, meets = [], np.ones(len(snap), dtype=bool)
            for name in NARROWING_COLUMNS:
                column = snap.columns[name]
                values = np.unique(column[mask])
                inside = np.isin(column, values)
                if not inside.all():
                    clauses.append(sql_in(name, values.tolist()))
                    meets &= inside
            snap.cache[key] = (" AND ".join(clauses) or None, int(np.count_nonzero(meets)))
        return snap.cache[key]

    def _hybrid(self, query, k, filters, threshold, qvec=None, under=None) -> Hits:
        import numpy as np

        if not query.strip():
            return Hits()
        limit = max(CANDIDATES, 3 * k)
        today = clock.today()
        span = asked_span(query, today)
        found = self._from_indexes(query, filters, qvec, limit) if self.index.large \
            else self._from_snapshot(query, filters, qvec, limit, span)
        if found is None:
            return Hits()
        snap, order, cosines, bm25 = found
        cols = snap.columns
        top_bm25 = max(bm25.values(), default=0.0) or 1.0
        qterms = term_patterns(terms(query))
        keyword_weight = KEYWORD_WEIGHT
        if is_chinese(query):
            keyword_weight = KEYWORD_WEIGHT_CJK_MULTILINGUAL \
                if self.vault.config.model in MULTILINGUAL_MODELS else KEYWORD_WEIGHT_CJK
        asks_when = bool(ASKS_WHEN.search(query))
        about_the_person = favours_the_person(query)
        access = self._last_access()
        stale_days = self.vault.config.gc_stale_after_days
        stale_before = (today - timedelta(days=stale_days)).isoformat() if stale_days > 0 else ""
        # The candidates' values as Python lists, one gather per column: reading numpy
        # elements one by one cost more than the scoring itself.
        picked = np.array(order, dtype=np.intp)
        candidates = zip(order, cosines.tolist(),
                         *(cols[name][picked].tolist() for name in SCORING_COLUMNS))
        scored, low = [], []
        for offset, vector, chunk_id, note_id, kind, text, fts_text, created, updated, said, importance, \
                messages in candidates:
            # Our own (stemmed) word overlap counts for every candidate: LanceDB's BM25 does not
            # stem, so "lives" there misses "live" in the question; its rank only weighs it.
            lexical = keyword_coverage(qterms, fts_text)
            lexical *= 0.5 + 0.5 * bm25.get(chunk_id, 0.0) / top_bm25
            updated = updated or created
            said = said or updated
            when = WHEN_BONUS if asks_when and says_when_cached(text) else 0.0
            then = date_bonus(span, said)
            score = (max(vector, 0.0) + keyword_weight * lexical + when + then) * weight(importance, said, today)
            if kind == "session":
                score *= SESSION_FACTOR
                if is_filler(text):
                    score *= FILLER_FACTOR
                elif about_the_person and by_assistant_alone(text, len(messages or ())):
                    score *= ASSISTANT_FACTOR
            elif kind == NOTE_TYPE:
                score *= NOTE_FACTOR
            else:  # sessions are records, not recalled memories
                seen = (access.get(note_id) or {}).get("last_access") or ""
                if max(seen, updated)[:10] < stale_before:
                    score *= STALE_FACTOR
            if score >= threshold:
                scored.append((score, vector, lexical, SnapshotRow(cols, offset, when, then)))
            elif under is not None and kind in STATEMENT_TYPES:
                low.append((score, vector, lexical, SnapshotRow(cols, offset, when, then)))
        hits = Hits(best_per_note(scored, k))
        if low:
            shown = {h.id for h in hits}
            under.extend(h for h in best_per_note(low, k) if h.id not in shown)
        return hits


def search(vault, query: str, k: int = 10, type=None, tag=None, user=None, since=None,
           as_of=None, all: bool = False, embedder=None, scope: str = "all") -> Hits:
    """One-shot search (loads the model unless `embedder` is given); see `Searcher`."""
    if embedder is None:
        from vaultmem.index.embed import embedder_for

        embedder = embedder_for(vault.config)
    return Searcher(vault, lambda: embedder).search(
        query, k=k, type=type, tag=tag, user=user, since=since, as_of=as_of, all=all, scope=scope)


def keyword_search(vault, query: str, k: int, filters: Filters, threshold: float) -> list[Hit]:
    """The fallback without an index: chunk every note and rank by shared words.

    Slow on big vaults but needs neither the model nor LanceDB. The threshold is scaled
    like the keyword part of a hybrid score, so a few shared words are enough.
    """
    from vaultmem.index.ingest import chunks_of

    qterms = term_patterns(terms(query))
    scored = []
    for path in vault.iter_indexed():
        rel = vault.rel(path)
        try:
            chunks = chunks_of(vault, rel, path.read_bytes(), path, mtime=path.stat().st_mtime)
        except (OSError, VaultmemError):
            continue
        for chunk in chunks:
            row = dict(chunk.__dict__)
            if not row_passes(row, filters):
                continue
            coverage = keyword_coverage(qterms, f"{chunk.search_text} {chunk.keywords}")
            if coverage > 0 and coverage >= min(threshold, 0.5):
                scored.append((coverage, 0.0, coverage, row))
    return best_per_note(scored, k)
