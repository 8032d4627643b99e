"""Commit messages and identities: the Vaultmem-* trailers, the lines naming each changed
note, the subjects of the person's own edits, and who a commit is by.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, NamedTuple

from vaultmem.history.repo import Repo

VAULTMEM_IDENTITY = ("vaultmem", "vaultmem@localhost")
FALLBACK_USER = ("Obsidian user", "obsidian@localhost")
TRAILERS = {"action": "Vaultmem-Action", "run": "Vaultmem-Run", "source": "Vaultmem-Source"}


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
