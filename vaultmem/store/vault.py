"""The vault: where it is, its layout (SPEC §2), its paths, ignore rules and notes."""

from __future__ import annotations

import os
import re
import threading
import time
import unicodedata
from pathlib import Path
from typing import Iterator

from vaultmem.errors import (
    AmbiguousNote,
    NotAMemoryNote,
    NoteNotFound,
    UnsafeName,
    VaultNotFound,
)
from vaultmem.store.config import Config, load_config
from vaultmem.store.files import TEMP_NAME, atomic_write, pid_alive
from vaultmem.store.layout import STATE_DIR, TYPE_FOLDERS
from vaultmem.store.note_rules import NoteRules
from vaultmem.store.titles import safe_title

# Copies sync tools write when a note changed on two devices: Syncthing's
# `x.sync-conflict-20261201-101010-ABCDEFG.md`, Dropbox's and Obsidian Sync-style
# `x (conflicted copy 2026-12-01).md` / `x (Conflicted copy from laptop).md`.
_CONFLICT_COPY = re.compile(r"\.sync-conflict-[^/]*\.md$|\([^()/]*conflicted copy[^()/]*\)[^/]*\.md$",
                            re.IGNORECASE)


def is_conflict_copy(name: str) -> bool:
    """A sync tool's conflict copy of a note: a duplicate, never indexed (doctor lists it)."""
    return bool(_CONFLICT_COPY.search(name))


