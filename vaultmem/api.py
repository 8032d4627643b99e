"""The Python API: `Memory`, the one object the CLI, the daemon and the MCP server sit on.

    >>> from vaultmem import Memory                      # doctest: +SKIP
    >>> mem = Memory("~/Obsidian/MyVault")               # doctest: +SKIP
    >>> mem.add("The user prefers tea over coffee", type="preference")   # doctest: +SKIP
    {'action': 'created', 'id': '01J...', 'path': 'Memory/Preferences/...md', 'reason': '...'}
    >>> mem.search("what does the user drink?")["hits"][0]["text"]       # doctest: +SKIP

Every method returns plain JSON-able values (dicts, lists, strings), so the daemon can
send them over its socket and the CLI prints the same output whichever side answered.
Methods are grouped by area; each area's logic lives in its own module.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.store.config import load_config
from vaultmem.store.vault import Vault, find_vault


def init(path: str | Path, model: str | None = None) -> dict:
    """Create the layout, config, git's ignores and a git repo (if none) in `path`; the
    vault's root gets nothing but `.vaultmem/`, the memory folder and `.git/` (a new repo).
    `model`: the embedding model (default: the one that suits the vault's language)."""
    from vaultmem.history import git as history
    from vaultmem.store.init import init_vault

    result = init_vault(path, model=model)
    created = history.ensure_repo(Path(result["vault"]))
    result["git"] = "created a repository" if created else "using the existing repository"
    root = Path(result["vault"])
    memory_root = load_config(root).memory_root
    from vaultmem.sync import remote as sync

    if sync.install_attributes(Vault(root)):
        result["created"].append(f"{memory_root}/.gitattributes")
    result["created"] += sync.ensure_ignores(root)
    if sync.register_driver(root):
        result["merge_driver"] = "registered in .git/config (memory notes merge by property)"
    # The memory notes already there become the first recorded version of each; the memory
    # folder's .gitattributes goes with them. Nothing of the person's is committed.
    history.commit(root, [memory_root],
                   "vaultmem: init (record existing memory notes, merge memory notes by property)",
                   action="init")
    return result


def _keep_state_out_of_git(root: Path) -> None:
    """`.vaultmem/` ignores itself before anything is written in it: on a fresh clone (the
    `.gitignore` does not travel) a search or an add would otherwise leave the index where
    a `git add -A` commits it. A read-only vault is left as it is."""
    from vaultmem.store.init import ignore_state

    try:
        ignore_state(root)
    except OSError:
        pass


def _warning(change) -> dict:
    """`{"warning": ...}` when the change's commit or indexing failed (it is kept), else {}."""
    return {"warning": change.warning} if change.warning else {}


def _add_message(decision) -> str:
    title = Path(decision.path or "").stem
    if decision.action == "superseded" and decision.target is not None:
        return f"vaultmem: supersede '{Path(decision.target.rel).stem}' by '{title}'"
    if decision.action == "updated":
        return f"vaultmem: update '{title}' (near-duplicate merged)"
    return f"vaultmem: add {decision.type} '{title}'"


class Memory:
    """A vault's memory. `vault` defaults to $VAULTMEM_VAULT or the nearest vault upward."""

    def __init__(self, vault: str | Path | None = None, user: str | None = None, embedder=None,
                 serving: bool = False):
        """`embedder`: an already loaded `vaultmem.index.embed.Embedder` to share (one model for
        several vaults, as the benchmarks do); loaded on first use otherwise. `serving`: this
        is the daemon's own Memory (it never forwards a request to a daemon)."""
        root = find_vault(vault, Path.cwd())
        self.vault = Vault(root, load_config(root))
        _keep_state_out_of_git(root)
        self.user = user or self.vault.config.user
        # A Memory opened for one user reads only that namespace; without one, reads that
        # take no `user` see the whole vault (the vault owner's view).
        self._scope = user
        self._indexer = None
        self._embedder = embedder
        self._serving = serving

    # --- shared lazily-loaded parts -------------------------------------------------
    @property
    def embedder(self):
        """The sentence-transformers model (loaded on first use, then kept warm)."""
        if self._embedder is None:
            from vaultmem.index.embed import embedder_for

            self._embedder = embedder_for(self.vault.config)
        return self._embedder

    @property
    def model_loaded(self) -> bool:
        """Whether the model is loaded (a status report must not load it)."""
        return self._embedder is not None

    @property
    def indexer(self):
        """The ingest pipeline bound to this vault and model."""
        if self._indexer is None:
            from vaultmem.index.ingest import Indexer

            self._indexer = Indexer(self.vault, embedder_factory=lambda: self.embedder)
        return self._indexer

    def snapshot(self):
        """The index's rows and vectors as they are now (None before the first index)."""
        try:
            return self.indexer.index.snapshot()
        except Exception:  # no index yet: callers dedup by text and slot only
            return None

    def _vectors_of(self, user: str):
        """The index's vectors of `user`'s active memories (None before the first index)."""
        from vaultmem.index.table import sql_in

        try:
            return self.indexer.index.vectors_of(f"{sql_in('user', [user])} AND status = 'active' "
                                                 f"AND type != 'session'")
        except Exception:  # no index yet: callers dedup by text and slot only
            return None

    def change(self, message: str, action: str, run: str | None = None, source: str | None = None):
        """`with memory.change("vaultmem: ...", "add") as ch:` — the one way to change the
        vault's notes: written atomically, indexed and committed on exit, or put back on a
        failure (see `vaultmem.history.change`)."""
        from vaultmem.history.change import vault_change

        return vault_change(self.vault, message, action, indexer=self.indexer, run=run, source=source)

    # --- foundation: notes ----------------------------------------------------------
    def show(self, ref: str, at: str | None = None, user: str | None = None) -> dict:
        """A note in full (`at`: as it was at a git revision).

        >>> Memory(vault).show("Cutting back on coffee")["type"]   # doctest: +SKIP
        'preference'
        """
        from vaultmem.memory import memories

        if at:
            return self.show_at(ref, at, user=user)
        return memories.show(self.vault, ref, user=self._readers(user))

    def list(self, type: str | None = None, user: str | None = None,
             status: str | None = None) -> dict:
        """`{"notes": [summary, ...], "errors": [{"path", "reason"}, ...]}`."""
        from vaultmem.memory import memories

        notes, errors = memories.list_notes(self.vault, type=type, user=self._readers(user),
                                            status=status)
        return {"notes": notes, "errors": errors}

    def _readers(self, user: str | None) -> set | None:
        """Namespaces a read for `user` may see: its own, plus `shared` when configured;
        None (no limit) when neither the call nor this Memory names a user."""
        user = user or self._scope
        if not user:
            return None
        return {user} | ({"shared"} if self.vault.config.share_shared else set())

    # --- read path: index, search, context, doctor, stats ---------------------------
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
                     as_of=None, all=False, vector=None, scope="all"):
        hits = self.searcher.search(query, k=k, type=type, tag=tag, user=user or self.user,
                                    since=since, as_of=as_of, all=all, vector=vector, scope=scope)
        # Recalling a memory keeps it from going stale; sessions and the user's notes never do.
        accessed = [h.id for h in hits if h.type not in ("session", "note")]
        if accessed and hits.warning is None:
            from vaultmem import clock

            stamp = clock.iso(clock.now())
            self.indexer.state.record_access(accessed, stamp)
            self.searcher.note_access(accessed, stamp)
        return hits

    def search(self, query: str, k: int = 10, type: str | None = None, tag: str | None = None,
               user: str | None = None, since=None, as_of=None, all: bool = False,
               scope: str = "all") -> dict:
        """Ranked hits: `{"query", "hits": [HIT, ...]}` plus `"warning"` after a fallback.
        `scope`: "memories" (memory and session notes), "notes" (the user's own notes, read
        only; hits of type `note`) or "all".

        >>> Memory(vault).search("what is the user giving up?")["hits"][0]["title"]  # doctest: +SKIP
        'Cutting back on coffee'
        """
        hits = self._search_hits(query, k, type, tag, user, since, as_of, all, scope=scope)
        self._mark_current(hits, query)
        result = {"query": query, "hits": [h.to_dict() for h in hits]}
        if hits.warning:
            result["warning"] = hits.warning
        return result

    def context(self, question: str, budget: int = 800, user: str | None = None,
                k: int = 20, as_of=None, all: bool = False, scope: str = "all") -> dict:
        """A prompt-ready block within `budget` tokens: `{"question", "budget", "text",
        "tokens", "memories", "snippets", "notes", "pinned", "ids"}` (+ `"warning"` after a
        fallback). `as_of` (YYYY-MM-DD) and `all` choose the memories as `search` does; a
        line for one that is no longer current says until when it held and what superseded
        it. `scope` as for `search`: passages of the user's own notes follow the memories
        under their own heading.

        >>> print(Memory(vault).context("what does the user drink?", budget=200)["text"])  # doctest: +SKIP
        """
        from vaultmem.errors import VaultmemError
        from vaultmem.retrieve.context import CARE, PINNED_MAX, PINNED_TAG, build_context
        from vaultmem.text.rewrite import is_chinese

        try:  # embedded once for both searches
            vector = self.embedder.encode_query(question)
        except VaultmemError:
            vector = None
        hits = self._search_hits(question, k=k, user=user, as_of=as_of, all=all, vector=vector,
                                 scope=scope)
        self._mark_current(hits, question)
        pinned = [] if hits.warning or scope == "notes" else self.searcher.search(
            question, k=PINNED_MAX, tag=PINNED_TAG, user=user or self.user, as_of=as_of, all=all,
            min_score=0.0, vector=vector, scope="memories")
        for hit in [*hits, *pinned]:
            if hit.status == "superseded":   # only --as-of / --all show these: a few reads
                hit.superseded_by = self._superseded_by(hit.path)
        try:
            count = self.embedder.count_tokens
        except VaultmemError:  # no model: a conservative estimate keeps the budget honest
            def count(text):
                return 2 * len(text.split()) + len(text) // 4
        result = {"question": question, "budget": budget,
                  **build_context(hits, budget=budget, count_tokens=count, pinned=pinned,
                                  care=bool(CARE.search(question)),
                                  lang="zh" if is_chinese(question) else "en")}
        if hits.warning:
            result["warning"] = hits.warning
        return result

    def _mark_current(self, hits, question: str) -> None:
        """Of two active memories among `hits` that give one slot two values, the one said
        last is current and the other is shown as earlier (`current.mark_current`)."""
        from vaultmem.retrieve.current import mark_current
        from vaultmem.store.note import read_head

        if hits.warning is None:
            mark_current(hits, question, lambda rel: read_head(self.vault.abs(rel)))

    def _superseded_by(self, rel: str) -> list[str]:
        """The `superseded_by` links of the note at `rel`, as written ([] when unreadable):
        the index keeps no links, the note is the source of truth."""
        from vaultmem.errors import VaultmemError
        from vaultmem.store.note import as_list, read_note

        try:
            return [str(v) for v in as_list(read_note(self.vault.abs(rel)).get("superseded_by"))]
        except (VaultmemError, OSError):
            return []

    def reindex(self, full: bool = False, paths=None, progress=None) -> dict:
        """Bring the index up to date (`full`: rebuild). `progress(done, total)` per batch.
        A whole-vault pass first clears what a killed vaultmem process left (`recover`).
        Done by the vault's daemon when one runs (the index's one writer; no progress then)."""
        forwarded = self._forward("reindex", {"full": full, "paths": paths})
        if forwarded is not None:
            return forwarded
        if paths is None:
            self.recover()
        return self.indexer.sync(paths=paths, full=full, progress=progress).to_dict()

    def _forward(self, op: str, args: dict):
        """The daemon's result for `op` (see `vaultmem.ipc.protocol`), or None when no
        daemon serves it and the work is done here. The daemon's own Memory never forwards."""
        if self._serving:
            return None
        from vaultmem.ipc.client import try_request

        return try_request(self.vault.root, op, args)

    def recover(self) -> dict:
        """Remove what a vaultmem process killed mid-write left behind: its temp files in the
        memory folders and its `.git/index.lock` (never another process's lock); then commit,
        as vaultmem's, changes whose commit failed or was cut short (`change.commit_journaled`).
        `{"temp_files": [paths], "git": [names], "commits": [{"message", "commit"}]}`."""
        from vaultmem.history import git as history
        from vaultmem.history.change import commit_journaled
        from vaultmem.store.vault import remove_stale_temp_files

        left = {"temp_files": remove_stale_temp_files(self.vault),
                "git": history.clear_stale_locks(self.vault.root)}
        return dict(left, commits=commit_journaled(self.vault))

    def doctor(self) -> dict:
        """Drift between vault and index, unreadable notes, broken links, contradictions."""
        from vaultmem.doctor import doctor

        return doctor(self.vault)

    def repair(self, touching=None) -> dict:
        """What `doctor --fix` does for a vault synced from several devices: the merge
        driver registered in `.git/config` and git's ignores written (`.vaultmem/.gitignore`,
        `.trash/` in `.git/info/exclude`: a fresh clone lacks them), then duplicates,
        crossing supersedes and one-way supersede links repaired, one commit each (see
        `vaultmem.sync.reconcile`); `touching`: only repairs involving those vault paths (what a
        merge brought). `{"repairs", "commits", "merge_driver", "ignores"}`."""
        from vaultmem.sync import reconcile
        from vaultmem.sync import remote as sync

        registered = sync.register_driver(self.vault.root)
        ignores = sync.ensure_ignores(self.vault.root)
        return dict(reconcile.repair(self, touching),
                    merge_driver="registered in .git/config" if registered else None,
                    ignores=ignores)

    def stats(self) -> dict:
        """Notes by type and status, and the index's size."""
        from vaultmem.doctor import stats

        return stats(self.vault)

    # --- write path: add, extract ----------------------------------------------------
    def add(self, text: str, type: str = "fact", tags=(), importance: float | None = None,
            title: str | None = None, user: str | None = None, entities=(),
            dry_run: bool = False) -> dict:
        """Write one memory through the write policy (noise and secret filters, dedup,
        supersede). Returns `{"action", "id", "path", "reason"}`.

        >>> Memory(vault).add("The user prefers tea over coffee", type="preference")  # doctest: +SKIP
        {'action': 'created', 'id': '01J...', 'path': 'Memory/Preferences/....md', 'reason': 'new memory'}
        """
        from vaultmem.memory.write import apply, load_pool
        from vaultmem.policy.candidate import Candidate
        from vaultmem.policy.decide import decide
        from vaultmem.text.slots import describe_statement

        user = user or self.user
        slot = describe_statement(text, type)
        cand = Candidate(content=" ".join(text.split()), type=type,
                         importance=0.5 if importance is None else importance, tags=list(tags),
                         entities=list(entities) or slot.get("entities", []), title=title or "",
                         subject=slot.get("subject"), attribute=slot.get("attribute"),
                         value=slot.get("value"))
        if not title:
            cand.title = ""
        self.indexer.sync_memories()  # the memories compared with, as they are now
        pool = load_pool(self.vault, user, self._vectors_of(user), self.indexer.state)
        vector = self.embedder.encode([cand.content])[0]
        decision = decide(cand, user, pool, vector)
        if dry_run:
            return self._add_result(decision)
        with self.change(f"vaultmem: {decision.action} {cand.type}", decision.action) as ch:
            apply(self.vault, decision, pool, change=ch, user=user, vector=vector)
            ch.message, ch.action = _add_message(decision), decision.action
        return dict(self._add_result(decision), **_warning(ch))

    @staticmethod
    def _add_result(decision) -> dict:
        return {"action": "created" if decision.action == "created" else decision.action,
                "id": decision.id, "path": decision.path, "reason": decision.reason}

    def extract(self, paths, format: str | None = None, llm: bool = False,
                user: str | None = None, dry_run: bool = False, progress=None) -> dict:
        """Transcripts -> session notes and memory notes, through the write policy, committed
        in steps of sessions (`extract.run`); re-running after an interruption resumes.

        Returns SPEC's extract summary `{"run", "sessions", "created", "updated",
        "superseded", "rejected", "notes"}` (counts of the notes the commits hold) plus the
        decisions (the first 1,000), errors and warnings. `progress(done, total,
        turns_done, turns_total)` is called after each session.

        >>> Memory(vault).extract(["chat.jsonl"])["created"]   # doctest: +SKIP
        3
        """
        from vaultmem.extract.run import extract

        return extract(self, [Path(p) for p in paths], format=format, llm=llm,
                       user=user or self.user, dry_run=dry_run, progress=progress).to_dict()

    def llm_settings(self) -> dict:
        """The `[llm]` settings of config.toml, as the LLM extractor takes them."""
        cfg = self.vault.config
        return {"base_url": cfg.llm_base_url, "model": cfg.llm_model,
                "api_key_env": cfg.llm_api_key_env, "timeout": cfg.llm_timeout}

    # --- history: git ------------------------------------------------------------------
    def _note_rel(self, ref: str, user: str | None = None, change: bool = False) -> str:
        """NOTE as a vault path, through the one resolver (`memories.resolve_note`): a path
        no longer on disk (rolled back, deleted) is still accepted, so its history can be
        read and restored. With a `user` (or a Memory opened for one), another namespace's
        note is "not found"; reading also reaches `shared`, changing only the user's own."""
        from vaultmem.memory.memories import resolve_note

        users = self._owners(user) if change else self._readers(user)
        return resolve_note(self.vault, ref, users, gone=True)

    def _owners(self, user: str | None) -> set | None:
        """Namespaces whose notes a change for `user` may touch: its own only (None: any,
        when neither the call nor this Memory names a user)."""
        user = user or self._scope
        return {user} if user else None

    def history(self, ref: str, user: str | None = None) -> dict:
        """Every committed version of a note, newest first, following renames:
        `{"note", "versions": [{rev, short, date, author, email, action, run, source,
        message, path, change, old_path}, ...]}`.

        >>> [v["action"] for v in Memory(vault).history("Lives in Lisbon")["versions"]]  # doctest: +SKIP
        ['superseded', 'init']
        """
        from vaultmem.history import git as history

        rel = self._note_rel(ref, user)
        return {"note": rel, "versions": history.history(self.vault.root, rel)}

    def diff(self, ref: str, rev: str | None = None, user: str | None = None) -> dict:
        """`{"note", "rev", "diff"}`: REV against the note now, or (no REV) its latest change."""
        from vaultmem.history import git as history

        rel = self._note_rel(ref, user)
        return {"note": rel, "rev": rev, "diff": history.diff(self.vault.root, rel, rev)}

    def show_at(self, ref: str, rev: str, user: str | None = None) -> dict:
        """The note as it was at `rev`, in `show`'s shape plus `"rev"`."""
        from vaultmem.history import git as history
        from vaultmem.memory.memories import plain_meta, summary
        from vaultmem.store.note import content_hash, parse_note

        rel = self._note_rel(ref, user)
        text = history.show_at(self.vault.root, rel, rev)
        note = parse_note(text, self.vault.root / rel)
        readers = self._readers(user)
        if readers is not None and note.user not in readers:
            from vaultmem.memory.memories import not_found

            raise not_found(ref)
        out = summary(self.vault, self.vault.root / rel, note)
        out.update(meta=plain_meta(note.meta), body=note.body, hash=content_hash(note.raw), rev=rev)
        return out

    def rollback(self, ref: str | None = None, to: str | None = None, run: str | None = None,
                 user: str | None = None) -> dict:
        """Restore a note to revision `to`, or undo everything extraction run `run` wrote
        (superseded memories become active again). Each is one new commit; history is kept.

        >>> first = Memory(vault).history("Lives in Lisbon")["versions"][-1]["rev"]   # doctest: +SKIP
        >>> Memory(vault).rollback("Lives in Lisbon", to=first)["note"]              # doctest: +SKIP
        'Memory/Facts/Lives in Lisbon.md'
        """
        from vaultmem.errors import HistoryError
        from vaultmem.history import rollback

        if run:
            from vaultmem.memory.memories import check_run_owner

            check_run_owner(self.vault, run, self._owners(user))
            return rollback.rollback_run(self.vault, run, indexer=self.indexer)
        if not ref or not to:
            raise HistoryError("give NOTE --to REV, or --run RUN — `vaultmem history NOTE` lists revisions")
        return rollback.rollback_note(self.vault, self._note_rel(ref, user, change=True), to,
                                      indexer=self.indexer)

    def forget(self, ref: str, purge: bool = False, force: bool = False,
               user: str | None = None) -> dict:
        """Archive a memory (out of retrieval, kept in history); `purge` erases it instead:
        from the vault, every commit, the index, state.db and logs, with the words of the
        session turns it came from. Returns the purge's receipt (see `lifecycle.purge`).
        A purge is sent to the vault's daemon when one runs (the index's one writer).

        >>> Memory(vault).forget("Started learning Portuguese")["status"]   # doctest: +SKIP
        'archived'
        """
        from vaultmem.memory import forget

        if purge:
            result = self._forward("forget", {"ref": ref, "purge": True, "force": force,
                                              "user": user or self._scope})
            if result is not None:
                return result
        rel = self._note_rel(ref, user, change=True)
        if purge:
            from vaultmem.memory.lifecycle import purge as purge_memory

            return purge_memory(self, rel, force=force)
        return forget.forget(self.vault, rel, indexer=self.indexer)

    # --- lifecycle: gc, correct, log ---------------------------------------------------
    def gc(self, dry_run: bool = False, user: str | None = None) -> dict:
        """Archive low-importance memories not recalled for `[gc] archive_after_days`.
        `{"dry_run", "archived": [paths], "plan": [{"path", "reason", ...}]}`."""
        from vaultmem.memory.lifecycle import gc

        return gc(self, dry_run=dry_run, user=user)

    def correct(self, ref: str, text: str, user: str | None = None) -> dict:
        """Supersede a memory with its corrected text; the old version stays, superseded.

        >>> Memory(vault).correct("Lives in Lisbon", "The user lives in Porto")  # doctest: +SKIP
        {'action': 'superseded', 'path': 'Memory/Facts/The user lives in Shanghai.md', ...}
        """
        from vaultmem.memory.lifecycle import correct

        return correct(self, ref, text, user=user or self._scope)

    def log(self, limit: int = 50, run: str | None = None, user: str | None = None) -> list:
        """The audit trail, newest first: `[{"date", "action", "what", "run", "message", "paths"}]`
        from git's commits and state.db's events (purges). `user`: only that namespace's notes."""
        from vaultmem.memory.lifecycle import audit_log

        return audit_log(self.vault, limit=limit, run=run, user=user or self._scope)

    # --- agents: export ------------------------------------------------------------------
    def export(self, format: str, out=None, user: str | None = None) -> dict:
        """Write the hot set (most important current memories) for another agent:
        `format` is `claude` (a section of CLAUDE.md), `agents` (AGENTS.md) or `hermes`
        (MEMORY.md and USER.md in a folder). Returns `{"format", "files", "memories", "ids",
        "chars", "flagged", "left_out"}`; `flagged` lists memories left out because they
        read like prompt injections.

        >>> Memory(vault).export("claude", out=tmp / "CLAUDE.md")["files"]  # doctest: +SKIP
        ['/tmp/.../CLAUDE.md']
        """
        from vaultmem.memory.export import export

        return export(self.vault, format, out=out, user=user or self.user)
