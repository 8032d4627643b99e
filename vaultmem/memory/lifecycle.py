"""Memory lifecycle: decay and archive (`gc`), corrections, and the audit trail (`log`).

Decay follows the common practice of agent memory stores: a memory of low importance
that nobody has recalled for a month is archived (moved to `Memory/Archive/`, kept in
git); one not recalled for half a year is only ranked lower (search multiplies its score by
`search.STALE_FACTOR`); important memories are never archived automatically. "Recalled"
means returned by search, context or MCP: `Memory._search_hits` counts it in state.db.
Idleness is measured from the last recall or edit (`updated`), never from the day the
memory was said (`valid_from`): a fact said two years ago and recalled yesterday is in use,
and one whose validity ended (`valid_to`) stays for `--as-of` and history; that is the
search filter's business, not decay's.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import VaultmemError
from vaultmem.store.layout import MEMORY_TYPES, STATEMENT_TYPES
from vaultmem.store.note import read_note
from vaultmem.store.values import as_datetime
from vaultmem.store.vault import Vault

NEVER_ARCHIVE_FROM = 0.8   # importance at or above which gc leaves a memory alone
DECAYING_TYPES = STATEMENT_TYPES


def gc_plan(vault: Vault, state, *, now: datetime | None = None, user: str | None = None) -> list[dict]:
    """Which active memories the decay policy would archive, and why (nothing is changed)."""
    cfg = vault.config
    now = now or clock.now()
    access = state.all_access()
    plan = []
    for path in vault.iter_notes():
        try:
            note = read_note(path)
        except VaultmemError:
            continue
        if note.type not in DECAYING_TYPES or note.status != "active":
            continue
        if user and note.user != user:
            continue
        try:
            importance = float(0.5 if note.get("importance") is None else note.get("importance"))
        except (TypeError, ValueError):
            continue  # a hand-written importance gc cannot read: leave the memory alone
        if importance >= cfg.gc_archive_below_importance or importance >= NEVER_ARCHIVE_FROM:
            continue
        seen = as_datetime(access.get(note.id, {}).get("last_access"))
        created, updated = as_datetime(note.get("created")), as_datetime(note.get("updated"))
        said = as_datetime(note.get("valid_from"))
        # A memory ages from when it was said, not from when vaultmem wrote it down (a chat
        # from last year imported today is a year old); a later change (an edit, the
        # statement said again) and a recall are uses that make it young again.
        changed = updated if updated and created and updated > created else (said or created or updated)
        last = max((t for t in (seen, changed) if t is not None), default=None)
        if last is None:
            continue
        idle = (now - last).days
        if idle >= cfg.gc_archive_after_days:
            since = "said" if changed is said else "last updated"
            how = "last recalled" if seen and last == seen else since if seen else f"never recalled; {since}"
            plan.append({"path": vault.rel(path), "id": note.id, "title": path.stem,
                         "importance": importance, "idle_days": idle,
                         "reason": f"importance {importance:.2f} < {cfg.gc_archive_below_importance:.2f} "
                                   f"and {how} {idle} days ago (limit {cfg.gc_archive_after_days})"})
    return plan


def gc(memory, *, dry_run: bool = False, user: str | None = None, now: datetime | None = None) -> dict:
    """Apply the decay policy; each archive is its own change and git commit. Returns the
    plan and what was done (+ `"warning"` when a commit failed and was kept for later)."""
    from vaultmem.memory.forget import archive_note

    plan = gc_plan(memory.vault, memory.indexer.state, now=now, user=user)
    done, warnings = [], []
    if not dry_run:
        for item in plan:
            result = archive_note(memory.vault, item["path"],
                                  f"vaultmem: archive '{item['title']}' (gc: {item['reason']})", "archive",
                                  indexer=memory.indexer)
            done.append(result["note"])
            if result.get("warning") and result["warning"] not in warnings:
                warnings.append(result["warning"])
    out = {"dry_run": dry_run, "archived": done, "plan": plan}
    return dict(out, warning="; ".join(warnings)) if warnings else out


def correct(memory, ref: str, text: str, *, user: str | None = None) -> dict:
    """Supersede a memory with its corrected text (the old note is kept, marked superseded)."""
    from vaultmem.history.change import add_warning
    from vaultmem.memory.memories import resolve_note
    from vaultmem.memory.write import apply, load_pool
    from vaultmem.policy.candidate import Candidate
    from vaultmem.policy.decide import Decision
    from vaultmem.policy.pool import Existing
    from vaultmem.text.slots import describe_statement

    vault = memory.vault
    note = read_note(path := vault.abs(resolve_note(vault, ref, {user} if user else None)))
    if note.type not in MEMORY_TYPES or note.type == "entity":
        raise VaultmemError(f"{vault.rel(path)} is a {note.type or 'plain'} note; only memories "
                            "(fact, preference, event, procedure) can be corrected")
    if note.status != "active":
        raise VaultmemError(f"{vault.rel(path)} is {note.status}; correct its current version instead")
    owner = note.user
    slot = describe_statement(text, note.type)
    cand = Candidate(content=" ".join(text.split()), type=note.type,
                     importance=float(note.get("importance") or 0.5),
                     entities=[str(e).strip("[]") for e in (note.get("entities") or [])],
                     subject=slot.get("subject") or note.get("subject"),
                     attribute=slot.get("attribute") or note.get("attribute"),
                     value=slot.get("value"), correction=True,
                     source_messages=[str(m) for m in (note.get("source_messages") or [])])
    old = Existing(id=note.id, rel=vault.rel(path), text=note.statement(), type=note.type, user=owner)
    from vaultmem.policy.screen import screen

    reason = screen(cand.content)
    if reason:
        return {"action": "rejected", "id": note.id, "path": old.rel, "reason": reason}
    decision = Decision("superseded", f"corrected by the user; {old.rel} kept as superseded",
                        cand.content, cand.type, old, candidate=cand)
    pool = load_pool(vault, owner, state=memory.indexer.state)
    sources = [str(s) for s in (note.get("sources") or [])]
    with memory.change(f"vaultmem: correct '{path.stem}'", "correct") as ch:
        apply(vault, decision, pool, change=ch, user=owner, sources=sources)
        ch.message = f"vaultmem: correct '{path.stem}' to '{Path(decision.path).stem}'"
    out = {"action": "superseded", "id": decision.id, "path": decision.path,
           "reason": decision.reason, "superseded": old.rel}
    return add_warning(out, ch.warning)


def purge(memory, rel: str, *, force: bool = False) -> dict:
    """Erase a memory everywhere vaultmem wrote it: git history and the working tree
    (`forget.purge`: the note, its orphan hubs, the words of its source turns), then the
    index (rows removed, table rewritten, old versions deleted), state.db (rows deleted,
    vacuumed) and vaultmem's logs under `.vaultmem/` (phrases scrubbed). Returns the
    receipt of `forget.purge` plus `"index"`, `"state"` and `"logs_scrubbed"`."""
    from vaultmem.history.erasure import plan_erasure
    from vaultmem.history.repo import Repo
    from vaultmem.memory import forget

    vault, indexer = memory.vault, memory.indexer
    with Repo(vault.root) as repo:
        plan = plan_erasure(repo, vault, rel)
    receipt = forget.purge(vault.root, rel, force=force, plan=plan)
    # History is rewritten now: a later step that fails must not lose the receipt, so it is
    # reported with the command that finishes the erasure.
    gone = sorted(set(plan.notes) | set(receipt["paths"]))
    try:
        receipt["state"] = indexer.state.erase(plan.ids, gone)
    except sqlite3.Error as exc:
        receipt["state"] = {"rows_removed": 0, "vacuumed": False}
        receipt["warnings"].append(f"state.db could not be cleaned ({exc})")
    if not receipt["state"]["vacuumed"]:
        receipt["warnings"].append("state.db was busy and is not vacuumed: its free pages may hold the "
                                   "note's paths — delete .vaultmem/state.db (vaultmem rebuilds it)")
    try:
        report = indexer.sync(gone + [r for r in receipt["files_redacted"] if vault.is_memory_path(r)])
        receipt["index"] = {"notes_removed": report.removed, "notes_reindexed": report.updated,
                            **indexer.index.rewrite()}
    except Exception as exc:  # LanceDB raises many kinds of error; the index is a cache
        receipt["index"] = {"notes_removed": 0, "notes_reindexed": 0, "rows": None,
                            "versions_removed": 0, "files_removed": 0}
        receipt["warnings"].append(f"the index could not be rewritten ({type(exc).__name__}: {exc}) — run "
                                   "`vaultmem reindex --full`, which rebuilds it from the vault")
    receipt["logs_scrubbed"] = _scrub_files(vault.state_dir, plan.scrub, vault.root)
    record_purge(indexer.state, (plan.ids[0] if plan.ids else None, plan.user), receipt)
    return receipt


def _scrub_files(folder: Path, scrub, root: Path) -> list[str]:
    """Scrub vaultmem's own files under `.vaultmem/` (logs, service output) in place, so a
    log handler that holds one open keeps writing to it. The index and state.db have their
    own erasure; sockets and the like are not files."""
    changed = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        rel = path.relative_to(folder)
        if rel.parts[0] == "index" or rel.name.startswith("state.db") or not path.is_file() \
                or path.is_symlink():
            continue
        with open(path, "r+b") as handle:
            data = handle.read()
            new = scrub(data)
            if new != data:
                handle.seek(0)
                handle.write(new)
                handle.truncate()
                changed.append(path.relative_to(root).as_posix())
    return changed


def record_purge(state, subject: tuple, receipt: dict) -> None:
    """A purge's receipt as a state.db audit event: the note's id only, never the title or
    text the purge erased."""
    note_id, user = subject
    state.add_event("purge", clock.now(), note_id=note_id, user=user,
                    detail=f"{len(receipt['rewritten'])} commits rewritten")


ACTION_WORDS = {"add": "created", "created": "created", "extract": "created", "updated": "updated",
                "superseded": "superseded", "correct": "superseded", "archive": "archived",
                "forget": "forgotten", "purge": "forgotten (purged)", "rollback": "rolled back",
                "rollback-run": "rolled back", "user-edit": "edited by the user", "init": "recorded"}


def audit_log(vault: Vault, *, limit: int = 200, run: str | None = None,
              user: str | None = None) -> list[dict]:
    """What happened to memories, newest first: git's commits (their trailers say the action
    and run) merged with the events state.db keeps because git cannot (a purge rewrites the
    commits that would tell of it). With `user`, only that namespace's notes are named and
    events touching none of them are left out."""
    from vaultmem.index.state import State

    entries = _git_entries(vault, limit, run)
    state = State(vault.root)
    try:
        events = state.events(limit)
    finally:
        state.close()
    for event in events:
        if run and event["run"] != run:
            continue
        if user and event["user"] != user:
            continue
        action = event["action"]
        entries.append({"commit": None, "date": event["date"], "author": "vaultmem", "action": action,
                        "what": ACTION_WORDS.get(action, action), "run": event["run"], "source": None,
                        "message": f"vaultmem: {ACTION_WORDS.get(action, action)} note {event['note_id']}"
                                   + (f" ({event['detail']})" if event["detail"] else ""),
                        "paths": [], "note_id": event["note_id"], "user": event["user"]})
    if user:
        entries = _only_user(vault, entries, user)
    entries.sort(key=lambda e: e["date"][:19], reverse=True)
    return entries[:limit]


def _git_entries(vault: Vault, limit: int, run: str | None) -> list[dict]:
    from vaultmem.history.repo import Repo

    try:
        repo_ctx = Repo(vault.root)
    except VaultmemError:
        return []
    entries = []
    with repo_ctx as repo:
        if not repo.head():
            return []
        # Trailer values end in newlines: an explicit end-of-header mark, not the first "\n".
        sep, rec, end = "\x1f", "\x1e", "\x1d"
        fmt = rec + sep.join(["%H", "%ad", "%an", "%s", "%(trailers:key=Vaultmem-Action,valueonly)",
                              "%(trailers:key=Vaultmem-Run,valueonly)",
                              "%(trailers:key=Vaultmem-Source,valueonly)"]) + end
        out = repo.run("log", f"-n{limit}", "--date=iso-strict", f"--format={fmt}", "--name-status",
                       "--", vault.config.memory_root)
        for record in out.split(rec)[1:]:
            head, _, files = record.partition(end)
            fields = head.split(sep)
            if len(fields) < 7:
                continue
            sha, when, author, subject, action, run_id, source = (f.strip() for f in fields[:7])
            if run and run_id != run:
                continue
            action = action or "user-edit"
            paths = [line.split("\t")[-1] for line in files.strip().splitlines() if "\t" in line]
            entries.append({"commit": sha[:12], "date": when, "author": author,
                            "action": action, "what": ACTION_WORDS.get(action, action),
                            "run": run_id or None, "source": source or None,
                            "message": subject, "paths": [repo.to_vault(p) for p in paths]})
    return entries


def _only_user(vault: Vault, entries: list[dict], user: str) -> list[dict]:
    """Entries reduced to the paths of `user`'s notes (judged on disk, else by the version
    the commit wrote); a commit naming none of them is dropped, and so is its message,
    which may hold another user's title."""
    from vaultmem.history import log as history
    from vaultmem.store.note import parse_note

    owners: dict[tuple, str | None] = {}

    def owner(path: str, commit: str | None) -> str | None:
        key = (path, None)
        if key not in owners:
            try:
                owners[key] = read_note(vault.abs(path)).user
            except (VaultmemError, OSError):
                owners[key] = None
        if owners[key] is None and commit:
            key = (path, commit)
            if key not in owners:
                try:
                    owners[key] = parse_note(history.show_at(vault.root, path, commit)).user
                except VaultmemError:
                    owners[key] = None
        return owners[key]

    kept = []
    for entry in entries:
        if entry["commit"] is None:  # a state.db event, already filtered by its user
            kept.append(entry)
            continue
        mine = [p for p in entry["paths"] if owner(p, entry["commit"]) == user]
        if mine:
            kept.append({**entry, "paths": mine})
    return kept
