"""Hybrid retrieval: vector similarity plus BM25 full-text search, fused and re-weighted.

    >>> searcher = Searcher(vault, embedder_factory=lambda: Embedder(vault.config.model))  # doctest: +SKIP
    >>> hits = searcher.search("what does the user drink?", k=5)                           # doctest: +SKIP
    >>> hits[0].to_dict()["text"], hits.warning                                             # doctest: +SKIP

How a hit is scored (all parts visible in `Hit.parts`). The score shown is the ranking
score: hits come out in its order, highest first.
- `vector`: cosine similarity of query and chunk (the whole filtered table is scanned as
  one in-memory matrix, so metadata filters apply before top-k, not after).
- `keyword`: the share of the query's words found in the chunk, weighted by where the
  chunk ranks in LanceDB's BM25 results. The same filter mask picks from that ranking
  (`Filters.mask` is the one definition of the filters; no SQL copy of it can drift).
- score = (vector + KEYWORD_WEIGHT * keyword) * (weights for importance and recency),
  where recency is the age of the day the memory was said (`valid_from`, else its last
  update), times SESSION_FACTOR for a session chunk, times FILLER_FACTOR for a session
  chunk whose turns are only greetings, thanks or filler ("Hi there!" / "Hello! How can I
  help?"), times STALE_FACTOR for a memory nobody recalled nor updated for
  `[gc] stale_after_days`, and times REPEAT_FACTOR for a hit whose source turns are all
  shown by higher hits already (`parts["repeat"]`; see `_best_per_note`). A question that
  asks when adds WHEN_BONUS to the match of a chunk that says when (`parts["when"]`).
Hits under `min_score` (config `[search] min_score`) are dropped, so an unrelated question
gets no hits rather than the least bad ones. When the index is missing or unusable, a plain
keyword scan of the vault answers instead and `hits.warning` says so.
"""

from __future__ import annotations

import heapq
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache

from vaultmem import clock
from vaultmem.errors import ConfigError, IndexUnavailable, VaultmemError
from vaultmem.index.table import ChunkIndex, sql_in
from vaultmem.index.user_notes import NOTE_TYPE
from vaultmem.store.config import MULTILINGUAL_MODELS
from vaultmem.store.languages import CJK as _CJK
from vaultmem.text.rewrite import is_chinese

# What a search reads: memory and session notes, the person's own notes, or both.
SCOPES = ("memories", "notes", "all")

KEYWORD_WEIGHT = 0.5
# The bundled model knows little Chinese: for a question mostly in CJK its cosines are close
# to noise (0.68 for an unrelated note, 0.41 for the one that answers), so shared words count
# for more until a multilingual model is configured. 1.5 (from 1.0): LoCoMo-zh R@10 48.6 ->
# 49.5, and a note that shares 弟弟 with the question beats one that shares only 用户.
KEYWORD_WEIGHT_CJK = 1.5
# With a multilingual model the vectors understand Chinese, and the bigram overlap (noisy:
# "婷在", "是哪") counts for less. LoCoMo-zh R@10 with use-multilingual-v3: 1.5 66.6,
# 1.0 69.7, 0.7 68.1, 0.3 65.0.
KEYWORD_WEIGHT_CJK_MULTILINGUAL = 1.0
# A session chunk is the user's own words, the evidence the memories were drawn from, but
# it carries no importance and ages from the conversation while its memories age from
# extraction, and short entity-named statements embed closer to a question: without this
# the memories crowd the turns out (LoCoMo dev R@5 66.5 -> 71.2 with 1.2 and weight 0.5).
SESSION_FACTOR = 1.2
IMPORTANCE_WEIGHT = 0.10
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 180
# Memories nobody recalled (nor updated) for `[gc] stale_after_days` rank this much lower.
STALE_FACTOR = 0.85
# A session chunk of greetings and filler is embedded with its neighbour turn, so it matches
# what the next turn says ("Hi there!" scored 1.09 against 1.04 for the memory that answered
# "does the user have a cat?") while showing nothing: it must never outrank a memory.
FILLER_FACTOR = 0.3
# The person's own notes compete with the memories by the same score: a chunk of a note
# carries its title and heading path, which a question shares as often as a memory's words.
NOTE_FACTOR = 1.0
# A hit whose source turns are all shown by higher hits (a memory beside the turn it was
# drawn from) tells the reader little new: it ranks as if it scored this much less.
REPEAT_FACTOR = 0.5
# A question that asks when ("when did…", 哪天, 什么时候) favours passages that say when
# ("last Saturday", 5月28号, "yesterday"): the turn that answers it may share no other word
# with it ("比亚迪宋PLUS，插混的，上周六提的" for "苏晴是哪天把新车开回家的？"). Added to the
# match before the weights. LoCoMo-zh R@10 with use-multilingual-v3 (post-hoc, 30 hits
# re-ranked): +0 69.7, +0.1 71.8, +0.2 74.4, +0.3 74.4; LoCoMo dev 80.5 -> 81.0 at 0.2.
WHEN_BONUS = 0.2
_ASKS_WHEN = re.compile(r"\bwhen\b|\bwhat (?:date|day|year|month|time of year)\b|\bhow long ago\b|"
                        r"\bwhich (?:day|date|year|month)\b|哪天|哪一天|什么时候|几号|几月|哪年|哪一年|"
                        r"哪个月|何时|多久以前", re.I)
