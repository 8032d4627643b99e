"""The write path: `add` and `extract`, through the write policy."""

from __future__ import annotations

from pathlib import Path

# An `add` answers with the held memories its statement lies nearest to, so an agent sees
# when it should have updated one instead: at most this many, none below the floor (for the
# bundled all-MiniLM-L6-v2, unrelated statements about the user score about 0.1 to 0.3).
NEAREST = 3
NEAREST_FLOOR = 0.3


def _nearest(pool, user: str, vector, decision) -> list[dict]:
    """`[{"id", "path", "text", "score"}]` of the active memories of `user` nearest to
    `vector` by the index's cosine, best first; the note the decision updates, keeps or
    supersedes is left out (the answer names it already)."""
    skip = decision.target.rel if decision.target is not None else None
    found = [(entry, score) for entry, score in pool.neighbours(user, vector, NEAREST + 1, NEAREST_FLOOR)
             if entry.rel != skip]
    return [{"id": entry.id, "path": entry.rel, "text": entry.text, "score": round(score, 3)}
            for entry, score in found[:NEAREST]]


def _add_message(decision) -> str:
    title = Path(decision.path or "").stem
    if decision.action == "superseded" and decision.target is not None:
        return f"vaultmem: supersede '{Path(decision.target.rel).stem}' by '{title}'"
    if decision.action == "updated":
        return f"vaultmem: update '{title}' (near-duplicate merged)"
    return f"vaultmem: add {decision.type} '{title}'"


class Writes:
    """`Memory`'s new memories: one statement, or the transcripts of whole sessions."""

    def add(self, text: str, type: str = "fact", tags=(), importance: float | None = None,
            title: str | None = None, user: str | None = None, entities=(),
            dry_run: bool = False) -> dict:
        """Write one memory through the write policy (noise and secret filters, dedup,
        supersede). Returns `{"action", "id", "path", "reason", "nearest"}`, plus
        `"superseded"` (the old note's path) when it superseded one: `nearest` holds up to
        three of the user's other active memories closest to the statement,
        `{"id", "path", "text", "score"}` each, best first.

        >>> Memory(vault).add("The user prefers tea over coffee", type="preference")  # doctest: +SKIP
        {'action': 'created', 'id': '01J...', 'path': 'Memory/Preferences/....md', 'reason': 'new memory',
         'nearest': [{'id': '01J...', 'path': 'Memory/Preferences/Likes oat milk in tea.md', ...}]}
        """
        from vaultmem.history.change import add_warning
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
        nearest = _nearest(pool, user, vector, decision)  # before `apply` changes the pool
        if dry_run:
            return self._add_result(decision, nearest)
        with self.change(f"vaultmem: {decision.action} {cand.type}", decision.action) as ch:
            apply(self.vault, decision, pool, change=ch, user=user, vector=vector)
            ch.message, ch.action = _add_message(decision), decision.action
        return add_warning(self._add_result(decision, nearest), ch.warning)

    @staticmethod
    def _add_result(decision, nearest: list[dict]) -> dict:
        out = {"action": decision.action, "id": decision.id, "path": decision.path,
               "reason": decision.reason}
        if decision.action == "superseded" and decision.target is not None:
            out["superseded"] = decision.target.rel
        return dict(out, nearest=nearest)

    def extract(self, paths, format: str | None = None, llm: bool | None = None,
                user: str | None = None, dry_run: bool = False, progress=None) -> dict:
        """Transcripts -> session notes and memory notes, through the write policy, committed
        in steps of sessions (`extract.run`); re-running after an interruption resumes.

        `llm`: True asks the `[llm]` model, False keeps to the offline rules, None (the
        default) does as config.toml's `[llm] enabled` says. A session whose model failed is
        decided by the rules and named in the warnings; a later model run asks again for it.

        Returns SPEC's extract summary `{"run", "sessions", "created", "updated",
        "superseded", "rejected", "notes"}` (counts of the notes the commits hold) plus the
        decisions (the first 1,000), errors, warnings and "model" (the model asked, or None
        when the offline rules wrote the memories). `progress(done, total, turns_done,
        turns_total)` is called after each session.

        >>> Memory(vault).extract(["chat.jsonl"])["created"]   # doctest: +SKIP
        3
        """
        from vaultmem.extract.run import extract

        use_model = self.vault.config.llm_enabled if llm is None else bool(llm)
        switched = None if dry_run else self._fit_model_to(paths, format)
        report = extract(self, [Path(p) for p in paths], format=format, llm=use_model,
                         user=user or self.user, dry_run=dry_run, progress=progress).to_dict()
        return {**report, "model": self._model_name() if use_model else None,
                **({"embedding_model": switched} if switched else {})}

    def _fit_model_to(self, paths, format) -> dict | None:
        """The first extract into a vault whose embedding model `init` picked while the vault
        was empty (from the locale alone) lets its transcripts choose: Chinese ones (or ones
        mixing it with English) switch an English-only model to the multilingual one before
        anything is indexed (`store.settle_model`), and the run says so (`{"model", "why"}`)."""
        from vaultmem.extract import first_user_texts
        from vaultmem.store import load_config, model_unsettled, settle_model
        from vaultmem.store.vault import Vault

        if not model_unsettled(self.vault):
            return None
        texts = first_user_texts(paths, format)
        switched = settle_model(self.vault, texts) if texts else None   # nothing read: the next extract decides
        if switched:
            self.vault = Vault(self.vault.root, load_config(self.vault.root))
            self._embedder = self._indexer = None   # loaded again, for the new model
        return switched

    def _model_name(self) -> str:
        """The `[llm]` model as a person recognises it: its command line, else its name."""
        cfg = self.vault.config
        return " ".join(cfg.llm_command) or cfg.llm_model

    def llm_settings(self) -> dict:
        """The `[llm]` settings of config.toml, as the LLM extractor takes them, and where each
        call's outcome is kept (`status_path`, which `doctor` reads)."""
        from vaultmem.extract import STATUS_FILE

        cfg = self.vault.config
        return {"base_url": cfg.llm_base_url, "model": cfg.llm_model,
                "api_key_env": cfg.llm_api_key_env, "timeout": cfg.llm_timeout,
                "command": list(cfg.llm_command), "context_tokens": cfg.llm_context_tokens,
                "status_path": str(self.vault.state_dir / STATUS_FILE)}
