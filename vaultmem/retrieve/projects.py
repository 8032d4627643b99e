"""Which project a memory belongs to: the project of the agent's sessions it was said in.

An agent's session note records the folder the session ran in (`cwd`, from Claude Code's and
Codex's logs) and the project that folder is (`project`, its last part). A session excerpt
belongs to its own note's project; a memory to the projects of the session notes its `sources`
link into; a memory from no agent's session (a chat, `add`, a note a person wrote) to none.

`--project P` (search, context and the start-up brief) leaves out what belongs only to other
projects, except a fact or preference about the person ("The user prefers pnpm"), which holds
in every project; a standing instruction or an event of another project stays there. P is a
folder (a session ran in it or below it, or in a folder of the same name on another device)
or a project's name (the last folder of where a session ran, or any folder above it).

    >>> keep = in_project(vault, "/home/priya/code/acme-billing")   # doctest: +SKIP
    >>> [h for h in hits if keep(h)]                                   # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from vaultmem.store import link_note, project_name, read_head

# A memory about the person: its statement is of the user (as every extractor writes it).
ABOUT_PERSON = re.compile(r"(?:the user|user)\b|用户|我", re.IGNORECASE)
PERSON_TYPES = ("fact", "preference")

_heads: dict[str, tuple[int, tuple[str, str]]] = {}   # session note path -> (mtime, (cwd, project))


def session_projects(vault) -> dict[str, tuple[str, str]]:
    """Session note name -> (cwd, project), for every session note that records where it ran
    (each note's head read again only when it changed)."""
    out = {}
    for path in vault.folder_for("session").rglob("*.md"):
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            continue
        cached = _heads.get(str(path))
        if cached is None or cached[0] != stamp:
            head = read_head(path)
            cached = (stamp, (str(head.get("cwd") or ""), str(head.get("project") or "")))
            _heads[str(path)] = cached
        if any(cached[1]):
            out[path.stem] = cached[1]
    return out


def _sessions_of(hit) -> set[str]:
    """The session note names `hit` comes from: its own, or those its sources link into."""
    if hit.type == "session":
        return {Path(hit.path).stem}
    return {link_note(s) for s in hit.sources or ()}


def _folder(path: str) -> str:
    """A folder as compared: `~` expanded, `\\` as `/`, no trailing slash, a Windows drive's
    path in lower case (its file names are)."""
    path = os.path.expanduser(path.strip()).replace("\\", "/").rstrip("/")
    return path.lower() if re.match(r"[A-Za-z]:/", path + "/") else path


def matches(where: tuple[str, str], asked: str) -> bool:
    """Whether a session that ran in `where` (cwd, project) is of the project `asked`: a
    folder it ran in or below (`~` and Windows paths as written on either side), or a name."""
    cwd, project = where
    asked = asked.strip()
    if re.search(r"[\\/~]", asked) and cwd:
        root, ran = _folder(asked), _folder(cwd)
        if ran == root or ran.startswith(root + "/"):
            return True
    name = project_name(_folder(asked) or asked)
    if not name:
        return False   # a session begun in a folder of the project (acme-billing/web) is of it too
    return (project or project_name(cwd)) == name or name in _folder(cwd).split("/")


def about_person(hit) -> bool:
    """A fact or preference whose statement is of the user: it holds in every project."""
    return hit.type in PERSON_TYPES and bool(ABOUT_PERSON.match(hit.text.strip()))


def project_of(vault, asked: str):
    """`whose(hit)` -> "this" (said in a session of the project `asked`), "none" (in no agent's
    session) or "other" (only in other projects' sessions)."""
    where = session_projects(vault)

    def whose(hit) -> str:
        projects = [where[s] for s in _sessions_of(hit) if s in where]
        if not projects:
            return "none"
        return "this" if any(matches(p, asked) for p in projects) else "other"
    return whose


def in_project(vault, asked: str | None, whose=None):
    """`keep(hit)` -> False for what belongs only to projects other than `asked` (see the
    module); everything is kept when `asked` is None or empty. `whose`: `project_of(vault,
    asked)`, when the caller has it already."""
    if not asked or not asked.strip():
        return lambda hit: True
    whose = whose or project_of(vault, asked)
    return lambda hit: whose(hit) != "other" or about_person(hit)