# Small talk is short: a longer chunk is not classified (the classifier costs ~0.3 ms), a
# greeting turn is small talk up to GREETING_WORDS, another reaction up to ACKNOWLEDGEMENT_WORDS.
# (LoCoMo dev: a 30-word cap on any reaction flagged 26 of 185 evidence turns and cost
# 0.9 points of R@10; these caps flag 3.)
FILLER_MAX_WORDS = 30
GREETING_WORDS = 12
ACKNOWLEDGEMENT_WORDS = 4
# The access map is re-read from state.db at most this often (other processes record too).
ACCESS_REFRESH_SECONDS = 60.0
CANDIDATES = 60          # per retriever, before fusion
# Short columns whose values among the allowed rows narrow LanceDB's BM25 scan.
NARROWING_COLUMNS = ("type", "user", "status")
# What scoring reads of each candidate (`_hybrid` unpacks them in this order).
SCORING_COLUMNS = ("chunk_id", "note_id", "type", "text", "fts_text", "created", "updated", "valid_from",
                   "importance")

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
# "Alice: " opening a chunk line (chunking writes each turn as `Speaker: text`).
_SPEAKER = re.compile(r"^[^:\n]{1,60}: ")
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does doing
for from had has have having he her hers him his how i if in into is it its itself me my of on
or our ours she so than that the their them then there these they this those to too us was we
were what when where which while who whom why will with would you your yours about any all
also am just more most no not only other over own same some such very s t don should now
user user's""".split())


@dataclass
class Hit:
    """One search result. `to_dict()` is the SPEC §5 HIT shape."""

    id: str
    path: str
    type: str
    title: str
    text: str
    score: float
    status: str
    created: str
    updated: str
    source_messages: list
    sources: list = field(default_factory=list)
    importance: float = 0.5
    parts: dict = field(default_factory=dict)
    valid_from: str = ""      # the day it was said ('' when unknown)
    valid_to: str = ""        # the last day it held ('' while it holds)
    tags: list = field(default_factory=list)
    superseded_by: list = field(default_factory=list)   # links, filled in by who shows them

    def to_dict(self) -> dict:
        return {"id": self.id, "path": self.path, "type": self.type, "title": self.title,
                "text": self.text, "score": round(self.score, 4), "status": self.status,
                "created": self.created, "updated": self.updated,
                "valid_from": self.valid_from, "valid_to": self.valid_to,
                "source_messages": list(self.source_messages)}


class Hits(list):
    """A list of Hit with `warning` set when the keyword fallback answered."""

    warning: str | None = None


