"""Forgetting a memory: archive it (kept in history), or purge it from git altogether.

`purge` is the one place vaultmem rewrites history (`rewriter.HistoryRewriter`). What it
erases is planned by `erasure.plan_erasure`: every version of the note (each blob it ever
had, at each name it ever had) and of the entity hubs only it linked to is dropped from
every commit of every branch and tag; every version of the session notes it came from has
the source turns' words redacted; commit messages lose its titles and text and cite
rewritten commits by their new hashes. Everything else is kept byte for byte. The refs move
in one transaction, reflogs are expired and unreachable objects pruned, so that neither
`git log -p --all` nor the object store holds the text any more. In the working tree and
git's index only the erased notes and the redacted files change; the user's other staged
and unstaged work stays as it was. `.vaultmem/` (index, state, logs) is
`lifecycle.purge`'s part.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history.erasure import MIN_PHRASE, plan_erasure
from vaultmem.history.lock import IndexLock
from vaultmem.history.repo import Repo
from vaultmem.history.rewriter import HistoryRewriter, move_refs


def forget(vault, rel_path: str, indexer=None) -> dict:
    """Archive a memory: `status: archived`, moved to the Archive folder (same file name when
    free), committed. It leaves retrieval but stays in history; `purge` erases it."""
    return archive_note(vault, rel_path, f"vaultmem: forget '{Path(rel_path).stem}' (archived)", "forget",
                        indexer=indexer)


def archive_note(vault, rel_path: str, message: str, action: str, indexer=None) -> dict:
    """Move a note to the Archive folder with `status: archived`, as one change committed
    with `message` (used by `forget` and by gc's decay policy); `indexer` follows it."""
    from vaultmem.history.change import vault_change
    from vaultmem.memory.memories import update_note

    source = vault.abs(rel_path)
    if not source.is_file():
        raise HistoryError(f"{rel_path} does not exist — `vaultmem list` shows the notes")
    archive = vault.memory_dir / "Archive"
    with vault_change(vault, message, action, indexer=indexer) as ch:
        ch.save_pending([rel_path])
        ch.record(rel_path)
        update_note(vault, source, {"status": "archived"})
        target = source
        if source.parent != archive:
            target = archive / source.name
            if target.exists():
                target = vault.unique_path(archive, source.stem)
            ch.rename(rel_path, vault.rel(target))
    return {"note": vault.rel(target), "from": rel_path, "status": "archived", **ch.result()}


def purge(vault_root, rel_path: str, force: bool = False, lock_timeout: float | None = None,
          plan=None) -> dict:
    """Erase a memory from the working tree, git's index and every commit, with the words of
    the session turns it came from and the entity hubs only it linked to (see
    `erasure.plan_erasure`). Refuses when a remote-tracking branch already holds any of it
    (the remote keeps its copy) unless `force`. Returns a receipt: what was erased, each
    rewritten commit as {old, new}, the turns redacted. `plan`: one `plan_erasure` made
    for this note already (the caller scrubs `.vaultmem/` with it)."""
    from vaultmem.store.vault import Vault

    vault = Vault(Path(vault_root))
    with Repo(vault_root) as repo:
        repo.check_state("nothing was changed")
        plan = plan or plan_erasure(repo, vault, rel_path)
        edits = {name: plan.redact_session(session)
                 for session, names in plan.session_names.items() for name in names}
        for name in plan.transcripts:
            edits.setdefault(name, plan.redact_transcript)
        with IndexLock(repo, lock_timeout):
            rewriter = HistoryRewriter(repo, plan.drop, edits, plan.scrub)
            mapping = rewriter.rewrite_all()
            pushed = _pushed_to(repo, mapping)
            if pushed and not force:
                raise HistoryError(
                    f"{rel_path} is already in {', '.join(pushed)}: purging here would not erase the "
                    "remote's copy and rewrites history others may have — rerun with --force, then "
                    "force-push (and ask anyone who cloned to re-clone)")
            refs = move_refs(repo, mapping, plan.scrub)
            _update_index(repo, plan.notes, rewriter)
            removed = []
            for rel in plan.notes:
                on_disk = repo.top / repo.to_repo(rel)
                if on_disk.is_file():
                    on_disk.unlink()
                    removed.append(rel)
            edited = _edit_files(repo, edits)
        kept_stashes = _expire_and_prune(repo)
        mentions = _mentioned_in(vault, plan)
        receipt = {
            "note": rel_path,
            "paths": sorted(repo.to_vault(n) for n in plan.own_names),
            "hubs_removed": plan.notes[1:],
            "rewritten": [{"old": old, "new": new} for old, new in mapping.items() if old != new],
            "refs": refs,
            "removed_from_disk": rel_path in removed,
            "turns_redacted": [{"note": session, "turns": blocks} for session, blocks in plan.turns.items()],
            "files_redacted": edited,
            "blobs_rewritten": rewriter.edited_blobs(),
            "messages_rewritten": rewriter.messages,
            "pushed_to": pushed,
            "still_mentioned_in": mentions,
            "warnings": [],
        }
        if mentions:
            receipt["warnings"].append(f"other notes still link to it or quote it (or cite a redacted turn): "
                                       f"{', '.join(mentions[:5])} — edit them (and purge them too if needed)")
        if plan.missing_sources:
            receipt["warnings"].append("source turns not found in the vault: "
                                       + ", ".join(plan.missing_sources[:5]))
        if pushed:
            receipt["warnings"].append(f"{', '.join(pushed)} still hold the note until you force-push")
        if kept_stashes:
            receipt["warnings"].append(f"{kept_stashes} older stash entries were kept; they may still "
                                       "hold the note (`git stash list`)")
        return receipt


def _mentioned_in(vault, plan) -> list[str]:
    """Notes left in the vault that link to an erased note by any of its titles, quote its
    statement (a note that superseded it, the user's own notes) or cite a turn it redacted
    (another memory drawn from the same words)."""
    needles = [f"[[{title}" for title in plan.titles]
    needles += [f"{Path(session).stem}#^{block}]]" for session, blocks in plan.turns.items() for block in blocks]
    needles += [s for s in plan.statements if len(s) >= MIN_PHRASE]
    found = []
    for path in sorted(vault.root.rglob("*.md")):
        rel = path.relative_to(vault.root).as_posix()
        if rel in plan.notes or any(part.startswith(".") for part in Path(rel).parts):
            continue
        # Obsidian resolves a link whatever its case: so does this look for one.
        content = path.read_text(encoding="utf-8", errors="replace").lower()
        if any(needle.lower() in content for needle in needles):
            found.append(rel)
    return found


def _pushed_to(repo: Repo, mapping: dict[str, str]) -> list[str]:
    """Remote-tracking refs whose history the purge rewrites (the remote holds the text)."""
    listing = repo.run("for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes")
    pushed = []
    for line in listing.splitlines():
        sha, _, ref = line.partition(" ")
        if ref.endswith("/HEAD"):
            continue
        if mapping.get(sha, sha) != sha:
            pushed.append(ref[len("refs/remotes/"):])
    return pushed


def _update_index(repo: Repo, removed, rewriter: HistoryRewriter) -> None:
    """Bring git's real index (we hold index.lock) in line: the erased notes leave it, and a
    staged version of an edited note becomes its redacted version. Other entries stay."""
    real = repo.git_dir / "index"
    if not real.exists():
        return
    scratch = repo.git_dir / f"vaultmem-{os.getpid()}-purge.index"
    env = {"GIT_INDEX_FILE": str(scratch)}
    try:
        shutil.copyfile(real, scratch)
        repo.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--",
                 *[repo.to_repo(p) for p in removed], env=env)
        if rewriter.edits:
            staged = repo.run("ls-files", "-s", "-z", "--", *sorted(rewriter.edits), env=env)
            for entry in filter(None, staged.split("\0")):
                info, _, path = entry.partition("\t")
                mode, sha, stage = info.split()
                new = rewriter.edit_blob(path, sha)
                if new != sha and stage == "0":
                    repo.run("update-index", "--cacheinfo", f"{mode},{new},{path}", env=env)
        os.replace(scratch, real)
    finally:
        scratch.unlink(missing_ok=True)


