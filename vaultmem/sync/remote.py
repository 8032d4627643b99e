"""A vault kept on several devices: the merge driver's registration, git's ignores and sync
tools' leftovers.

vaultmem never pulls, pushes or resets; the person's sync does (obsidian-git, Obsidian Sync,
Syncthing). What makes that safe for memory notes, with nothing written at the vault's root:
- `<memory root>/.gitattributes` sends every note below it (`*.md`) to the `vaultmem` merge
  driver (`vaultmem.sync.merge`); it is a file of the vault, committed by `init`, so it
  travels with every clone. The driver itself is named in `.git/config`, which a clone does
  not copy: `vaultmem init`, the daemon's start and `doctor --fix` register it, `doctor`
  says when it is missing or when git does not send a memory note to it.
- `.vaultmem/` (index, logs, socket) ignores itself (`.vaultmem/.gitignore`, `*`), and
  Obsidian's `.trash/` (notes deleted in Obsidian, forgotten memories among them) is
  excluded in the repository's `.git/info/exclude`; neither file travels with a clone, so
  the same three steps write them (`ensure_ignores`) and `doctor` lists what is not ignored.
  A vault made by an older vaultmem also has these lines in root `.gitignore` and
  `.gitattributes` files: they are left alone and keep working.
- Conflict copies other sync tools write beside a note (`x.sync-conflict-….md`,
  `x (conflicted copy ….md`) are duplicates: never indexed (`vault.is_conflict_copy`);
  `doctor` lists them so the person can keep one version.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history.repo import Repo
from vaultmem.store.files import atomic_write
from vaultmem.store.init import ignore_state
from vaultmem.store.layout import STATE_DIR, TYPE_FOLDERS

DRIVER = "vaultmem"
DRIVER_NAME = "vaultmem: memory notes merged by property"
# The line of `<memory root>/.gitattributes`: a pattern without a slash matches a file's name
# in that folder and every folder below it, so every memory and session note.
ATTRIBUTES_LINE = f"*.md merge={DRIVER}"
ATTRIBUTES_COMMENT = "# vaultmem: memory notes edited on two devices are merged by property"
EXCLUDE_COMMENT = "# vaultmem: notes deleted in Obsidian (forgotten memories among them) stay out of git"
TRASH = ".trash"


def attributes_path(vault) -> Path:
    """Where the merge attributes live: the memory folder's own `.gitattributes`."""
    return Path(vault.memory_dir) / ".gitattributes"


def driver_command(python: str | None = None) -> str:
    """The shell command git runs to merge a note (`%O %A %B %P`: base, ours, theirs, path)."""
    return f"{shlex.quote(python or sys.executable)} -m vaultmem merge-driver %O %A %B %P"


def install_attributes(vault) -> bool:
    """Add the memory notes' line to `<memory root>/.gitattributes` (the rest of the file kept
    as it is); True if the file changed. The vault's root `.gitattributes` is never touched."""
    path = attributes_path(vault)
    original = path.read_bytes().decode("utf-8", "replace") if path.exists() else ""
    if ATTRIBUTES_LINE in (row.strip() for row in original.splitlines()):
        return False
    atomic_write(path, _appended(original, [ATTRIBUTES_COMMENT, ATTRIBUTES_LINE]))
    return True


def ensure_ignores(vault_root) -> list[str]:
    """What keeps vaultmem's state and Obsidian's trash out of git, where a clone lacks it:
    `.vaultmem/.gitignore`, and `.trash/` in the repository's `.git/info/exclude` unless a
    rule already ignores it (an older vaultmem's root `.gitignore`, the person's own).
    Returns what was written ([] when nothing was missing); the vault's root is untouched."""
    done = [f"{STATE_DIR}/.gitignore"] if ignore_state(vault_root) else []
    repo = _repo(vault_root)
    if repo is None or _ignored(repo, f"{TRASH}/note.md"):
        return done
    line = "/" + _escaped(repo.to_repo(TRASH)) + "/"
    path = Path(repo.top) / repo.run("rev-parse", "--git-path", "info/exclude").strip()
    original = path.read_bytes().decode("utf-8", "replace") if path.exists() else ""
    try:
        atomic_write(path, _appended(original, [EXCLUDE_COMMENT, line]))
    except OSError as exc:
        raise HistoryError(f"could not write {path} ({exc}) — check that it is writable") from None
    return done + [f"{line} in .git/info/exclude"]