@dataclass(frozen=True)
class Filters:
    """Metadata conditions as a numpy mask over a `Snapshot`: the one definition of the
    filters, used by the vector half, the keyword half and the no-index fallback."""

    user: str | None = None
    type: str | None = None
    tag: str | None = None
    since: str | None = None
    as_of: str | None = None
    all: bool = False
    also_users: tuple = ()
    # Memories whose `valid_to` day is before `today` are no longer current: left out
    # unless `all` or `as_of` asks for the past.
    today: str | None = None
    # "memories" (memory and session notes), "notes" (the person's own) or "all".
    scope: str = "all"

    def mask(self, snap):
        import numpy as np

        cols = snap.columns
        mask = np.ones(len(snap), dtype=bool)
        notes = cols["type"] == NOTE_TYPE
        if self.user is not None:   # the person's notes belong to the vault, not a namespace
            mask &= np.isin(cols["user"], [self.user, *self.also_users]) | notes
        if self.scope == "memories":
            mask &= ~notes
        elif self.scope == "notes":
            mask &= notes
        if self.type:
            mask &= cols["type"] == self.type
        if self.tag:
            inner, nested = f"|{self.tag}|", f"|{self.tag}/"
            mask &= np.fromiter((inner in t or nested in t for t in cols["tags"]), bool, len(snap))
        if self.since:
            mask &= cols["created"] >= self.since
        if self.as_of:
            day = self.as_of
            start = snap.cache.get("start_day")
            if start is None:  # valid_from, else the creation day (astype U10 truncates)
                start = np.where(cols["valid_from"] != "", cols["valid_from"].astype("U10"),
                                 cols["created"].astype("U10"))
                snap.cache["start_day"] = start
            mask &= start <= day
            ends = cols["valid_to"]
            mask &= (ends == "") | (ends > day) | ((ends.astype("U10") == day) & (cols["status"] != "superseded"))
            if not self.all:
                mask &= cols["status"] != "archived"
        elif not self.all:
            mask &= cols["status"] == "active"
            if self.today:
                mask &= (cols["valid_to"] == "") | (cols["valid_to"] >= self.today)
        return mask


