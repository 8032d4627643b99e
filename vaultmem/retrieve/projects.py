"""Which project a memory belongs to: the project of the agent's sessions it was said in.

An agent's session note records the folder the session ran in (`cwd`, from Claude Code's and
Codex's logs) and the project that folder is (`project`, its last part). A session excerpt
belongs to its own note's project; a memory to the projects of the session notes its `sources`
link into; a memory from no agent's session (a chat, `add`, a note a person wrote) to none.

`--project P` (search, context and the start-up brief) leaves out what belongs only to other
projects, except a fact or preference about the person ("The user prefers pnpm"), which holds
in every project; a standing instruction or an event of another project stays there. P is a
folder (a session ran in it or below it, or in a folder of the same name on another device)
or a project's name.

    >>> keep = in_project(vault, "/home/priya/code/acme-billing")   # doctest: +SKIP
    >>> [h for h in hits if keep(h)]                                   # doctest: +SKIP
"""

from __future__ import annotations

import re
from pathlib import Path

from vaultmem.store import project_name, read_head

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
    return {str(s).strip("[]").split("#", 1)[0].split("|", 1)[0].rsplit("/", 1)[-1] for s in hit.sources or ()}


def matches(where: tuple[str, str], asked: str) -> bool:
    """Whether a session that ran in `where` (cwd, project) is of the project `asked`."""
    cwd, project = where
    asked = asked.strip()
    name = project_name(asked)
    if re.search(r"[\\/]", asked):
        root = asked.rstrip("\\/")
        if cwd and (cwd.rstrip("\\/") == root or cwd.startswith(root + "/") or cwd.startswith(root + "\\")):
            return True
    return bool(name) and (project or project_name(cwd)) == name


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


def in_project(vault, asked: str | None):
    """`keep(hit)` -> False for what belongs only to projects other than `asked` (see the
    module); everything is kept when `asked` is None or empty."""
    if not asked or not asked.strip():
        return lambda hit: True
    whose = project_of(vault, asked)
    return lambda hit: whose(hit) != "other" or about_person(hit)
