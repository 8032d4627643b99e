"""Memory lifecycle: decay and archive (`gc`), corrections, and the audit trail (`log`).

Decay follows the common practice of agent memory stores: a memory of low importance
that nobody has recalled for a month is archived (moved to `Memory/Archive/`, kept in
git); one not recalled for half a year is only ranked lower (see `stale_factor`);
important memories are never archived automatically.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import NoteNotFound, VaultmemError
from vaultmem.note import MEMORY_TYPES, as_datetime, read_note
from vaultmem.vault import Vault

NEVER_ARCHIVE_FROM = 0.8   # importance at or above which gc leaves a memory alone
DECAYING_TYPES = ("fact", "preference", "event", "procedure")


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
        importance = note.get("importance")
        importance = 0.5 if importance is None else float(importance)
        if importance >= cfg.gc_archive_below_importance or importance >= NEVER_ARCHIVE_FROM:
            continue
        seen = access.get(note.id, {}).get("last_access")
        last = as_datetime(seen) or as_datetime(note.get("updated")) or as_datetime(note.get("created"))
        if last is None:
            continue
        idle = (now - last).days
        if idle >= cfg.gc_archive_after_days:
            how = "last recalled" if seen else "never recalled; last updated"
            plan.append({"path": vault.rel(path), "id": note.id, "title": path.stem,
                         "importance": importance, "idle_days": idle,
                         "reason": f"importance {importance:.2f} < {cfg.gc_archive_below_importance:.2f} "
                                   f"and {how} {idle} days ago (limit {cfg.gc_archive_after_days})"})
    return plan


def stale_factor(last_access: str | None, updated: str | None, today, stale_after_days: int) -> float:
    """Ranking multiplier: 1.0, or 0.85 for memories not recalled (nor updated) for
    `stale_after_days`."""
    last = as_datetime(last_access) or as_datetime(updated)
    if last is None:
        return 1.0
    return 0.85 if (today - last.date()).days >= stale_after_days else 1.0


def gc(memory, *, dry_run: bool = False, user: str | None = None, now: datetime | None = None) -> dict:
    """Apply the decay policy; each archive is its own git commit. Returns the plan and
    what was done."""
    from vaultmem.forget import archive_note

    state = memory.indexer.state
    plan = gc_plan(memory.vault, state, now=now, user=user)
    done = []
    if not dry_run:
        for item in plan:
            result = archive_note(memory.vault, item["path"],
                                  f"vaultmem: archive '{item['title']}' (gc: {item['reason']})", "archive")
            done.append(result["note"])
            memory.indexer.sync([memory.vault.abs(item["path"]), memory.vault.abs(result["note"])])
    return {"dry_run": dry_run, "archived": done, "plan": plan}


def correct(memory, ref: str, text: str, *, user: str | None = None) -> dict:
    """Supersede a memory with its corrected text (the old note is kept, marked superseded)."""
    from vaultmem.extract.candidate import Candidate
    from vaultmem.extract.slots import describe_statement
    from vaultmem.policy import Decision, Existing
    from vaultmem.write import apply, load_pool

    vault = memory.vault
    path = vault.resolve(ref)
    note = read_note(path)
    if user and note.user != user:
        raise NoteNotFound(f"no note matches {ref!r} — give a path, a title or an id "
                           "(`vaultmem list` shows them)")
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
    from vaultmem.policy import screen

    reason = screen(cand.content)
    if reason:
        return {"action": "rejected", "id": note.id, "path": old.rel, "reason": reason}
    decision = Decision("superseded", f"corrected by the user; {old.rel} kept as superseded",
                        cand.content, cand.type, old, candidate=cand)
    pool = load_pool(vault, owner)
    sources = [str(s) for s in (note.get("sources") or [])]
    written = apply(vault, decision, pool, user=owner, sources=sources)
    memory.indexer.sync([vault.abs(rel) for rel in written])
    memory._commit(written, f"vaultmem: correct '{path.stem}' to '{Path(decision.path).stem}'",
                   action="correct")
    return {"action": "superseded", "id": decision.id, "path": decision.path,
            "reason": decision.reason, "superseded": old.rel}


ACTION_WORDS = {"add": "created", "created": "created", "extract": "created", "updated": "updated",
                "superseded": "superseded", "correct": "superseded", "archive": "archived",
                "forget": "forgotten", "purge": "forgotten", "rollback": "rolled back",
                "rollback-run": "rolled back", "user-edit": "edited by the user", "init": "recorded"}


def audit_log(vault: Vault, *, limit: int = 200, run: str | None = None) -> list[dict]:
    """What happened to memories, newest first, from git's commits and their trailers."""
    from vaultmem.history import Repo

    try:
        repo_ctx = Repo(vault.root)
    except VaultmemError:
        return []
    entries = []
    with repo_ctx as repo:
        if not repo.head():
            return []
        sep, rec = "\x1f", "\x1e"
        fmt = rec + sep.join(["%H", "%ad", "%an", "%s", "%(trailers:key=Vaultmem-Action,valueonly)",
                              "%(trailers:key=Vaultmem-Run,valueonly)",
                              "%(trailers:key=Vaultmem-Source,valueonly)"])
        out = repo.run("log", f"-n{limit}", "--date=iso-strict", f"--format={fmt}", "--name-status",
                       "--", vault.config.memory_root)
        for record in out.split(rec)[1:]:
            head, _, files = record.partition("\n")
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
                            "message": subject, "paths": paths})
    return entries
