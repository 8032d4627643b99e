"""A note and its versions: `show`, `list`, `history`, `diff`, `show_at`."""

from __future__ import annotations

REVIEW_DAYS = 7  # what `review` looks back over when given no day


class Notes:
    """`Memory`'s notes as they are and as they were."""

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

    def review(self, since: str | None = None, user: str | None = None) -> dict:
        """The active memories written or changed since `since` (a day or an ISO time;
        default: the last 7 days), by the session they came from, each with its source turn
        (`vaultmem.memory.review`)."""
        from datetime import timedelta

        from vaultmem import clock
        from vaultmem.memory.review import review, since_day

        start = since_day(since, clock.now().replace(tzinfo=None) - timedelta(days=REVIEW_DAYS))
        readers = self._readers(user)
        return review(self.vault, start, readers, self._written_since(start, readers))

    def _written_since(self, start, readers) -> list[str] | None:
        """The memory notes the index says were created or updated on `start`'s day or
        later (a superset: `review` reads each to decide), or None without an index (then
        every note is read). One filtered scan of the table, not a read of every note."""
        from vaultmem.index.table import sql_in

        day = start.date().isoformat()
        where = (f"status = 'active' AND type NOT IN ('session', 'entity', 'note') AND "
                 f"(created >= '{day}' OR updated >= '{day}')")
        if readers is not None:
            where += f" AND {sql_in('user', sorted(readers))}"
        try:
            if not self.indexer.index.exists():
                return None
            rows = self.indexer.index.rows(where=where, columns=["path"])
        except Exception:  # an index that cannot be read: the notes themselves answer
            return None
        return sorted({row["path"] for row in rows})

    def history(self, ref: str, user: str | None = None) -> dict:
        """Every committed version of a note, newest first, following renames:
        `{"note", "versions": [{rev, short, date, author, email, action, run, source,
        message, path, change, old_path}, ...]}`.

        >>> [v["action"] for v in Memory(vault).history("Lives in Lisbon")["versions"]]  # doctest: +SKIP
        ['superseded', 'init']
        """
        from vaultmem.history import log as history

        rel = self._note_rel(ref, user)
        return {"note": rel, "versions": history.history(self.vault.root, rel)}

    def diff(self, ref: str, rev: str | None = None, user: str | None = None) -> dict:
        """`{"note", "rev", "diff"}`: REV against the note now, or (no REV) its latest change."""
        from vaultmem.history import log as history

        rel = self._note_rel(ref, user)
        return {"note": rel, "rev": rev, "diff": history.diff(self.vault.root, rel, rev)}

    def show_at(self, ref: str, rev: str, user: str | None = None) -> dict:
        """The note as it was at `rev`, in `show`'s shape plus `"rev"`."""
        from vaultmem.history import log as history
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
