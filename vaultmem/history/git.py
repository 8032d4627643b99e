"""git as the record: commit vaultmem's own paths with trailers; list a note's versions
(following renames), diff them, show a past one. `rollback.py` restores versions and
`forget.py` archives or purges; both build on the pieces here.

vaultmem shares the repository with the user (and perhaps the obsidian-git plugin), so:
- it commits only the paths it is given, building the commit in a private index file and
  moving HEAD with a compare-and-swap, so the user's staged and unstaged changes to other
  files stay exactly as they were;
- it holds `.git/index.lock` (git's own protocol) while it commits, waits with backoff when
  another git process holds it, and never deletes another process's lock (only one that a
  vaultmem process killed mid-commit left behind, see `IndexLock`);
- it never pulls, pushes, resets or rewrites history (only `forget.purge`, on request).

Paths in and out are vault-relative POSIX paths; the vault may be a subfolder of the repo.

    >>> sha = commit(vault_root, ["Memory/Facts/Tea.md"], "vaultmem: add 'Tea'", "add")  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Callable, NamedTuple

from vaultmem.errors import HistoryError

VAULTMEM_IDENTITY = ("vaultmem", "vaultmem@localhost")
FALLBACK_USER = ("Obsidian user", "obsidian@localhost")
TRAILERS = {"action": "Vaultmem-Action", "run": "Vaultmem-Run", "source": "Vaultmem-Source"}
EXTERNAL = "external"  # the action shown for commits vaultmem did not make (user, obsidian-git)
DEFAULT_LOCK_TIMEOUT = 10.0
_FIELD, _RECORD = "\x1f", "\x1e"


def lock_timeout() -> float:
    """Seconds to wait for another git process's index.lock ($VAULTMEM_GIT_LOCK_TIMEOUT)."""
    return float(os.environ.get("VAULTMEM_GIT_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))


class Repo:
    """The vault's git repository (found upward from the vault) and the vault's place in it.

    git runs as a subprocess; GitPython (whose import costs every command 0.2 s) is loaded
    only for its object database (`repo`, used by purge's history rewrite)."""

    def __init__(self, vault_root):
        root = Path(vault_root).resolve()
        if not root.is_dir():
            raise HistoryError(f"{root} is not in a git repository — run `vaultmem init` to create one")
        found = _git(root, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel")
        if found.returncode != 0:
            bare = _git(root, "rev-parse", "--is-bare-repository")
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
        done = _git(self.top, "-c", "core.quotepath=off", *args, env={"GIT_LITERAL_PATHSPECS": "1", **(env or {})},
                    input=input, text=False)
        if done.returncode != 0:
            if done.returncode in ok_codes:
                return b"" if raw else ""
            stderr = done.stderr.decode("utf-8", "replace").strip()
            raise HistoryError(f"git {args[0]} failed: {stderr or f'exit status {done.returncode}'}")
        return done.stdout if raw else done.stdout.decode("utf-8", "surrogateescape")

    def is_ancestor(self, ancestor: str, rev: str) -> bool:
        return _git(self.top, "merge-base", "--is-ancestor", ancestor, rev).returncode == 0

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


class IndexLock:
    """Hold `.git/index.lock` the way git does (create-exclusive), waiting with backoff while
    another process (obsidian-git, a terminal) holds it.

    The lock file says whose it is (`vaultmem <pid> <host>`), and vaultmem processes take
    `.git/vaultmem.lock` (a kernel lock, dropped when its holder dies) around it. So a lock
    left by a vaultmem process that was killed mid-commit is recognised and removed; any
    other process's lock is only ever waited for."""

    def __init__(self, repo: Repo, timeout: float | None = None):
        self.path = repo.git_dir / "index.lock"
        self.git_dir = repo.git_dir
        self.timeout = lock_timeout() if timeout is None else timeout
        self.held = False
        self._guard: int | None = None

    def __enter__(self):
        deadline = time.monotonic() + self.timeout
        self._guard = _take_guard(self.git_dir, deadline, self.path)
        delay = 0.1
        try:
            _remove_stale(self.git_dir)
            while True:
                try:
                    fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise HistoryError(
                            f"{self.path} is held by another git process (obsidian-git?) for over "
                            f"{self.timeout:g} s; the change is saved in the vault but not committed "
                            "— try again when that process is done, or raise VAULTMEM_GIT_LOCK_TIMEOUT"
                        ) from None
                    time.sleep(min(delay, left))
                    delay = min(delay * 2, 2.0)
                    continue
                try:
                    os.write(fd, _owner_tag().encode())
                finally:
                    os.close(fd)
                self.held = True
                return self
        except BaseException:
            self._release_guard()
            raise

    def __exit__(self, *exc):
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
        self._release_guard()

    def _release_guard(self):
        if self._guard is not None:
            os.close(self._guard)  # closing drops the flock
            self._guard = None


def _owner_tag() -> str:
    import socket

    return f"vaultmem {os.getpid()} {socket.gethostname()}\n"


def _take_guard(git_dir: Path, deadline: float, lock_path: Path) -> int:
    """The flock on `.git/vaultmem.lock` that vaultmem processes take before index.lock."""
    import fcntl

    fd = os.open(git_dir / "vaultmem.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    delay = 0.05
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                raise HistoryError(f"{lock_path} is held by another vaultmem process; the change is "
                                   "saved in the vault but not committed — try again in a moment") from None
            time.sleep(min(delay, left))
            delay = min(delay * 2, 1.0)


def _remove_stale(git_dir: Path) -> list[str]:
    """With the guard held: remove index.lock and scratch index files of vaultmem processes
    that died (no live vaultmem can be inside a commit now). Returns the names removed."""
    import re
    import socket

    from vaultmem.store.files import pid_alive

    removed = []
    lock = git_dir / "index.lock"
    try:
        owner = lock.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        owner = []
    if (len(owner) == 3 and owner[0] == "vaultmem" and owner[1].isdigit()
            and owner[2] == socket.gethostname() and not pid_alive(int(owner[1]))):
        lock.unlink(missing_ok=True)
        removed.append(lock.name)
    scratch = re.compile(r"^vaultmem-(\d+)-\d+\.(?:real-)?index$")
    for path in git_dir.glob("vaultmem-*index"):
        match = scratch.match(path.name)
        if match and not pid_alive(int(match.group(1))):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def clear_stale_locks(vault_root, timeout: float = 1.0) -> list[str]:
    """After a crash: remove the index.lock and scratch files a killed vaultmem process left
    in the vault's repository (others' locks are never touched). Returns what was removed;
    nothing when there is no repository or another vaultmem process is committing."""
    try:
        repo = Repo(vault_root)
    except HistoryError:
        return []
    with repo:
        try:
            guard = _take_guard(repo.git_dir, time.monotonic() + timeout, repo.git_dir / "index.lock")
        except HistoryError:
            return []
        try:
            return _remove_stale(repo.git_dir)
        finally:
            os.close(guard)


def ensure_repo(vault_root) -> bool:
    """Use the repository the vault is in, or create one in the vault; True if created."""
    root = Path(vault_root).resolve()
    if _git(root, "rev-parse", "--git-dir").returncode == 0:
        return False
    done = _git(root, "init")
    if done.returncode != 0:
        raise HistoryError(f"git init failed in {root}: {done.stderr.strip()}")
    return True


def _git(cwd, *args, env=None, input: bytes | None = None, text: bool = True):
    """`git <args>` run in `cwd`, its output captured; messages in English (as GitPython ran
    it: some are matched), stdin closed unless `input` is given."""
    import subprocess

    full_env = {**os.environ, "LANGUAGE": "C", "LC_ALL": "C", **(env or {})}
    return subprocess.run(["git", *args], cwd=str(cwd), env=full_env, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL,
                          capture_output=True, text=text, errors="surrogateescape" if text else None)


def identity_env(name: str, email: str) -> dict:
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}


def user_identity(repo: Repo) -> tuple[str, str]:
    """The user's git identity, or ("Obsidian user", ...) when git has none configured."""
    name = repo.run("config", "--get", "user.name", ok_codes=(1,)).strip()
    email = repo.run("config", "--get", "user.email", ok_codes=(1,)).strip()
    return (name or FALLBACK_USER[0], email or FALLBACK_USER[1])


def format_message(message: str, action: str, run: str | None = None, source: str | None = None) -> str:
    """The commit message: what happened in words, then the Vaultmem-* trailers."""
    trailers = [f"{TRAILERS['action']}: {action}"]
    if run:
        trailers.append(f"{TRAILERS['run']}: {_one_line(run)}")
    if source:
        trailers.append(f"{TRAILERS['source']}: {_one_line(source)}")
    return message.rstrip() + "\n\n" + "\n".join(trailers) + "\n"


def _one_line(value) -> str:
    return " ".join(str(value).split())


class Change(NamedTuple):
    """One path a commit changes, as git sees it (renames detected): `kind` is "create",
    "edit", "rename" or "delete"; `old_path` is set for a rename. Vault-relative paths."""

    kind: str
    path: str
    old_path: str | None = None


_PAST = {"create": "created", "edit": "edited", "rename": "renamed", "delete": "deleted"}


MAX_LISTED = 100  # a commit of thousands of notes (init) lists the first ones and counts the rest


def change_lines(changes) -> str:
    """One line per changed note (`edited: Memory/Facts/Tea.md`, `renamed: A -> B`): the
    body of every commit, so a commit names exactly what it changed."""
    lines = [f"{_PAST[c.kind]}: {c.old_path} -> {c.path}" if c.kind == "rename"
             else f"{_PAST[c.kind]}: {c.path}" for c in changes[:MAX_LISTED]]
    if len(changes) > MAX_LISTED:
        lines.append(f"... and {len(changes) - MAX_LISTED} more (`git show --stat`)")
    return "\n".join(lines)


def vaultmem_message(subject: str, action: str, run: str | None = None,
                     source: str | None = None) -> Callable[[list], str]:
    """A message for `commit_paths` from vaultmem's own subject: the subject, the list of
    notes the commit changes, then the trailers."""
    def compose(changes) -> str:
        return format_message(subject.rstrip() + "\n\n" + change_lines(changes), action, run, source)
    return compose


def user_edit_subject(changes, where: str = "in Obsidian") -> str:
    """`Edit 'Tea' in Obsidian`, `Rename 'A' to 'B', delete 'C' in Obsidian`: each note
    named with its kind of change (up to three; beyond that, counted by kind)."""
    def title(path):
        return f"'{Path(path).stem}'"

    if len(changes) <= 3:
        parts = [f"rename {title(c.old_path)} to {title(c.path)}" if c.kind == "rename"
                 else f"{c.kind} {title(c.path)}" for c in changes]
    else:
        counts = {kind: sum(1 for c in changes if c.kind == kind) for kind in _PAST}
        parts = [f"{kind} {n} note{'s' if n > 1 else ''}" for kind, n in counts.items() if n]
    text = ", ".join(parts)
    return f"{text[:1].upper()}{text[1:]} {where}".rstrip()


def user_edit_message(changes, where: str = "in Obsidian") -> str:
    """The full message of a commit of the user's own edits (author: the user)."""
    return format_message(user_edit_subject(changes, where) + "\n\n" + change_lines(changes), "user-edit")


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


# --- reading history ----------------------------------------------------------------------

_LOG_FORMAT = _RECORD + _FIELD.join(
    ["%H", "%ad", "%an", "%ae", "%s"]
    + [f"%(trailers:key={key},valueonly,separator=%x2C)" for key in TRAILERS.values()])


def history(vault_root, rel_path: str) -> list[dict]:
    """Every committed version of a note, newest first, following renames:
    `{rev, short, date, author, email, action, run, source, message, path, change, old_path}`."""
    with Repo(vault_root) as repo:
        return note_versions(repo, rel_path)


def note_versions(repo: Repo, rel_path: str) -> list[dict]:
    """`history` on an open repository (`git log --follow` on HEAD, parsed from `-z` output)."""
    if repo.head() is None:
        return []
    out = repo.run("log", "--follow", "-M", "--name-status", "-z", "--date=format-local:%Y-%m-%dT%H:%M:%S",
                   f"--format={_LOG_FORMAT}", "HEAD", "--", repo.to_repo(rel_path))
    versions = []
    for record in out.split(_RECORD)[1:]:
        header, _, changes = record.partition("\0")
        sha, date, name, email, subject, action, run, source = header.split(_FIELD)
        tokens = changes.lstrip("\n").split("\0")
        status = tokens[0][:1] if tokens and tokens[0] else "M"
        old_path = repo.to_vault(tokens[1]) if status in "RC" and len(tokens) > 2 else None
        path = tokens[2] if status in "RC" and len(tokens) > 2 else (tokens[1] if len(tokens) > 1 else "")
        versions.append({
            "rev": sha, "short": sha[:8], "date": date, "author": name, "email": email,
            "action": action.strip() or EXTERNAL, "run": run.strip() or None,
            "source": source.strip() or None, "message": subject,
            "path": repo.to_vault(path) if path else rel_path, "change": status, "old_path": old_path,
        })
    return versions


def run_commits(repo: Repo, run_id: str) -> list[str]:
    """Commits on HEAD that an extraction run made (its rollback excluded), oldest first."""
    if repo.head() is None:
        return []
    trailer = "%(trailers:key={},valueonly,separator=%x2C)"
    out = repo.run("log", "-z", "--reverse", f"--format=%H{_FIELD}{trailer.format(TRAILERS['run'])}"
                   f"{_FIELD}{trailer.format(TRAILERS['action'])}", "HEAD")
    found = []
    for record in out.split("\0"):
        if record.count(_FIELD) == 2:
            sha, run, action = record.lstrip("\n").split(_FIELD)
            if run.strip() == run_id and action.strip() != "rollback-run":
                found.append(sha)
    return found


def _path_at(repo: Repo, versions: list[dict], sha: str) -> str | None:
    """The note's vault path at commit `sha` (it may have had another name then)."""
    for version in versions:
        if version["rev"] == sha or repo.is_ancestor(version["rev"], sha):
            return None if version["change"] == "D" else version["path"]
    return None


def version_at(repo: Repo, versions: list[dict], rel_path: str, rev: str) -> tuple[str, str, bytes]:
    """(commit sha, the note's path then, its bytes then) for any revision."""
    sha = repo.resolve_rev(rev)
    path = _path_at(repo, versions, sha) or rel_path
    data = repo.blob(sha, repo.to_repo(path))
    if data is None:
        raise HistoryError(f"{rel_path} did not exist at {rev} — `vaultmem history` lists its versions")
    return sha, path, data


def show_at(vault_root, rel_path: str, rev: str) -> str:
    """The note's full text as it was at `rev` (a sha from `history`, or any git revision)."""
    with Repo(vault_root) as repo:
        return version_at(repo, note_versions(repo, rel_path), rel_path, rev)[2].decode("utf-8", "replace")


def diff(vault_root, rel_path: str, rev: str | None = None) -> str:
    """A unified diff. With `rev`: that version against the note as it is now. Without:
    the latest change — uncommitted edits if there are any, else the last commit's change."""
    with Repo(vault_root) as repo:
        versions = note_versions(repo, rel_path)
        disk = repo.top / repo.to_repo(rel_path)
        now_text = disk.read_bytes().decode("utf-8", "replace") if disk.is_file() else ""
        if rev is not None:
            sha, path, data = version_at(repo, versions, rel_path, rev)
            return _unified(data.decode("utf-8", "replace"), now_text, f"{path}@{sha[:8]}", f"{rel_path}@disk")
        if not versions:
            return _unified("", now_text, "/dev/null", f"{rel_path}@disk")
        latest = versions[0]
        latest_text = "" if latest["change"] == "D" else \
            (repo.blob(latest["rev"], repo.to_repo(latest["path"])) or b"").decode("utf-8", "replace")
        if latest_text != now_text:
            return _unified(latest_text, now_text, f"{latest['path']}@{latest['short']}", f"{rel_path}@disk")
        if len(versions) == 1:
            return _unified("", latest_text, "/dev/null", f"{latest['path']}@{latest['short']}")
        before = versions[1]
        before_text = (repo.blob(before["rev"], repo.to_repo(before["path"])) or b"").decode("utf-8", "replace")
        return _unified(before_text, latest_text, f"{before['path']}@{before['short']}",
                        f"{latest['path']}@{latest['short']}")


def _unified(old: str, new: str, old_label: str, new_label: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=old_label, tofile=new_label))

