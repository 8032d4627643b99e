"""What purging a memory erases, worked out before anything is touched.

"Forget that" means the words too. `plan_erasure` reads every committed version of the
memory note (and the note on disk) and gathers:
- the notes that go entirely, with every name and blob they ever had: the memory, and the
  entity hubs vaultmem generated for it that nothing else links to any more;
- the session turns it came from (its `sources`, `[[Sessions/...#^m-12]]`): their words are
  replaced by `[REDACTED:forgotten]` in the session note, in every version of it, and in the
  inbox transcripts vaultmem kept (`Inbox/processed/`);
- the phrases that name or quote it (titles, paths, statements, turn texts), scrubbed from
  commit messages and from vaultmem's own files under `.vaultmem/` (logs).

Nothing here writes; `forget.purge` and `lifecycle.purge` apply the plan.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import NoteParseError
from vaultmem.history.log import note_versions
from vaultmem.history.repo import Repo
from vaultmem.store.links import wikilinks

REDACTED = "[REDACTED:forgotten]"
PURGED = "[purged]"
# Shorter titles are scrubbed only where they stand quoted ('Tea'), never as bare words.
MIN_PHRASE = 12


@dataclass
class ErasurePlan:
    """Everything one purge erases (paths are vault-relative unless named `repo`)."""

    note: str
    notes: list[str]                                          # notes erased with all their history
    drop: set[tuple[str, str]] = field(default_factory=set)  # (repo path, blob sha)
    names: set[str] = field(default_factory=set)              # repo paths those notes ever had
    own_names: set[str] = field(default_factory=set)          # ... of which the memory's own
    ids: list[str] = field(default_factory=list)
    user: str | None = None
    titles: set[str] = field(default_factory=set)
    statements: set[str] = field(default_factory=set)
    turns: dict[str, list[str]] = field(default_factory=dict)   # session note -> block ids
    turn_texts: list[str] = field(default_factory=list)
    session_names: dict[str, set[str]] = field(default_factory=dict)  # session note -> repo paths
    transcripts: set[str] = field(default_factory=set)          # repo paths of kept transcripts
    missing_sources: list[str] = field(default_factory=list)
    _pattern: re.Pattern | bool | None = field(default=None, repr=False)
    _replace: dict = field(default_factory=dict, repr=False)

    # --- phrases -----------------------------------------------------------------------
    def phrases(self) -> list[str]:
        """Texts scrubbed wherever they stand (longest first): paths, statements, turns, long titles."""
        found = set(self.notes) | set(self.names)
        found |= {t for t in self.statements | set(self.turn_texts) | self.titles if len(t) >= MIN_PHRASE}
        return sorted(found, key=len, reverse=True)

    def scrub(self, data: bytes) -> bytes:
        """`data` with each title quoted as `'title'` and each phrase replaced by `[purged]`."""
        if self._pattern is None:
            replace = {f"'{t}'".encode(): f"'{PURGED}'".encode() for t in self.titles}
            for phrase in self.phrases():
                replace.setdefault(phrase.encode(), PURGED.encode())
            needles = sorted(replace, key=len, reverse=True)
            self._replace = replace
            self._pattern = re.compile(b"|".join(re.escape(n) for n in needles)) if needles else False
        if not self._pattern:
            return data
        return self._pattern.sub(lambda m: self._replace[m.group(0)], data)

    # --- redaction ---------------------------------------------------------------------
    def redact_session(self, session: str):
        """A function redacting this plan's turns of `session` in any version of its bytes."""
        blocks = set(self.turns.get(session, ()))

        def redact(data: bytes) -> bytes:
            text = data.decode("utf-8", "surrogateescape")
            return redact_turns(text, blocks, self.turn_texts).encode("utf-8", "surrogateescape")
        return redact

    def redact_transcript(self, data: bytes) -> bytes:
        """A transcript's bytes with each turn's words (as written, or JSON-escaped) redacted;
        a turn too short to be told from other messages ("Yes.") is left alone."""
        for text in (t for t in self.turn_texts if len(t) >= MIN_PHRASE):
            for form in _written_forms(text):
                data = data.replace(form, REDACTED.encode())
        return data


