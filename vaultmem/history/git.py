"""git as the record: commit exactly vaultmem's own paths (and the person's edits), with
trailers. The repository is `repo.py`, its lock `lock.py`, the messages `messages.py`;
`log.py` lists a note's versions (following renames), diffs them and shows a past one.
`rollback.py` restores versions and `forget.py` archives or purges; both build on these.

vaultmem shares the repository with the user (and perhaps the obsidian-git plugin), so:
- it commits only the paths it is given, building the commit in a private index file and
  moving HEAD with a compare-and-swap, so the user's staged and unstaged changes to other
  files stay exactly as they were;
- it holds `.git/index.lock` (git's own protocol) while it commits, waits with backoff when
  another git process holds it, and never deletes another process's lock (only one that a
  vaultmem process killed mid-commit left behind, see `lock.IndexLock`);
- it never pulls, pushes, resets or rewrites history (only `forget.purge`, on request).

Paths in and out are vault-relative POSIX paths; the vault may be a subfolder of the repo.

    >>> sha = commit(vault_root, ["Memory/Facts/Tea.md"], "vaultmem: add 'Tea'", "add")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history.lock import IndexLock
from vaultmem.history.messages import (
    VAULTMEM_IDENTITY,
    Change,
    identity_env,
    user_edit_message,
    user_identity,
    vaultmem_message,
)
from vaultmem.history.repo import Repo, git


def ensure_repo(vault_root) -> bool:
    """Use the repository the vault is in, or create one in the vault; True if created."""
    root = Path(vault_root).resolve()
    if git(root, "rev-parse", "--git-dir").returncode == 0:
        return False
    done = git(root, "init")
    if done.returncode != 0:
        raise HistoryError(f"git init failed in {root}: {done.stderr.strip()}")
    return True


# --- committing -------------------------------------------------------------------------

def commit(vault_root, paths, message: str, action: str, run: str | None = None,
           source: str | None = None, author: tuple[str, str] | None = None,
           lock_timeout: float | None = None) -> str | None:
    """Commit exactly `paths` (vault-relative; deleted ones are recorded as deletions) and
    nothing else. Returns the new commit's sha, or None when those paths had not changed.
    `author` defaults to vaultmem's own identity; the user's git config is never touched."""
    with Repo(vault_root) as repo:
        repo.check_state("the change is saved in the vault but not committed to git")
        return commit_paths(repo, paths, vaultmem_message(message, action, run, source),
                            author or VAULTMEM_IDENTITY, lock_timeout)


def commit_user_edits(vault, rel_paths, lock_timeout: float | None = None) -> str | None:
    """Commit the user's own edits to memory notes (called by the daemon once they are quiet),
    with the user's git identity, so that `history` shows them beside vaultmem's versions."""
    root = vault if isinstance(vault, (str, os.PathLike)) else vault.root
    rel_paths = sorted(set(rel_paths))
    with Repo(root) as repo:
        repo.check_state("the edit stays in the vault, uncommitted")
        return commit_paths(repo, rel_paths, user_edit_message, user_identity(repo), lock_timeout)


def commit_paths(repo: Repo, rel_paths, full_message, author: tuple[str, str],
                 lock_timeout: float | None = None) -> str | None:
    """Build the commit in a private index (HEAD + these paths), move HEAD only if nobody
    else moved it meanwhile, then bring the real index up to date for these paths alone.
    `full_message` is the message, or a function of the commit's `Change`s that returns it
    (so the message names exactly the notes that changed, and how)."""
    repo_paths = sorted({repo.to_repo(p) for p in rel_paths})
    if not repo_paths:
        return None
    tag = f"vaultmem-{os.getpid()}-{threading.get_ident()}"
    scratch = repo.git_dir / f"{tag}.index"
    refreshed = repo.git_dir / f"{tag}.real-index"
    with IndexLock(repo, lock_timeout):
        try:
            for _attempt in range(3):
                head = repo.head()
                built = _build_commit(repo, head, repo_paths, full_message, author, scratch)
                if built is None:
                    return None
                sha, subject = built
                try:
                    repo.run("update-ref", "-m", f"commit: {subject}", "HEAD", sha, head or "")
                    break
                except HistoryError:
                    if repo.head() == head:
                        raise
                    # Another git process moved HEAD between our read and our write: rebuild.
            else:
                raise HistoryError("HEAD kept moving while vaultmem committed (another git process?) — "
                                   "the change is saved in the vault; try again in a moment")
            real_index = repo.git_dir / "index"
            if real_index.exists():
                shutil.copyfile(real_index, refreshed)
            _take_entries(repo, repo_paths, scratch, refreshed)
            os.replace(refreshed, real_index)
            return sha
        finally:
            scratch.unlink(missing_ok=True)
            refreshed.unlink(missing_ok=True)


def _take_entries(repo: Repo, repo_paths, scratch: Path, target: Path) -> None:
    """Give the index `target` the entries of these paths that the commit holds (from the
    private index `scratch`), not what is on disk now: a person's edit saved while vaultmem
    committed stays an unstaged change, rather than being staged behind their back."""
    staged = repo.run("ls-files", "-s", "-z", "--", *repo_paths, env={"GIT_INDEX_FILE": str(scratch)})
    entries = [e for e in staged.split("\0") if e]
    kept = {e.split("\t", 1)[1] for e in entries}
    # A path the commit does not hold (deleted) leaves the index: mode 0 removes an entry.
    null = "0" * len(repo.head() or "0" * 40)   # sha1 or sha256 repositories
    entries += [f"0 {null}\t{path}" for path in repo_paths if path not in kept]
    repo.run("update-index", "-z", "--index-info", env={"GIT_INDEX_FILE": str(target)},
             input="".join(f"{e}\0" for e in entries).encode("utf-8"))


def _build_commit(repo: Repo, head: str | None, repo_paths, full_message, author, scratch: Path):
    """A commit object of HEAD's tree with these paths as they are on disk, and its subject;
    None if nothing changed."""
    scratch.unlink(missing_ok=True)
    env = {"GIT_INDEX_FILE": str(scratch)}
    if head:
        repo.run("read-tree", head, env=env)
    _stage(repo, repo_paths, env)
    tree = repo.run("write-tree", env=env).strip()
    if head and tree == repo.run("rev-parse", f"{head}^{{tree}}").strip():
        return None
    if callable(full_message):
        full_message = full_message(_staged_changes(repo, head, repo_paths, env))
    parents = ["-p", head] if head else []
    sha = repo.run("commit-tree", tree, *parents, "-m", full_message, env=identity_env(*author)).strip()
    return sha, full_message.splitlines()[0]


_KINDS = {"A": "create", "M": "edit", "T": "edit", "D": "delete", "R": "rename"}


def _staged_changes(repo: Repo, head: str | None, repo_paths, env) -> list[Change]:
    """What the scratch index changes against HEAD among these paths (renames detected)."""
    if not head:
        listed = repo.run("ls-files", "-z", "--", *repo_paths, env=env)
        return [Change("create", repo.to_vault(p)) for p in sorted(filter(None, listed.split("\0")))]
    out = repo.run("diff-index", "--cached", "-M", "--name-status", "-z", head, "--", *repo_paths, env=env)
    tokens = out.split("\0")
    changes, i = [], 0
    while i < len(tokens) and tokens[i]:
        status = tokens[i][:1]
        if status in "RC":
            old, new = tokens[i + 1], tokens[i + 2]
            changes.append(Change("rename", repo.to_vault(new), repo.to_vault(old)) if status == "R"
                           else Change("create", repo.to_vault(new)))
            i += 3
        else:
            changes.append(Change(_KINDS.get(status, "edit"), repo.to_vault(tokens[i + 1])))
            i += 2
    return changes


def _stage(repo: Repo, repo_paths, env) -> None:
    present = [p for p in repo_paths if os.path.lexists(repo.top / p)]
    missing = [p for p in repo_paths if p not in present]
    if present:
        try:
            repo.run("add", "-A", "--", *present, env=env)
        except HistoryError as exc:
            if "ignored" not in str(exc):
                raise
            raise HistoryError(f"a .gitignore rule excludes {', '.join(present)} — remove the rule so that "
                               "vaultmem can record their history (the files are saved in the vault)") from None
    if missing:
        repo.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *missing, env=env)


def pending_changes(repo: Repo, rel_paths) -> list[str]:
    """Which of these paths differ on disk from HEAD (uncommitted edits, new or deleted)."""
    head = repo.head()
    changed = []
    for rel in rel_paths:
        path = repo.top / repo.to_repo(rel)
        on_disk = path.read_bytes() if path.is_file() else None
        committed = repo.blob(head, repo.to_repo(rel)) if head else None
        if on_disk != committed:
            changed.append(rel)
    return changed


def save_pending_edits(repo: Repo, rel_paths) -> str | None:
    """Commit uncommitted edits to paths about to be overwritten, so that nothing is lost."""
    changed = pending_changes(repo, rel_paths)
    if not changed:
        return None

    def message(changes):
        return user_edit_message(changes, "(uncommitted, saved before vaultmem changes it)")
    return commit_paths(repo, changed, message, user_identity(repo))