def terms(text: str) -> set[str]:
    """Content words of `text`, crudely stemmed; CJK runs become bigrams."""
    found = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.match(word):
            found.update(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        elif word not in STOP_WORDS:
            found.add(stem(word))
    return found


def stem(word: str) -> str:
    """A crude English stem that meets itself across forms: live, lives, lived -> liv."""
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def keyword_coverage(patterns, text: str) -> float:
    """The share of a query's terms found in `text`; `patterns`: its `term_patterns()`."""
    if not patterns:
        return 0.0
    lowered = text.lower()
    return sum(1 for pattern in patterns if pattern.search(lowered)) / len(patterns)


def term_patterns(query_terms: set[str]) -> tuple:
    """One regex per term, matching the words `stem` maps onto it (liv: live, lives, lived,
    living; city: city, cities) without cutting every word of a chunk into terms."""
    found = []
    for term in sorted(query_terms):
        if _CJK.match(term):
            found.append(re.compile(re.escape(term)))
            continue
        base = term[:-1] if term.endswith("y") else term
        tails = "y|ies|ied|e|es|ed|ing|s" if term.endswith("y") else "e|es|ed|ing|s|ies"
        found.append(re.compile(rf"(?<![a-z0-9]){re.escape(base)}(?:{tails})?(?![a-z0-9])"))
    return tuple(found)


def normalise_day(value) -> str | None:
    """`2026-11-29` (str or date) -> '2026-11-29'; raises ConfigError-like message otherwise."""
    if value in (None, ""):
        return None
    text = value.isoformat() if isinstance(value, date) else str(value).strip()
    try:
        date.fromisoformat(text[:10])
    except ValueError:
        raise VaultmemError(f"{value!r} is not a date — use YYYY-MM-DD") from None
    return text


def weight(importance: float, said: str, today: date) -> float:
    """Multiplier in [1 - weights, 1] from importance and the age of `said`, the day the
    memory was said (`valid_from`; else its last update: an undated memory ages from when
    vaultmem learnt it)."""
    try:
        age = max(0, (today - date.fromisoformat(said[:10])).days)
        recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    except ValueError:
        recency = 0.5
    spare = 1 - IMPORTANCE_WEIGHT - RECENCY_WEIGHT
    return spare + IMPORTANCE_WEIGHT * float(importance) + RECENCY_WEIGHT * recency




@lru_cache(maxsize=65536)
def says_when_cached(text: str) -> bool:
    """`dates.says_when`, remembered per chunk text (asked for each candidate of a "when?")."""
    from vaultmem.text.dates import says_when

    return says_when(text)


@lru_cache(maxsize=65536)
def is_filler(text: str) -> bool:
    r"""True when every turn of a session chunk (`Speaker: text` lines) is a greeting, thanks
    or filler, by the extractor's own turn classifier: nothing in it can answer a question.

    >>> is_filler("Alice: Hi there!\nBot: Hello! How can I help?")
    True
    >>> is_filler("Alice: Hi! I adopted a cat called Miso.")
    False
    """
    from vaultmem.text.classify import classify_text
    from vaultmem.text.noise import opens_with_greeting

    turns = [_SPEAKER.sub("", line, count=1) for line in text.splitlines() if line.strip()]
    if not turns or len(text.split()) > FILLER_MAX_WORDS:
        return False
    for turn in turns:
        kind, _ = classify_text(turn)
        greets = opens_with_greeting(turn, chinese=False) or opens_with_greeting(turn, chinese=True)
        # A greeting, a short greeting with a question that asks nothing ("Hello! How can I
        # help?") or a bare acknowledgement ("Thanks!", "OK, cool."). Longer reactions ("Way
        # to go, Jon! Keep it up!") stay: LoCoMo cites them as evidence of how people relate.
        words = len(turn.split())
        small_talk = kind == "empty" or (kind == "filler" and words <= ACKNOWLEDGEMENT_WORDS) \
            or ((kind == "greeting" or greets and kind in ("question", "filler")) and words <= GREETING_WORDS)
        if not small_talk:
            return False
    return True


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
               min_score: float | None = None, vector=None, scope: str = "all") -> Hits:
        """The `k` best hits for `query` that pass the filters and the score threshold.
        `scope`: memories, notes (the person's own) or all. `vector`: the query's embedding
        when the caller has it (a context asks twice)."""
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
            hits = self._hybrid(query, k, filters, threshold, vector)
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

    def _hybrid(self, query, k, filters, threshold, qvec=None) -> Hits:
        import numpy as np

        snap = self.index.snapshot()
        if not query.strip() or not len(snap):
            return Hits()
        mask = self._mask(snap, filters)
        allowed = int(np.count_nonzero(mask))
        if not allowed:
            return Hits()
        limit = max(CANDIDATES, 3 * k)
        # BM25 runs in LanceDB's threads while the model embeds the query.
        keyword_hits = self._pool.submit(self._keyword_hits, query, snap, filters, mask, allowed, limit)
        if qvec is None:
            qvec = self._embedder_factory().encode_query(query)
        best, sims = snap.nearest_rows(qvec, mask, allowed, limit)
        bm25 = keyword_hits.result()
        order = list(dict.fromkeys([int(i) for i in best] + snap.offsets_of(bm25)))
        cols = snap.columns
        top_bm25 = max(bm25.values(), default=0.0) or 1.0
        qterms = term_patterns(terms(query))
        keyword_weight = KEYWORD_WEIGHT
        if is_chinese(query):
            keyword_weight = KEYWORD_WEIGHT_CJK_MULTILINGUAL \
                if self.vault.config.model in MULTILINGUAL_MODELS else KEYWORD_WEIGHT_CJK
        asks_when = bool(_ASKS_WHEN.search(query))
        today = clock.today()
        access = self._last_access()
        stale_days = self.vault.config.gc_stale_after_days
        stale_before = (today - timedelta(days=stale_days)).isoformat() if stale_days > 0 else ""
        # The candidates' values as Python lists, one gather per column: reading numpy
        # elements one by one cost more than the scoring itself.
        picked = np.array(order, dtype=np.intp)
        # Each candidate's cosine, from the snapshot's vectors where not computed already.
        cosines = sims[picked] if sims is not None else snap.vectors[picked] @ qvec
        candidates = zip(order, cosines.tolist(),
                         *(cols[name][picked].tolist() for name in SCORING_COLUMNS))
        scored = []
        for offset, vector, chunk_id, note_id, kind, text, fts_text, created, updated, said, importance \
                in candidates:
            # Our own (stemmed) word overlap counts for every candidate: LanceDB's BM25 does not
            # stem, so "lives" there misses "live" in the question; its rank only weighs it.
            lexical = keyword_coverage(qterms, fts_text)
            lexical *= 0.5 + 0.5 * bm25.get(chunk_id, 0.0) / top_bm25
            updated = updated or created
            said = said or updated
            when = WHEN_BONUS if asks_when and says_when_cached(text) else 0.0
            score = (max(vector, 0.0) + keyword_weight * lexical + when) * weight(importance, said, today)
            if kind == "session":
                score *= SESSION_FACTOR
                if is_filler(text):
                    score *= FILLER_FACTOR
            elif kind == NOTE_TYPE:
                score *= NOTE_FACTOR
            else:  # sessions are records, not recalled memories
                seen = (access.get(note_id) or {}).get("last_access") or ""
                if max(seen, updated)[:10] < stale_before:
                    score *= STALE_FACTOR
            if score >= threshold:
                scored.append((score, vector, lexical, SnapshotRow(cols, offset, when)))
        return Hits(_best_per_note(scored, k))


