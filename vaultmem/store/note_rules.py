"""Which of the person's own notes are in scope: `[index] notes` / `exclude` globs and what
Obsidian itself leaves out (`NoteRules`, `glob_regex`)."""

from __future__ import annotations

import re

from vaultmem.store.config import Config


def glob_regex(pattern: str) -> "re.Pattern":
    """A vault-relative glob as a regex over POSIX paths: `*` and `?` stay within a folder,
    `**` crosses folders (`**/` may match no folder), a trailing `/` means everything under
    that folder. Case-sensitive, as paths are."""
    if pattern.endswith("/"):
        pattern += "**"
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


class NoteRules:
    """Which of the person's notes are in scope (`[index] notes` / `exclude`), with what
    Obsidian itself leaves out: its attachment folder and its Excluded files (plain entries
    are path prefixes, `/.../` entries regular expressions, as Obsidian reads them)."""

    def __init__(self, config: Config):
        self.globs = [glob_regex(g.strip()) for g in config.notes if g.strip()]
        self.excludes = [glob_regex(g.strip()) for g in config.exclude if g.strip()]
        self.prefixes, self.patterns = [], []
        if config.attachment_folder:
            self.prefixes.append(config.attachment_folder.strip("/") + "/")
        for entry in config.obsidian_excluded:
            entry = entry.strip()
            if len(entry) > 2 and entry.startswith("/") and entry.endswith("/"):
                try:
                    self.patterns.append(re.compile(entry[1:-1]))
                except re.error:
                    continue  # Obsidian ignores a bad pattern too
            elif entry.strip("/"):
                self.prefixes.append(entry.lstrip("/"))

    def include(self, rel: str) -> bool:
        return any(g.match(rel) for g in self.globs)

    def excluded(self, rel: str) -> bool:
        """True for a note (or a folder given with its trailing `/`) left out of scope."""
        if any(rel.startswith(p) for p in self.prefixes) or any(p.search(rel) for p in self.patterns):
            return True
        if rel.endswith("/"):
            # A folder is skipped whole when a glob takes everything under it (a name no
            # path can hold stands for "any note"): `Templates/**`, not `**/draft-*.md`.
            return any(g.match(rel + "\0.md") and g.match(rel + "\0/\0.md") for g in self.excludes)
        return any(g.match(rel) for g in self.excludes)