def _written_forms(text: str) -> set[bytes]:
    forms = {text, json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1]}
    return {f.encode("utf-8") for f in forms if f}


def redact_turns(text: str, blocks: set[str], words=()) -> str:
    """A session note's text with the turns `blocks` reduced to their header and
    `[REDACTED:forgotten] ^block`, and any other copy of `words` in its body redacted.
    Every line of such a turn goes, its blank lines and fenced code included.

    >>> note = "---\\nid: s\\n---\\n**Ann** · 2026-01-01 10:00\\nI love figs.\\n\\nAnd dates. ^m-1\\n"
    >>> print(redact_turns(note, {"m-1"}), end="")
    ---
    id: s
    ---
    **Ann** · 2026-01-01 10:00
    [REDACTED:forgotten] ^m-1
    """
    from vaultmem.store.session_note import turn_spans

    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n")
    fence = re.match(r"\A(?:\ufeff)?---[ \t]*\n.*?\n---[ \t]*(?:\n|\Z)", text, re.DOTALL)
    head, body = (text[:fence.end()], text[fence.end():]) if fence else ("", text)
    # A turn may hold blank lines (paragraphs, code): it is found whole by `turn_spans`,
    # never by cutting the note at blank lines. Last turn first, so earlier spans stay put.
    lines = body.split("\n")
    for turn, first, end in reversed(turn_spans(body)):
        if turn.block_id in blocks and turn.text not in ("", REDACTED):
            lines[first:end] = [lines[first], f"{REDACTED} ^{turn.block_id}"]
    body = "\n".join(lines)
    for phrase in sorted((w for w in words if len(w) >= MIN_PHRASE), key=len, reverse=True):
        body = body.replace(phrase, REDACTED)
    text = head + body
    return text.replace("\n", "\r\n") if crlf else text


# --- planning ------------------------------------------------------------------------------

def plan_erasure(repo: Repo, vault, rel_path: str) -> ErasurePlan:
    """What purging `rel_path` erases (see the module docstring)."""
    from vaultmem.store.values import link_target

    plan = ErasurePlan(note=rel_path, notes=[rel_path])
    versions = _note_texts(repo, vault, rel_path, plan)
    plan.own_names = set(plan.names)
    sources, entities = [], []
    for note in versions:
        if note.id and note.id not in plan.ids:
            plan.ids.append(note.id)
        plan.user = plan.user or note.user
        if note.statement():
            plan.statements.add(note.statement())
        sources += [link_target(str(s)) for s in _as_list(note.get("sources"))]
        entities += [link_target(str(e)) for e in _as_list(note.get("entities"))]
    _plan_sessions(repo, vault, plan, dict.fromkeys(sources))
    _plan_hubs(repo, vault, plan, dict.fromkeys(entities))
    _plan_transcripts(repo, vault, plan)
    return plan


def versions_of(repo: Repo, rel_path: str) -> tuple[set[str], set[str]]:
    """Every repo path the note had and every blob it ever was (on this branch)."""
    names, blobs = {repo.to_repo(rel_path)}, set()
    for version in note_versions(repo, rel_path):
        names.add(repo.to_repo(version["path"]))
        if version["old_path"]:
            names.add(repo.to_repo(version["old_path"]))
        if version["change"] != "D":
            blob = repo.run("rev-parse", "-q", "--verify",
                            f"{version['rev']}:{repo.to_repo(version['path'])}", ok_codes=(1, 128)).strip()
            if blob:
                blobs.add(blob)
    return names, blobs


def _note_texts(repo: Repo, vault, rel_path: str, plan: ErasurePlan) -> list:
    """Record the note's names and blobs in `plan`; return every version that parses."""
    from vaultmem.store.note import parse_note_bytes

    names, blobs = versions_of(repo, rel_path)
    plan.names |= names
    plan.drop |= {(name, blob) for name in names for blob in blobs}
    plan.titles |= {Path(name).stem for name in names}
    datas = [repo.run("cat-file", "blob", blob, raw=True) for blob in sorted(blobs)]
    disk = vault.root / rel_path
    if disk.is_file():
        datas.append(disk.read_bytes())
    notes = []
    for data in datas:
        try:
            notes.append(parse_note_bytes(data))
        except NoteParseError:
            continue
    return notes