def find_vault(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """--vault, then $VAULTMEM_VAULT, then the nearest folder upward with .vaultmem/ or .obsidian/."""
    chosen = explicit or os.environ.get("VAULTMEM_VAULT")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise VaultNotFound(f"{root} is a file, not a vault folder — give the vault's folder")
        if not root.is_dir():
            raise VaultNotFound(f"vault folder {root} does not exist — create it or run `vaultmem init {root}`")
        return root
    here = Path(cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / STATE_DIR).is_dir() or (folder / ".obsidian").is_dir():
            return folder
    raise VaultNotFound(
        f"no vault found at or above {here} — pass --vault PATH, set VAULTMEM_VAULT, "
        "or run `vaultmem init` in your Obsidian vault")


def remove_stale_temp_files(vault: "Vault") -> list[str]:
    """Delete the temp files of vaultmem writers that died mid-write (SIGKILL, power cut);
    those of live processes stay. Returns the vault paths removed."""
    removed = []
    base = vault.memory_dir
    if not base.is_dir():
        return removed
    for dirpath, _dirnames, filenames in os.walk(base):
        for name in filenames:
            match = TEMP_NAME.match(name)
            if match and not pid_alive(int(match.group(1))):
                path = Path(dirpath) / name
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue
                removed.append(vault.rel(path))
    return removed


# A file or folder read within this long of its last change may change again in the same
# mtime tick unseen (git's "racy" entries): what was read of it is not trusted next time
# (a folder's listing here, a note's reading in write.load_pool).
RACY_NS = 2_000_000_000


def _list_folder(folder: str) -> tuple[tuple, frozenset]:
    """A folder's subfolders to walk (not dot-folders, not symlinks: as `os.walk` does) and
    the names of its notes, as `_names_in_vault` keeps them."""
    subfolders, names = [], set()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                if is_dir:
                    if not entry.name.startswith(".") and not entry.is_symlink():
                        subfolders.append(entry.path)
                elif entry.name.endswith(".md"):
                    # NFC: a file synced from macOS may carry its name decomposed (NFD).
                    names.add(unicodedata.normalize("NFC", entry.name[:-3]).lower())
    except OSError:
        pass
    return tuple(subfolders), frozenset(names)


class Vault:
    """An Obsidian vault with vaultmem's layout inside it."""

    def __init__(self, root: Path, config: Config | None = None):
        self.root = Path(root).resolve()
        self.config = config or load_config(self.root)
        # folder -> (mtime_ns, racy, subfolders, note names) for `_names_in_vault`
        self._listing: dict[str, tuple] = {}
        self._listing_lock = threading.Lock()

    @property
    def memory_dir(self) -> Path:
        return self.root / self.config.memory_root

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def inbox_dir(self) -> Path:
        return self.memory_dir / self.config.inbox

    def folder_for(self, note_type: str) -> Path:
        try:
            return self.memory_dir / TYPE_FOLDERS[note_type]
        except KeyError:
            raise UnsafeName(f"unknown note type {note_type!r} — use one of {', '.join(TYPE_FOLDERS)}") from None

    def rel(self, path: Path | str) -> str:
        """Vault-relative POSIX path. A note that is a symlink keeps its own place in the
        vault (its target may live anywhere); only the folders above it are resolved."""
        # A path inside the vault as written, the common case, is a string slice (the
        # Path arithmetic below cost 2 % of an extraction).
        text = os.path.normpath(os.path.join(self.root, path))
        inside = os.path.join(self.root, "")
        if text.startswith(inside) and len(text) > len(inside):
            return text[len(inside):].replace(os.sep, "/")
        path = Path(path)
        if not path.is_absolute():
            path = self.root / path
        path = Path(os.path.normpath(path))
        for candidate in (path, path.parent.resolve() / path.name):
            try:
                return candidate.relative_to(self.root).as_posix()
            except ValueError:
                continue
        raise UnsafeName(f"{str(path)!r} is outside the vault {self.root} — give a note inside it")

    def abs(self, rel: str) -> Path:
        """Absolute path of a vault-relative path; refuses anything that escapes the vault."""
        path = Path(os.path.normpath(self.root / rel))
        if path != self.root and self.root not in path.parents:
            raise UnsafeName(f"{rel!r} points outside the vault")
        return path

    def is_ignored(self, rel: str) -> bool:
        """Ignore rules: Obsidian's config folder, .trash, .git, .vaultmem, dot-folders,
        non-Markdown files, vaultmem's temp files, sync tools' conflict copies and the
        inbox (transcripts, not notes)."""
        parts = _parts(rel)
        if not parts or not rel.endswith(".md"):
            return True
        if any(p.startswith(".") for p in parts) or is_conflict_copy(parts[-1]):
            return True
        if parts[0] in {self.config.obsidian_dir, ".trash", ".git", STATE_DIR}:
            return True
        inbox = _parts(self.config.memory_root) + _parts(self.config.inbox)
        return parts[:len(inbox)] == inbox

    def is_memory_path(self, rel: str) -> bool:
        return self._in_memory_root(rel) and not self.is_ignored(rel)

    def is_user_note(self, rel: str) -> bool:
        """A note of the person's own that `[index] notes` lets vaultmem read (never write):
        Markdown outside the memory root, dot-folders, the attachment folder and Obsidian's
        Excluded files, matching a `notes` glob and no `exclude` glob."""
        if self.is_ignored(rel) or self._in_memory_root(rel):
            return False
        rules = self._note_rules()
        return rules.include(rel) and not rules.excluded(rel)

    def is_indexed_path(self, rel: str) -> bool:
        """A memory note or one of the person's notes in scope: what the index holds."""
        return self.is_memory_path(rel) or self.is_user_note(rel)

    def _in_memory_root(self, rel: str) -> bool:
        root = _parts(self.config.memory_root)
        return _parts(rel)[:len(root)] == root

    def _note_rules(self) -> "NoteRules":
        rules = getattr(self, "_rules", None)
        if rules is None:
            rules = self._rules = NoteRules(self.config)
        return rules

    def iter_user_notes(self) -> Iterator[Path]:
        """Every note of the person's that `[index] notes` puts in scope (see is_user_note)."""
        rules = self._note_rules()
        if not rules.globs:
            return
        memory_root = Path(self.config.memory_root).parts
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = dirpath[len(root) + 1:]
            kept = []
            for d in sorted(dirnames):
                sub = f"{rel_dir}/{d}" if rel_dir else d
                if d.startswith(".") or Path(sub).parts == memory_root or rules.excluded(sub + "/"):
                    continue
                kept.append(d)
            dirnames[:] = kept
            for name in sorted(filenames):
                if not name.endswith(".md") or name.startswith(".") or is_conflict_copy(name):
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                # (dot-folders, the memory root and non-Markdown files are already left out)
                if rules.include(rel) and not rules.excluded(rel):
                    path = os.path.join(dirpath, name)
                    if os.path.isfile(path):
                        yield Path(path)

    def iter_indexed(self) -> Iterator[Path]:
        """The memory notes, then the person's notes in scope: what the index holds."""
        yield from self.iter_notes()
        yield from self.iter_user_notes()

    def iter_notes(self) -> Iterator[Path]:
        """Every Markdown note under the memory root (sessions included), ignore rules applied."""
        base = self.memory_dir
        if not base.is_dir():
            return
        root = str(self.root) + "/"
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            # Vault paths as string slices: pathlib per file cost a second at 10k notes.
            prefix = dirpath[len(root):] + "/" if dirpath.startswith(root) else self.rel(dirpath) + "/"
            for name in sorted(filenames):
                if name.endswith(".md") and not self.is_ignored(prefix + name):
                    path = os.path.join(dirpath, name)
                    if os.path.isfile(path):
                        yield Path(path)

    def unique_path(self, folder: Path, title: str) -> Path:
        """`folder/<safe title>.md`, suffixed ' 2', ' 3'... if the name is taken anywhere
        in the vault (Obsidian resolves short links by file name)."""
        base = safe_title(title)
        taken = self._names_in_vault()
        candidate, n = base, 1
        while candidate.lower() in taken or (folder / f"{candidate}.md").exists():
            n += 1
            candidate = f"{base} {n}"
        return folder / f"{candidate}.md"

    def write_new(self, folder: Path, title: str, text: str) -> Path:
        """Write a new note under a unique safe title and return its path; never replaces a
        note, even one created by another writer between choosing the name and writing."""
        for _attempt in range(20):
            path = self.unique_path(folder, title)
            try:
                atomic_write(path, text, overwrite=False)
                return path
            except FileExistsError:
                continue
        raise UnsafeName(f"could not find a free file name for {title!r} in {self.rel(folder)}")

    def _names_in_vault(self) -> set[str]:
        """The lower-cased names (NFC, no `.md`) of every note in the vault, dot-folders left
        out. A folder is listed again only when its mtime moved (an entry added, removed or
        renamed in it) or was too recent to trust: an extraction writing hundreds of notes
        into a 10,000-note vault walked all of it for each one."""
        with self._listing_lock:
            listing, names = self._listing, set()
            now = time.time_ns()
            pending, seen = [str(self.root)], set()
            while pending:
                folder = pending.pop()
                try:
                    mtime = os.stat(folder).st_mtime_ns
                except OSError:
                    continue
                seen.add(folder)
                entry = listing.get(folder)
                if entry is None or entry[0] != mtime or entry[1]:
                    entry = (mtime, now - mtime < RACY_NS, *_list_folder(folder))
                    listing[folder] = entry
                pending.extend(entry[2])
                names.update(entry[3])
            for gone in set(listing) - seen:
                del listing[gone]
            return names

    def resolve(self, ref: str) -> Path:
        """A NOTE argument — a path (vault-relative or absolute), a title or an id — to a path."""
        ref = str(ref).strip()
        if not ref:
            raise NoteNotFound("empty NOTE — give a path, a title or an id")
        direct = Path(ref).expanduser()
        for candidate in (direct, self.root / ref, self.root / f"{ref}.md"):
            try:
                if candidate.is_file():
                    # rel() refuses paths outside the vault but keeps a symlinked note's own path.
                    rel = self.rel(candidate.absolute())
                    if not self._in_memory_root(rel):
                        raise NotAMemoryNote(
                            f"{rel} is not a memory note: vaultmem only reads your own notes, "
                            f"never changes them — give a note under {self.config.memory_root}/")
                    return self.root / rel
            except (OSError, UnsafeName):
                continue
        by_title, by_id = [], []
        title = ref[:-3] if ref.endswith(".md") else ref
        notes = list(self.iter_notes())
        # An exact title wins over case-insensitive ones (the user may keep "Tea" and "tea").
        by_title = [p for p in notes if p.stem == title] or \
            [p for p in notes if p.stem.lower() == title.lower()]
        if not by_title:
            from vaultmem.store.properties import merged_ids, read_head

            by_id = [path for path in notes if read_head(path).get("id") == ref] or \
                [path for path in notes if ref in merged_ids(path)]
        found = by_title or by_id
        if not found:
            raise NoteNotFound(f"no note matches {ref!r} — give a path, a title or an id "
                               "(`vaultmem list` shows them)")
        if len(found) > 1:
            listing = ", ".join(self.rel(p) for p in found[:5])
            raise AmbiguousNote(f"{ref!r} matches several notes ({listing}) — give the path")
        return found[0]


def _parts(rel: str) -> tuple:
    """The folders and name of a vault path, as `Path(rel).parts` gives them, without pathlib."""
    return tuple(p for p in str(rel).split("/") if p and p != ".")
