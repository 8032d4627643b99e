"""Forgetting a memory: archive it (kept in history), or purge it from git altogether.

`purge` is the one place vaultmem rewrites history. It drops every version of the note
(each blob the note ever had, at each name it ever had) from every commit of every branch
and tag, keeps everything else byte for byte (authors, dates, messages; signatures are
dropped since they no longer match), scrubs the note's quoted title from the messages of
the commits it rewrites, moves the refs in one transaction, expires reflogs and prunes,
so that neither `git log -p --all` nor the object store holds the content any more.
It works on objects and refs only: the working tree and the user's staged changes to
other files are left as they are.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from io import BytesIO
from pathlib import Path

from vaultmem.errors import HistoryError, NoteParseError
from vaultmem.history import (VAULTMEM_IDENTITY, IndexLock, Repo, commit_paths, format_message,
                              note_versions, save_pending_edits)

PURGED_TITLE = "[purged]"
_TREE_MODE = b"40000"
_SIGNATURE_HEADERS = (b"gpgsig", b"gpgsig-sha256")


def forget(vault, rel_path: str) -> dict:
    """Archive a memory: `status: archived`, moved to the Archive folder (same file name when
    free), committed. It leaves retrieval but stays in history; `purge` erases it."""
    return archive_note(vault, rel_path, f"vaultmem: forget '{Path(rel_path).stem}' (archived)", "forget")


def archive_note(vault, rel_path: str, message: str, action: str) -> dict:
    """Move a note to the Archive folder with `status: archived` and commit it with `message`
    (used by `forget` and by gc's decay policy)."""
    from vaultmem.memories import update_note

    with Repo(vault.root) as repo:
        repo.check_state("nothing was changed")
        source = vault.root / rel_path
        if not source.is_file():
            raise HistoryError(f"{rel_path} does not exist — `vaultmem list` shows the notes")
        archive = vault.memory_dir / "Archive"
        save_pending_edits(repo, [rel_path])
        update_note(vault, source, {"status": "archived"})
        target = source
        if source.parent != archive:
            target = archive / source.name
            if target.exists():
                target = vault.unique_path(archive, source.stem)
            archive.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
        new_rel = vault.rel(target)
        new = commit_paths(repo, sorted({rel_path, new_rel}), format_message(message, action),
                           VAULTMEM_IDENTITY)
        return {"note": new_rel, "from": rel_path, "status": "archived", "commit": new}


def purge(vault_root, rel_path: str, force: bool = False, lock_timeout: float | None = None) -> dict:
    """Erase a note from the working tree, git's index and every commit. Refuses when a
    remote-tracking branch already holds it (the remote keeps its copy) unless `force`.
    Returns a receipt: the names erased and each rewritten commit as {old, new}."""
    with Repo(vault_root) as repo:
        repo.check_state("nothing was changed")
        names, blobs = _versions(repo, rel_path)
        pushed = _pushed_to(repo, names, blobs)
        if pushed and not force:
            raise HistoryError(
                f"{rel_path} is already in {', '.join(pushed)}: purging here would not erase the "
                "remote's copy and rewrites history others may have — rerun with --force, then "
                "force-push (and ask anyone who cloned to re-clone)")
        mentions = _mentioned_in(repo, rel_path, names)
        with IndexLock(repo, lock_timeout):
            rewriter = _Rewriter(repo, names, blobs, titles={Path(n).stem for n in names})
            mapping = rewriter.rewrite_all()
            refs = _move_refs(repo, mapping)
            _drop_from_index(repo, [rel_path])
            on_disk = repo.top / repo.to_repo(rel_path)
            removed = on_disk.is_file()
            if removed:
                on_disk.unlink()
        kept_stashes = _expire_and_prune(repo)
        receipt = {
            "note": rel_path,
            "paths": sorted(repo.to_vault(n) for n in names),
            "rewritten": [{"old": old, "new": new} for old, new in mapping.items() if old != new],
            "refs": refs,
            "removed_from_disk": removed,
            "pushed_to": pushed,
            "still_mentioned_in": mentions,
            "warnings": [],
        }
        if mentions:
            receipt["warnings"].append(f"other notes still link to it or quote it: {', '.join(mentions[:5])}"
                                       " — edit them (and purge them too if needed)")
        if pushed:
            receipt["warnings"].append(f"{', '.join(pushed)} still hold the note until you force-push")
        if kept_stashes:
            receipt["warnings"].append(f"{kept_stashes} older stash entries were kept; they may still "
                                       "hold the note (`git stash list`)")
        return receipt


def _versions(repo: Repo, rel_path: str) -> tuple[set[str], set[str]]:
    """Every repo path the note had and every blob it ever was (on this branch)."""
    names, blobs = {repo.to_repo(rel_path)}, set()
    for version in note_versions(repo, rel_path):
        names.add(repo.to_repo(version["path"]))
        if version["old_path"]:
            names.add(repo.to_repo(version["old_path"]))
        if version["change"] != "D":
            blob = repo.run("rev-parse", "-q", "--verify",
                            f"{version['rev']}:{repo.to_repo(version['path'])}", ok_codes=(1, 128)).strip()
            if blob:
                blobs.add(blob)
    return names, blobs


def _mentioned_in(repo: Repo, rel_path: str, names: set[str]) -> list[str]:
    """Notes in the vault that link to the purged note by any of its titles, or quote its
    statement (a session note holding the turn it came from, a note that superseded it)."""
    from vaultmem.note import parse_note

    vault_dir = repo.top if repo.prefix == "." else repo.top / repo.prefix
    note = vault_dir / rel_path
    text = note.read_text(encoding="utf-8", errors="replace") if note.is_file() else ""
    try:
        statement = parse_note(text).statement()
    except NoteParseError:
        statement = ""
    needles = [f"[[{Path(n).stem}" for n in names] + ([statement] if len(statement) >= 12 else [])
    found = []
    for path in sorted(vault_dir.rglob("*.md")):
        rel = path.relative_to(vault_dir).as_posix()
        if rel == rel_path or any(part.startswith(".") for part in Path(rel).parts):
            continue
        content = path.read_text(encoding="utf-8", errors="replace")
        if any(needle in content for needle in needles):
            found.append(rel)
    return found


def _pushed_to(repo: Repo, names: set[str], blobs: set[str]) -> list[str]:
    """Remote-tracking refs from which one of the note's versions is reachable."""
    remotes = repo.run("for-each-ref", "--format=%(refname)", "refs/remotes").split()
    pushed = []
    for ref in remotes:
        if not repo.run("rev-list", "-1", ref, "--", *sorted(names)).strip():
            continue
        for line in repo.run("rev-list", "--objects", ref).splitlines():
            sha, _, path = line.partition(" ")
            if sha in blobs and path in names:
                pushed.append(ref[len("refs/remotes/"):])
                break
    return pushed


class _Rewriter:
    """Rewrites trees and commits without the note's blobs, memoising each tree it visits."""

    def __init__(self, repo: Repo, names: set[str], blobs: set[str], titles: set[str]):
        self.repo, self.odb = repo, repo.repo.odb
        self.drop = {(name, blob) for name in names for blob in blobs}
        self.dirs = {"/".join(name.split("/")[:i]) for name in names for i in range(1, name.count("/") + 1)}
        self.titles = sorted(titles, key=len, reverse=True)
        self.trees: dict[tuple[str, str], str | None] = {}

    def rewrite_all(self) -> dict[str, str]:
        order = self.repo.run("rev-list", "--all", "--topo-order", "--reverse").split()
        mapping: dict[str, str] = {}
        for sha in order:
            mapping[sha] = self._commit(sha, mapping)
        return mapping

    def _read(self, sha: str) -> bytes:
        return self.odb.stream(bytes.fromhex(sha)).read()

    def _store(self, kind: bytes, data: bytes) -> str:
        return _store(self.odb, kind, data)

    def _tree(self, sha: str, folder: str) -> str | None:
        key = (sha, folder)
        if key not in self.trees:
            self.trees[key] = self._rewrite_tree(sha, folder)
        return self.trees[key]

    def _rewrite_tree(self, sha: str, folder: str) -> str | None:
        data, pos, out, changed = self._read(sha), 0, [], False
        width = len(sha) // 2
        while pos < len(data):
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            mode, name = data[pos:space], data[space + 1:nul].decode("utf-8", "surrogateescape")
            entry_sha = data[nul + 1:nul + 1 + width]
            pos = nul + 1 + width
            path = f"{folder}/{name}" if folder else name
            if mode != _TREE_MODE and (path, entry_sha.hex()) in self.drop:
                changed = True
                continue
            if mode == _TREE_MODE and path in self.dirs:
                new = self._tree(entry_sha.hex(), path)
                if new is None:
                    changed = True
                    continue
                if new != entry_sha.hex():
                    changed, entry_sha = True, bytes.fromhex(new)
            out.append(mode + b" " + name.encode("utf-8", "surrogateescape") + b"\0" + entry_sha)
        if not changed:
            return sha
        return self._store(b"tree", b"".join(out)) if out else None

    def _commit(self, sha: str, mapping: dict[str, str]) -> str:
        raw = self._read(sha)
        head, _, message = raw.partition(b"\n\n")
        lines = head.split(b"\n")
        tree = lines[0].split(b" ", 1)[1].decode()
        parents = [line.split(b" ", 1)[1].decode() for line in lines if line.startswith(b"parent ")]
        new_tree = self._tree(tree, "") or self._store(b"tree", b"")
        new_parents = [mapping.get(p, p) for p in parents]
        if new_tree == tree and new_parents == parents:
            return sha
        headers = [b"tree " + new_tree.encode()] + [b"parent " + p.encode() for p in new_parents]
        skipping = False
        for line in lines[1:]:
            if line.startswith(b"parent "):
                continue
            if line.startswith(b" ") and skipping:
                continue
            skipping = line.split(b" ", 1)[0] in _SIGNATURE_HEADERS
            if not skipping:
                headers.append(line)
        for title in self.titles:
            message = message.replace(f"'{title}'".encode(), f"'{PURGED_TITLE}'".encode())
        return self._store(b"commit", b"\n".join(headers) + b"\n\n" + message)


def _move_refs(repo: Repo, mapping: dict[str, str]) -> list[str]:
    """Point every branch, tag and remote-tracking ref (and ORIG_HEAD) at the rewritten
    commits, in one transaction. Annotated tags get a new tag object (unsigned)."""
    moved, commands = [], []
    listing = repo.run("for-each-ref", "--format=%(objectname) %(objecttype) %(refname)")
    refs = [line.split(" ", 2) for line in listing.splitlines() if line]
    orig = repo.git_dir / "ORIG_HEAD"
    if orig.is_file():
        refs.append([orig.read_text().strip(), "commit", "ORIG_HEAD"])
    for old, kind, ref in refs:
        new = None
        if kind == "commit" and mapping.get(old, old) != old:
            new = mapping[old]
        elif kind == "tag":
            raw = repo.run("cat-file", "tag", old, raw=True)
            target = raw.split(b"\n", 1)[0].split(b" ", 1)[1].decode()
            if mapping.get(target, target) != target:
                new = _retag(repo, raw, target, mapping[target])
        if new:
            commands.append(f"update {ref} {new} {old}\n")
            moved.append(ref)
    if commands:
        done = subprocess.run(["git", "update-ref", "--no-deref", "--stdin"], cwd=repo.top, capture_output=True,
                              input="".join(commands).encode())
        if done.returncode != 0:
            raise HistoryError(f"git update-ref failed: {done.stderr.decode(errors='replace').strip()}")
    return moved


def _retag(repo: Repo, raw: bytes, old_target: str, new_target: str) -> str:
    body = raw.replace(old_target.encode(), new_target.encode(), 1)
    signature = body.find(b"-----BEGIN PGP SIGNATURE-----")
    return _store(repo.repo.odb, b"tag", body if signature == -1 else body[:signature])


def _store(odb, kind: bytes, data: bytes) -> str:
    from gitdb import IStream

    return odb.store(IStream(kind, len(data), BytesIO(data))).binsha.hex()


def _drop_from_index(repo: Repo, rel_paths) -> None:
    """Remove the note from git's real index (we hold index.lock) without touching other entries."""
    real = repo.git_dir / "index"
    if not real.exists():
        return
    scratch = repo.git_dir / f"vaultmem-{os.getpid()}-purge.index"
    try:
        shutil.copyfile(real, scratch)
        repo.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--",
                 *[repo.to_repo(p) for p in rel_paths], env={"GIT_INDEX_FILE": str(scratch)})
        os.replace(scratch, real)
    finally:
        scratch.unlink(missing_ok=True)


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
