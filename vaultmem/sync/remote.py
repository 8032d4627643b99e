"""A vault kept on several devices: the merge driver's registration and sync tools' leftovers.

vaultmem never pulls, pushes or resets; the person's sync does (obsidian-git, Obsidian Sync,
Syncthing). Two things make that safe for memory notes:
- `.gitattributes` sends `<memory root>/**/*.md` to the `vaultmem` merge driver
  (`vaultmem.sync.merge`); it is a file of the vault, so it travels with every clone. The driver
  itself is named in `.git/config`, which a clone does not copy: `vaultmem init`, the
  daemon's start and `doctor --fix` register it, `doctor` says when it is missing.
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

DRIVER = "vaultmem"
DRIVER_NAME = "vaultmem: memory notes merged by property"


def attribute_line(memory_root: str) -> str:
    """The `.gitattributes` line for the vault's memory notes (quoted if the folder has spaces)."""
    pattern = f"{memory_root.strip('/')}/**/*.md"
    if any(ch in pattern for ch in ' "\\'):
        pattern = '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{pattern} merge={DRIVER}"


def driver_command(python: str | None = None) -> str:
    """The shell command git runs to merge a note (`%O %A %B %P`: base, ours, theirs, path)."""
    return f"{shlex.quote(python or sys.executable)} -m vaultmem merge-driver %O %A %B %P"


def install_attributes(vault) -> bool:
    """Add the memory notes' line to the vault's `.gitattributes` (kept as it is otherwise);
    True if the file changed."""
    path = Path(vault.root) / ".gitattributes"
    line = attribute_line(vault.config.memory_root)
    original = path.read_bytes().decode("utf-8", "replace") if path.exists() else ""
    if line in (row.strip() for row in original.splitlines()):
        return False
    newline = "\r\n" if "\r\n" in original else "\n"
    head = original.rstrip("\r\n")
    block = ["# vaultmem: memory notes edited on two devices are merged by property", line]
    atomic_write(path, (head + newline * 2 if head else "") + newline.join(block) + newline)
    return True


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
    """What keeps two devices' edits of a note from being merged by property ([] when fine)."""
    repo = _repo(vault.root)
    if repo is None:
        return []
    problems = []
    path = Path(vault.root) / ".gitattributes"
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    if attribute_line(vault.config.memory_root) not in (row.strip() for row in text.splitlines()):
        problems.append(".gitattributes does not send memory notes to the vaultmem merge driver "
                        "— run `vaultmem init` (then commit .gitattributes)")
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
