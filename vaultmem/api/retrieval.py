"""The read path: `search` and `context`, and which of their hits is current."""

from __future__ import annotations


# Where no hit names the user's relation, this many memories found by the relation's words are
# read for the name (`relations.hop`).
NAMING_HITS = 5


class Retrieval:
    """`Memory`'s answers to a question: ranked hits, or a block for a prompt."""

    @property
    def searcher(self):
        """Hybrid search over the index (kept warm: its vector matrix stays in memory)."""
        if getattr(self, "_searcher", None) is None:
            from vaultmem.retrieve.search import Searcher

            self._searcher = Searcher(self.vault, embedder_factory=lambda: self.embedder,
                                      index=self.indexer.index,
                                      access_source=self.indexer.state.all_access)
        return self._searcher

    def _search_hits(self, query, k=10, type=None, tag=None, user=None, since=None,
                     as_of=None, all=False, vector=None, scope="all", under=None):
        hits = self.searcher.search(query, k=k, type=type, tag=tag, user=user or self.user,
                                    since=since, as_of=as_of, all=all, vector=vector, scope=scope,
                                    under=under)
        if hits.warning is None:
            self._recalled([h.id for h in hits if h.type not in ("session", "note")])
        return hits

    def _recalled(self, accessed) -> None:
        """Recalling a memory keeps it from going stale; sessions and the user's notes never do."""
        if accessed:
            from vaultmem import clock

            stamp = clock.iso(clock.now())
            self.indexer.state.record_access(accessed, stamp)
            self.searcher.note_access(accessed, stamp)

    def search(self, query: str, k: int = 10, type: str | None = None, tag: str | None = None,
               user: str | None = None, since=None, as_of=None, all: bool = False,
               scope: str = "all", rerank: str | None = None, project: str | None = None) -> dict:
        """Ranked hits: `{"query", "hits": [HIT, ...]}` plus `"warning"` after a fallback.
        `scope`: "memories" (memory and session notes), "notes" (the user's own notes, read
        only; hits of type `note`) or "all". `rerank`: "llm" has the `[llm]` endpoint reorder
        the top hits (`retrieve/rerank.py`), "" keeps the first stage's order; None: as
        `[search] rerank` says. `project` (a folder or a project's name): what was said only in
        other projects' agent sessions is left out, but for facts and preferences about the
        person (`retrieve/projects.py`).

        >>> Memory(vault).search("what is the user giving up?")["hits"][0]["title"]  # doctest: +SKIP
        'Cutting back on coffee'
        """
        rerank = self._rerank_stage(rerank)
        wanted = self._wanted(k, rerank)
        keep = self._project_keep(project)
        asked = wanted if keep is None else max(wanted * 4, 40)   # room for those left out
        under = []
        hits = self._search_hits(query, asked, type, tag, user, since, as_of, all, scope=scope, under=under)
        self._hop(hits, query, asked, type, tag, user, since, as_of, all, scope)
        self._in_project(hits, keep, wanted)
        self._mark_current(hits, query, as_of, under, keep, wanted)   # (it sorts by score: before the model's order)
        if rerank:
            hits = self._first(self._llm_reranked(query, hits, as_of), k)
        result = {"query": query, "hits": [h.to_dict() for h in hits]}
        if hits.warning:
            result["warning"] = hits.warning
        self._advise_on_language(result, query)
        return result

    def related(self, path: str, k: int = 8, user: str | None = None) -> dict:
        """What lies nearest the note at `path`: `{"path", "hits": [HIT + "why"]}`, the
        memories naming it first (`vaultmem.retrieve.related`)."""
        from vaultmem.retrieve.related import related

        return related(self.vault, self.searcher, path, k, user or self.user, self._readers(user))

    def context(self, question: str = "", budget: int = 800, user: str | None = None,
                k: int = 20, as_of=None, all: bool = False, scope: str = "all",
                rerank: str | None = None, project: str | None = None, startup: bool = False) -> dict:
        """A prompt-ready block within `budget` tokens: `{"question", "budget", "text",
        "tokens", "memories", "snippets", "notes", "pinned", "ids"}` (+ `"warning"` after a
        fallback). `as_of` (YYYY-MM-DD) and `all` choose the memories as `search` does; a
        line for one that is no longer current says until when it held and what superseded
        it. `scope` as for `search`: passages of the user's own notes follow the memories
        under their own heading. `rerank` as for `search`: with "llm" the block follows the
        model's order. `project` as for `search`. `startup`: no question, the start-up brief
        (`startup`).

        >>> print(Memory(vault).context("what does the user drink?", budget=200)["text"])  # doctest: +SKIP
        """
        if startup:
            if (question or "").strip() or as_of or all:
                from vaultmem.errors import VaultmemError

                raise VaultmemError("the start-up brief takes no question, as_of or all: it is what "
                                    "holds now, before any question")
            return self.startup(budget=budget, user=user, project=project)
        from vaultmem.errors import VaultmemError

        if not (question or "").strip():
            raise VaultmemError("context needs a question (or `--startup` for the start-up brief)")
        from vaultmem.retrieve.context import CARE, PINNED_MAX, PINNED_TAG, build_context
        from vaultmem.retrieve.ranking import embedded_query
        from vaultmem.text.script import is_chinese

        try:  # embedded once for both searches
            vector = self.embedder.encode_query(embedded_query(question))
        except VaultmemError:
            vector = None
        rerank = self._rerank_stage(rerank)
        wanted = self._wanted(k, rerank)
        keep = self._project_keep(project)
        asked = wanted if keep is None else max(wanted * 4, 40)   # room for those left out
        under = []
        hits = self._search_hits(question, k=asked, user=user, as_of=as_of, all=all, vector=vector,
                                 scope=scope, under=under)
        self._hop(hits, question, asked, None, None, user, None, as_of, all, scope)
        self._in_project(hits, keep, wanted)
        self._mark_current(hits, question, as_of, under, keep, wanted)
        if rerank:
            hits = self._first(self._llm_reranked(question, hits, as_of, ended=True), k)
        pinned = [] if hits.warning or scope == "notes" else self.searcher.search(
            question, k=PINNED_MAX, tag=PINNED_TAG, user=user or self.user, as_of=as_of, all=all,
            min_score=0.0, vector=vector, scope="memories")
        self._in_project(pinned, keep, len(pinned))
        for hit in [*hits, *pinned]:
            if hit.status == "superseded":   # only --as-of / --all show these: a few reads
                hit.superseded_by = self._superseded_by(hit.path)
        count = self._token_counter()
        result = {"question": question, "budget": budget,
                  **build_context(hits, budget=budget, count_tokens=count, pinned=pinned,
                                  care=bool(CARE.search(question)),
                                  lang="zh" if is_chinese(question) else "en", turns=self._turns_reader())}
        if hits.warning:
            result["warning"] = hits.warning
        self._advise_on_language(result, question)
        return result

    def startup(self, budget: int = 600, user: str | None = None, project: str | None = None) -> dict:
        """The start-up brief (`retrieve/brief.py`): standing instructions and preferences, facts
        about the person, then recent work on `project`, each dated, within `budget` tokens;
        `{"question": "", "budget", "text", "tokens", "memories", "snippets", "notes", "pinned",
        "ids", "sections", "project"}`.

        >>> print(Memory(vault).startup(project="~/code/acme-billing")["text"])  # doctest: +SKIP
        """
        from vaultmem import clock
        from vaultmem.retrieve.brief import startup_brief
        from vaultmem.retrieve.projects import in_project, project_of
        from vaultmem.store import project_name
        from vaultmem.text.script import is_chinese

        today = clock.today().isoformat()
        rows = [r for r in self._brief_rows(user or self.user) if not r["valid_to"] or r["valid_to"][:10] >= today]
        lang = "zh" if rows and sum(is_chinese(r["text"]) for r in rows) * 2 > len(rows) else "en"
        project = (project or "").strip() or None
        whose = project_of(self.vault, project) if project else None
        brief = startup_brief(rows, in_project(self.vault, project, whose), budget, self._token_counter(),
                              project=project and project_name(project), lang=lang, today=today,
                              recent=whose and (lambda row: whose(row) == "this"))
        return {"question": "", "budget": budget, **brief, "project": project or None}

    def _brief_rows(self, user: str) -> list[dict]:
        """The user's active memories the brief reads, from the index (else from the notes)."""
        from vaultmem.errors import VaultmemError
        from vaultmem.retrieve.brief import BRIEF_TYPES

        columns = ["note_id", "path", "type", "text", "importance", "created", "valid_from", "valid_to", "sources"]
        try:
            from vaultmem.index.table import sql_in, sql_str

            return self.indexer.index.rows(f"{sql_in('type', BRIEF_TYPES)} AND status = 'active' "
                                           f"AND user = {sql_str(user)}", columns)
        except (VaultmemError, OSError, ValueError):
            pass
        from vaultmem.store import as_list, read_note, statement_of

        rows = []
        for path in self.vault.iter_notes():
            try:
                note = read_note(path)
            except (VaultmemError, OSError, ValueError):
                continue
            if note.get("type") in BRIEF_TYPES and note.get("status") == "active" and note.get("user", "default") == user:
                rows.append({"note_id": str(note.get("id")), "path": self.vault.rel(path), "type": note.get("type"),
                             "text": statement_of(note.body), "importance": float(note.get("importance") or 0.5),
                             "created": str(note.get("created") or ""), "valid_from": str(note.get("valid_from") or ""),
                             "valid_to": str(note.get("valid_to") or ""),
                             "sources": [str(x) for x in as_list(note.get("sources"))]})
        return rows

    def _token_counter(self):
        from vaultmem.errors import VaultmemError

        try:
            return self.embedder.count_tokens
        except VaultmemError:  # no model: a conservative estimate keeps the budget honest
            return lambda text: 2 * len(text.split()) + len(text) // 4

    def _project_keep(self, project: str | None):
        """`keep(hit)` for `project` (`retrieve/projects.py`), the vault's sessions read once a
        call; None when no project is asked for."""
        from vaultmem.retrieve.projects import in_project

        return in_project(self.vault, project) if project and project.strip() else None

    @staticmethod
    def _in_project(hits, keep, wanted: int) -> None:
        """`hits`, in place, without what `keep` leaves out, at most `wanted` of them."""
        if keep is not None:
            hits[:] = [h for h in hits if keep(h)][:wanted]

    @staticmethod
    def _wanted(k: int, rerank: str) -> int:
        """How many hits the first stage finds: `k`, or all the rerank stage may show."""
        if not rerank:
            return k
        from vaultmem.retrieve.rerank import RERANK_CANDIDATES

        return max(k, RERANK_CANDIDATES)

    def _llm_reranked(self, question: str, hits, as_of=None, ended: bool = False):
        """`hits` in the order the `[llm]` model gives (`retrieve/rerank.py`), shown as many as
        its `context_tokens` hold, with the day the question is asked: `as_of` when given (the
        hits are what held then, and "Where does the user live?" asks of that day), else today.
        `ended` (the block an agent reads): the memories the model says a later passage ended
        are shown until that passage's day."""
        from vaultmem import clock
        from vaultmem.extract.llm_endpoint import LLMSettings, chat
        from vaultmem.retrieve.filters import normalise_day
        from vaultmem.retrieve.rerank import llm_rerank

        settings = LLMSettings.coerce(self.llm_settings())
        day = normalise_day(as_of)[:10] if as_of else clock.today().isoformat()   # the day the filter uses
        return llm_rerank(question, hits, lambda messages, max_tokens: chat(settings, messages, max_tokens=max_tokens),
                          context_tokens=settings.context_tokens, today=day, ended=ended, as_of=day if as_of else None)

    def _rerank_stage(self, asked: str | None) -> str:
        """The second stage a search runs: `asked`, else `[search] rerank`."""
        from vaultmem.errors import ConfigError
        from vaultmem.store.config import RERANKS

        stage = self.vault.config.search_rerank if asked is None else asked
        if stage not in RERANKS:
            raise ConfigError(f"unknown rerank stage {stage!r}: use \"llm\", or \"\" for none")
        return stage

    @staticmethod
    def _first(hits, k: int):
        kept = type(hits)(hits[:k])
        kept.warning = hits.warning
        return kept

    def _advise_on_language(self, result: dict, question: str) -> None:
        """The first Chinese question asked of a vault whose model reads English only (a vault
        made empty on an English locale, or mostly English when `init` chose) gets `advice`:
        how to switch. Its hits rest on shared characters alone; in LoCoMo-zh dev the
        multilingual model finds 75.4% of the evidence in the top 10, the English one 58.6%.
        Told once per vault and model (`.vaultmem/language-advice` remembers): a person who
        keeps the English model on purpose is not told at every question."""
        from vaultmem.store.config import MULTILINGUAL_MODEL, MULTILINGUAL_MODELS
        from vaultmem.store.files import atomic_write
        from vaultmem.store.layout import STATE_DIR
        from vaultmem.text.script import is_chinese

        model = self.vault.config.model
        if model in MULTILINGUAL_MODELS or not is_chinese(question):
            return
        told = self.vault.root / STATE_DIR / "language-advice"
        try:
            if told.read_text(encoding="utf-8").strip() == model:
                return
        except OSError:
            pass
        result["advice"] = (f"this vault's embedding model ({model}) reads English only, so a Chinese "
                            f"question is matched by shared characters alone: `vaultmem init --model "
                            f"{MULTILINGUAL_MODEL}` then `vaultmem reindex` switches it to the model "
                            "that reads Chinese and English (said once)")
        try:
            atomic_write(told, model + "\n")
        except OSError:  # a read-only vault is told again next time rather than failing a search
            pass

    def _hop(self, hits, question, k, type, tag, user, since, as_of, all, scope) -> None:
        """A question asked of the user's relation ("Where does the user's boyfriend work?")
        is asked again of the name a hit gives them (`relations.hop`), with the same filters;
        `hits` keeps its first `k`."""
        from vaultmem.retrieve.relations import hop
        from vaultmem.store.properties import read_head

        if hits.warning is not None or scope == "notes":
            return
        hop(hits, question, lambda rel: read_head(self.vault.abs(rel)),
            lambda again: self._search_hits(again, k, type, tag, user, since, as_of, all, scope=scope),
            lambda words: self._search_hits(words, NAMING_HITS, None, None, user, None, None, True,
                                            scope="memories"))
        del hits[k:]

    def _mark_current(self, hits, question: str, as_of=None, under=(), keep=None, k=None) -> None:
        """Of two active memories among `hits` that give one slot two values, the one said
        last is current and the other is shown as earlier (`current.mark_current`); with
        `as_of`, of the memories that held on that day. `under`: the memories the search
        scored under `[search] min_score` (those of the project `keep` leaves in): one the
        net lifts to the threshold joins `hits`, which keeps its first `k`, and is recalled
        (its access recorded) as a hit of the search is."""
        from vaultmem.retrieve.current import mark_current
        from vaultmem.store.properties import read_head

        if hits.warning is None:
            self._in_project(under, keep, len(under))
            mark_current(hits, question, lambda rel: read_head(self.vault.abs(rel)),
                         as_of=str(as_of)[:10] if as_of else None, under=under, floor=self.vault.config.min_score)
            if k is not None:
                del hits[k:]
            below = {id(h) for h in under}
            self._recalled([h.id for h in hits if id(h) in below])

    def _turns_reader(self):
        """`turns(hit)` -> [(speaker, text) or None] beside the links a session excerpt cites,
        read from its session note (each note once a call); None for other hits. A note gone or unreadable
        raises, and the block keeps that excerpt as search gave it (`context._widen`)."""
        from vaultmem.store.links import parse_link
        from vaultmem.store.note import read_note
        from vaultmem.store.session_note import parse_session_turns

        read: dict[str, dict] = {}

        def turns(hit):
            if hit.type != "session" or not hit.sources:
                return None
            if hit.path not in read:
                read[hit.path] = {t.block_id: t for t in parse_session_turns(read_note(self.vault.abs(hit.path)).body)}
            by_block = read[hit.path]
            cited = [by_block.get(parse_link(link).anchor.removeprefix("^")) for link in hit.sources]
            return [(t.speaker, t.text) if t is not None else None for t in cited] if any(cited) else None
        return turns

    def _superseded_by(self, rel: str) -> list[str]:
        """The `superseded_by` links of the note at `rel`, as written ([] when unreadable):
        the index keeps no links, the note is the source of truth."""
        from vaultmem.errors import VaultmemError
        from vaultmem.store.note import read_note
        from vaultmem.store.values import as_list

        try:
            return [str(v) for v in as_list(read_note(self.vault.abs(rel)).get("superseded_by"))]
        except (VaultmemError, OSError):
            return []