class SnapshotRow:
    """A candidate's row, read from the snapshot's columns only when `_best_per_note` looks
    at it: most candidates never reach it, and a dict of every column per candidate cost
    more than scoring them."""

    __slots__ = ("columns", "offset", "when")

    def __init__(self, columns: dict, offset: int, when: float = 0.0):
        self.columns, self.offset, self.when = columns, offset, when

    def __getitem__(self, name: str):
        return self.when if name == "when" else self.columns[name][self.offset]

    def get(self, name: str, default=None):
        return self[name]


def _best_per_note(scored, k) -> list[Hit]:
    """Highest score first; a memory note appears once (its best chunk), session turns each.

    Diversity by provenance: a session chunk whose turns are all shown by higher hits already
    (by a memory drawn from them, or another chunk) tells the reader little new, so its score
    is multiplied by REPEAT_FACTOR and it takes its place among the rest by that score
    (`parts["repeat"]` says so). A memory is never a repeat: beside the raw turn it was drawn
    from it is that turn said as a dated, typed, current statement, and two memories of one
    turn say two things ("first week at Orrin Robotics", "a staff engineer now"); halving
    them let unrelated memories outrank the one that answers (LoCoMo dev R@10 81.8 either
    way). Order and shown score never disagree."""
    queue = [(-score, n, False, vector, lexical, row)
             for n, (score, vector, lexical, row) in enumerate(scored)]
    heapq.heapify(queue)
    hits, seen, covered = [], set(), set()
    while queue and len(hits) < k:
        negative, n, repeat, vector, lexical, row = heapq.heappop(queue)
        # A memory shows once (its best chunk); a session once per turn, however split.
        key = (row["note_id"], tuple(row["source_messages"] or ()) if row["type"] == "session" else ())
        if key in seen:
            continue
        provenance = turns_of(row)
        if not repeat and row["type"] == "session" and provenance and provenance <= covered:
            heapq.heappush(queue, (negative * REPEAT_FACTOR, n, True, vector, lexical, row))
            continue
        seen.add(key)
        covered |= provenance
        parts = {"vector": round(vector, 4), "keyword": round(lexical, 4)}
        if row.get("when"):
            parts["when"] = row["when"]
        if repeat:
            parts["repeat"] = REPEAT_FACTOR
        hits.append(Hit(id=row["note_id"], path=row["path"], type=row["type"], title=row["title"],
                        text=row["text"], score=-negative, status=row["status"],
                        created=row["created"], updated=row["updated"],
                        source_messages=row["source_messages"] or [],
                        sources=row["sources"] or [], importance=row["importance"], parts=parts,
                        valid_from=row.get("valid_from") or "", valid_to=row.get("valid_to") or "",
                        tags=[t for t in (row.get("tags") or "").split("|") if t]))
    return hits


def turns_of(row) -> set[tuple[str, str]]:
    """The session turns a row comes from, as (session note name, message id): message ids
    alone repeat across sessions ("m-1" starts every one). A session chunk's own note is its
    session; a memory's sessions are the notes its `sources` link into."""
    messages = row["source_messages"] or ()
    if row["type"] == "session":
        sessions = {row["path"].rsplit("/", 1)[-1].removesuffix(".md")}
    else:
        sessions = {str(s).strip("[]").split("#", 1)[0].rsplit("/", 1)[-1] for s in row["sources"] or ()} or {""}
    return {(session, str(m)) for session in sessions for m in messages}


def check_scope(scope) -> str:
    """`scope` as one of SCOPES ("both" is "all"); a VaultmemError names the choices."""
    scope = "all" if scope in (None, "", "both") else str(scope)
    if scope not in SCOPES:
        raise VaultmemError(f"unknown scope {scope!r} — use memories, notes or all")
    return scope


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
            if not _row_passes(row, filters):
                continue
            coverage = keyword_coverage(qterms, f"{chunk.search_text} {chunk.keywords}")
            if coverage > 0 and coverage >= min(threshold, 0.5):
                scored.append((coverage, 0.0, coverage, row))
    return _best_per_note(scored, k)


def _row_passes(row: dict, filters: Filters) -> bool:
    """`Filters` applied to one row (the fallback has no table to query)."""
    import numpy as np

    from vaultmem.index.snapshot import FILTER_COLUMNS, Snapshot, column_array

    columns = {name: column_array(name, [row[name]]) for name in FILTER_COLUMNS}
    return bool(filters.mask(Snapshot(version=0, columns=columns, vectors=np.zeros((1, 1))))[0])