def _edit_files(repo: Repo, edits) -> list[str]:
    """Apply the edits to the files in the working tree (uncommitted changes included);
    returns the vault paths changed. An edit racing the user's editor is retried."""
    from vaultmem.errors import ConcurrentEdit
    from vaultmem.store.files import atomic_write

    changed = []
    for name, edit in sorted(edits.items()):
        path = repo.top / name
        for _attempt in range(5):
            if not path.is_file():
                break
            data = path.read_bytes()
            new = edit(data)
            if new == data:
                break
            try:
                atomic_write(path, new, expected=data)
            except ConcurrentEdit:
                continue
            changed.append(repo.to_vault(name))
            break
    return changed


def _expire_and_prune(repo: Repo) -> int:
    """Expire every reflog but the stash list (the user's stashes are theirs), then prune
    the unreachable objects. Returns how many older stash entries were kept."""
    logs = repo.git_dir / "logs"
    refs = sorted(p.relative_to(logs).as_posix() for p in logs.rglob("*") if p.is_file()) if logs.is_dir() else []
    refs = [ref for ref in refs if ref != "refs/stash"]
    if refs:
        repo.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", *refs)
    repo.run("gc", "--prune=now", "--quiet")
    stash_log = repo.git_dir / "logs" / "refs" / "stash"
    return max(0, len(stash_log.read_text().splitlines()) - 1) if stash_log.is_file() else 0