def _plan_sessions(repo: Repo, vault, plan: ErasurePlan, sources) -> None:
    from vaultmem.store.note import read_note
    from vaultmem.store.session_note import parse_session_turns

    for source in sources:
        target, _, anchor = source.partition("#")
        if not anchor.startswith("^"):
            continue
        session = _resolve(vault, target)
        if session is None:
            plan.missing_sources.append(source)
            continue
        blocks = plan.turns.setdefault(session, [])
        if anchor[1:] not in blocks:
            blocks.append(anchor[1:])
    for session, blocks in plan.turns.items():
        plan.session_names[session] = versions_of(repo, session)[0]
        try:
            turns = parse_session_turns(read_note(vault.root / session).body)
        except (NoteParseError, OSError):
            continue
        plan.turn_texts += [t.text for t in turns if t.block_id in blocks and t.text and t.text != REDACTED]


def _resolve(vault, target: str) -> str | None:
    """The vault path a wikilink target names (exact path first, then by path suffix)."""
    for candidate in (f"{vault.config.memory_root}/{target}.md", f"{target}.md"):
        if (vault.root / candidate).is_file():
            return candidate
    suffix = "/" + target.lstrip("/") + ".md"
    for path in sorted(vault.memory_dir.rglob(Path(target).name + ".md")):
        rel = vault.rel(path)
        if ("/" + rel).endswith(suffix):
            return rel
    return None


def _plan_hubs(repo: Repo, vault, plan: ErasurePlan, entities) -> None:
    """Entity hubs of the memory that vaultmem generated, nobody edited and nothing else
    links to: they only carry words of the memory, so they go with it."""
    from vaultmem.store.note import read_note

    hubs = {}
    for name in entities:
        path = vault.folder_for("entity") / f"{Path(name).name}.md"
        try:
            note = read_note(path)
        except (NoteParseError, OSError):
            continue
        title = path.stem
        generated = f"# {title}\n\nHub note: memories that mention {title} link here (see backlinks)."
        if note.type == "entity" and note.body.strip() == generated:
            hubs[title.lower()] = vault.rel(path)
    if not hubs:
        return
    skip = set(plan.notes) | set(hubs.values())
    for rel, text in _vault_texts(vault):
        if rel in skip:
            continue
        for link in wikilinks(text):   # as Obsidian reads them: `\|` in tables, not in code
            hubs.pop(link.target.strip().rsplit("/", 1)[-1].removesuffix(".md").lower(), None)
    for rel in sorted(hubs.values()):
        plan.notes.append(rel)
        _note_texts(repo, vault, rel, plan)


def _vault_texts(vault):
    """(vault path, text) of every Markdown note of the vault outside dot-folders."""
    for dirpath, dirnames, filenames in os.walk(vault.root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for filename in filenames:
            if filename.endswith(".md"):
                path = Path(dirpath) / filename
                try:
                    yield vault.rel(path), path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue


def _plan_transcripts(repo: Repo, vault, plan: ErasurePlan) -> None:
    """Inbox transcripts (on disk or ever committed) that may hold the turns' words."""
    if not plan.turn_texts:
        return
    inbox = vault.inbox_dir
    repo_inbox = repo.to_repo(vault.rel(inbox))
    committed = repo.run("log", "--all", "--format=", "--name-only", "--", repo_inbox, ok_codes=(0, 128))
    plan.transcripts |= {line for line in committed.splitlines() if line}
    if inbox.is_dir():
        for path in inbox.rglob("*"):
            if path.is_file() and not any(p.startswith(".") for p in path.relative_to(inbox).parts):
                data = path.read_bytes()
                if plan.redact_transcript(data) != data:
                    plan.transcripts.add(repo.to_repo(vault.rel(path)))


def _as_list(value) -> list:
    if value in (None, ""):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
