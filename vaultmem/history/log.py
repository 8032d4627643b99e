"""Reading history: a note's committed versions (following renames), an extraction run's
commits, a note as it was at a revision, and diffs between versions.
"""

from __future__ import annotations

import difflib

from vaultmem.errors import HistoryError
from vaultmem.history.messages import TRAILERS
from vaultmem.history.repo import Repo

EXTERNAL = "external"  # the action shown for commits vaultmem did not make (user, obsidian-git)
_FIELD, _RECORD = "\x1f", "\x1e"

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