def ignore_problems(vault) -> list[str]:
    """What git does not ignore but should: `.vaultmem/` (its index holds every memory's
    words) and Obsidian's `.trash/`. [] when fine or when the vault is in no repository."""
    repo = _repo(vault.root)
    if repo is None:
        return []
    problems = []
    if not _ignored(repo, f"{STATE_DIR}/config.toml"):
        problems.append(f"{STATE_DIR}/ is not ignored by git, so a `git add -A` (obsidian-git) would "
                        f"commit its index and logs — run `vaultmem doctor --fix` (it writes "
                        f"{STATE_DIR}/.gitignore)")
    if not _ignored(repo, f"{TRASH}/note.md"):
        problems.append(f"Obsidian's {TRASH}/ is not ignored by git, so notes deleted in Obsidian "
                        "could be committed there — run `vaultmem doctor --fix` (it adds "
                        f"{TRASH}/ to .git/info/exclude)")
    return problems


def _ignored(repo: Repo, rel: str) -> bool:
    """Whether git's ignore rules (any `.gitignore`, `.git/info/exclude`, the global
    excludes file) match this vault path, tracked or not."""
    # check-ignore takes paths, not pathspecs: it refuses the literal magic Repo.run sets.
    return bool(repo.run("check-ignore", "--no-index", "--", repo.to_repo(rel), ok_codes=(1,),
                         env={"GIT_LITERAL_PATHSPECS": "0"}).strip())


def _escaped(pattern: str) -> str:
    """A literal path as a gitignore pattern (a folder named `a*b` matches only itself)."""
    return "".join("\\" + ch if ch in "\\*?[" else ch for ch in pattern)


def _appended(original: str, block: list[str]) -> str:
    """`original` with `block` after a blank line, in the file's own line ends."""
    newline = "\r\n" if "\r\n" in original else "\n"
    head = original.rstrip("\r\n")
    return (head + newline * 2 if head else "") + newline.join(block) + newline


def register_driver(vault_root) -> bool:
    """Name the merge driver in the repository's own config (`.git/config`, which clones do
    not copy); True if it was missing or pointed elsewhere. False, changing nothing, when the
    vault is in no repository."""
    repo = _repo(vault_root)
    if repo is None:
        return False
    wanted = driver_command()
    if _config(repo, f"merge.{DRIVER}.driver") == wanted:
        return False
    try:
        repo.run("config", "--local", f"merge.{DRIVER}.name", DRIVER_NAME)
        repo.run("config", "--local", f"merge.{DRIVER}.driver", wanted)
    except HistoryError as exc:
        raise HistoryError(f"could not register the merge driver in {repo.git_dir / 'config'} "
                           f"({exc}) — check that it is writable") from None
    return True


def driver_problems(vault) -> list[str]:
    """What keeps two devices' edits of a note from being merged by property ([] when fine).
    Whether a memory note goes to the driver is asked of git itself (`check-attr`), so
    the memory folder's `.gitattributes`, an older vault's root line and the person's
    own attributes all count."""
    repo = _repo(vault.root)
    if repo is None:
        return []
    problems = []
    memory_root = vault.config.memory_root.strip("/")
    probe = repo.to_repo(f"{memory_root}/{TYPE_FOLDERS['fact']}/note.md")
    answer = repo.run("check-attr", "-z", "merge", "--", probe).split("\0")
    merge = answer[2] if len(answer) > 2 else "unspecified"
    if merge != DRIVER:
        problems.append(f"git does not send memory notes to the vaultmem merge driver (merge: {merge}) "
                        f"— run `vaultmem init` (it writes and commits {memory_root}/.gitattributes)")
    command = _config(repo, f"merge.{DRIVER}.driver")
    if not command:
        problems.append("the vaultmem merge driver is not registered in .git/config (a fresh clone?) "
                        "— run `vaultmem init` or `vaultmem doctor --fix`")
    elif command != driver_command():
        python = shlex.split(command)[0] if command.strip() else ""
        if not Path(python).exists():
            problems.append(f"the merge driver in .git/config runs {python}, which no longer exists "
                            "— run `vaultmem init` or `vaultmem doctor --fix`")
    return problems


def _repo(vault_root) -> Repo | None:
    try:
        return Repo(vault_root)
    except HistoryError:
        return None


def _config(repo: Repo, key: str) -> str:
    return repo.run("config", "--get", key, ok_codes=(1,)).strip()


def conflict_copies(vault) -> list[dict]:
    """Sync tools' conflict copies of notes, and `*.md.orig` left by merge tools, in the
    vault: `{"path", "advice"}` each (none is indexed)."""
    import os

    from vaultmem.store.vault import is_conflict_copy

    root, found = str(vault.root), []
    skip = {".git", ".vaultmem", ".trash", vault.config.obsidian_dir}
    for dirpath, dirnames, filenames in os.walk(root):
        at_top = dirpath == root
        dirnames[:] = sorted(d for d in dirnames if not (at_top and d in skip))
        for name in sorted(filenames):
            if is_conflict_copy(name) or name.endswith(".md.orig"):
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                found.append({"path": rel, "advice": COPY_ADVICE})
    return found


COPY_ADVICE = ("a sync tool's copy of a note, not indexed: compare it with the note beside it, "
               "keep what you want in that note, then delete the copy")
