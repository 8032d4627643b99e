"""The vault's git repository: found upward from the vault (which may be a subfolder of it),
git run in it as a subprocess, vault paths to repository paths and back.

vaultmem shares the repository with the user (and perhaps the obsidian-git plugin): see
`git.py` for how it commits there without touching their work.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultmem.errors import HistoryError


class Repo:
    """The vault's git repository (found upward from the vault) and the vault's place in it.

    git runs as a subprocess; GitPython (whose import costs every command 0.2 s) is loaded
    only for its object database (`repo`, used by purge's history rewrite)."""

    def __init__(self, vault_root):
        root = Path(vault_root).resolve()
        if not root.is_dir():
            raise HistoryError(f"{root} is not in a git repository — run `vaultmem init` to create one")
        found = git(root, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel")
        if found.returncode != 0:
            bare = git(root, "rev-parse", "--is-bare-repository")
            if bare.returncode == 0 and bare.stdout.strip() == "true":
                raise HistoryError(f"{root} is inside a bare git repository — vaultmem needs a working tree")
            raise HistoryError(f"{root} is not in a git repository — run `vaultmem init` to create one")
        lines = found.stdout.splitlines()
        if lines[0].strip() == "true" or len(lines) < 3:
            raise HistoryError(f"{root} is inside a bare git repository — vaultmem needs a working tree")
        self.git_dir = Path(lines[1])
        self.top = Path(lines[2]).resolve()
        self.prefix = root.relative_to(self.top).as_posix()
        self._repo = None

    @property
    def repo(self):
        """The repository as GitPython's `git.Repo` (its object database), opened on first use."""
        if self._repo is None:
            import git

            self._repo = git.Repo(self.top)
        return self._repo

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    # --- paths ------------------------------------------------------------------------
    def to_repo(self, rel: str) -> str:
        rel = Path(rel).as_posix()
        if rel.startswith("/") or ".." in rel.split("/"):
            raise HistoryError(f"{rel!r} is not a path inside the vault")
        return rel if self.prefix == "." else f"{self.prefix}/{rel}"

    def to_vault(self, repo_path: str) -> str:
        if self.prefix == ".":
            return repo_path
        head = self.prefix + "/"
        return repo_path[len(head):] if repo_path.startswith(head) else "../" + repo_path

    # --- running git ---------------------------------------------------------------------
    def run(self, *args, env=None, raw=False, ok_codes=(0,), input: bytes | None = None):
        """`git <args>` in the work tree; pathspecs are literal (titles may hold `*` or `?`).
        `input`: bytes given to git's standard input. Output is text (undecodable bytes
        kept as surrogates) unless `raw`; a status in `ok_codes` other than 0 gives ''."""
        done = git(self.top, "-c", "core.quotepath=off", *args, env={"GIT_LITERAL_PATHSPECS": "1", **(env or {})},
                    input=input, text=False)
        if done.returncode != 0:
            if done.returncode in ok_codes:
                return b"" if raw else ""
            stderr = done.stderr.decode("utf-8", "replace").strip()
            raise HistoryError(f"git {args[0]} failed: {stderr or f'exit status {done.returncode}'}")
        return done.stdout if raw else done.stdout.decode("utf-8", "surrogateescape")

    def is_ancestor(self, ancestor: str, rev: str) -> bool:
        return git(self.top, "merge-base", "--is-ancestor", ancestor, rev).returncode == 0

    def head(self) -> str | None:
        """HEAD's commit, or None on a branch with no commits yet."""
        out = self.run("rev-parse", "--verify", "-q", "HEAD^{commit}", ok_codes=(1, 128)).strip()
        return out or None

    def resolve_rev(self, rev: str) -> str:
        out = self.run("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", ok_codes=(1, 128)).strip()
        if not out:
            raise HistoryError(f"unknown revision {rev!r} — `vaultmem history NOTE` lists the note's versions")
        return out

    def blob(self, rev: str, repo_path: str) -> bytes | None:
        """A file's bytes at a commit, or None if it did not exist there."""
        if not self.run("ls-tree", "--name-only", rev, "--", repo_path).strip():
            return None
        return self.run("cat-file", "blob", f"{rev}:{repo_path}", raw=True)

    def check_state(self, consequence: str) -> None:
        """Refuse to commit in the middle of a merge/rebase or on a detached HEAD."""
        problems = [
            ("MERGE_HEAD", "a merge is in progress — finish it (`git commit`) or abort it (`git merge --abort`)"),
            ("rebase-merge", "a rebase is in progress — finish it (`git rebase --continue`) or abort it "
                             "(`git rebase --abort`)"),
            ("rebase-apply", "a rebase or `git am` is in progress — finish or abort it"),
            ("CHERRY_PICK_HEAD", "a cherry-pick is in progress — finish it or run `git cherry-pick --abort`"),
            ("REVERT_HEAD", "a revert is in progress — finish it or run `git revert --abort`"),
        ]
        for marker, message in problems:
            if (self.git_dir / marker).exists():
                raise HistoryError(f"{message}; {consequence}")
        if self.run("symbolic-ref", "-q", "HEAD", ok_codes=(1,)).strip() == "":
            raise HistoryError("HEAD is detached (not on a branch) — check out your branch "
                               f"(e.g. `git switch main`); {consequence}")


def git(cwd, *args, env=None, input: bytes | None = None, text: bool = True):
    """`git <args>` run in `cwd`, its output captured; messages in English (as GitPython ran
    it: some are matched), stdin closed unless `input` is given."""
    import subprocess

    full_env = {**os.environ, "LANGUAGE": "C", "LC_ALL": "C", **(env or {})}
    return subprocess.run(["git", *args], cwd=str(cwd), env=full_env, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL,
                          capture_output=True, text=text, errors="surrogateescape" if text else None)
