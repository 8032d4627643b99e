"""An extraction run: transcripts → session notes → candidates → write policy → notes,
all one change (`change.vault_change`): the index follows and one git commit records the
run, or, when the run fails part-way, the vault is left as it was.

Sessions are decided oldest first, so a later statement supersedes an earlier one whatever
the file's order. User turns that yield no memory for a reason worth showing (a greeting, a
one-off request, a secret) are reported as rejected. Re-running the same transcript writes
nothing new: session notes are found again by their session id, and every candidate is then
already remembered ("unchanged"), even one that was superseded or merged since.

A session too long for one note (`limits`) is written as linked parts ("… part 2", SPEC §3);
a memory's `sources` link to the part holding its turn. A later export of the session
rewrites its parts in place (ids and file names kept; new parts get free names) and deletes
parts it no longer needs, in the same change, so the session's notes are exactly its render;
memories citing a turn that moved to another part (the limits changed, an old over-limit note
is split) are pointed at its new place in that change too.
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import TranscriptError, VaultmemError
from vaultmem.extract.candidate import Candidate
from vaultmem.extract.importers import Session, load_transcript
from vaultmem.extract.sessions import block_ids, message_link, part_title, redact_session, \
    render_session_parts, session_title
from vaultmem.ids import run_id
from vaultmem.note import as_list, read_head, read_note
from vaultmem.policy import decide
from vaultmem.vault import Vault, atomic_write
from vaultmem.write import UNDATED, apply, load_pool, plan


@dataclass
class RunReport:
    run: str
    sessions: int = 0
    notes: list[str] = field(default_factory=list)
    decisions: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    redactions: int = 0
    commit: str | None = None
    warning: str | None = None   # the run is kept but its commit (or indexing) failed

    def count(self, action: str) -> int:
        return sum(1 for d in self.decisions if d.action == action)

    def to_dict(self) -> dict:
        return {"run": self.run, "sessions": self.sessions, "created": self.count("created"),
                "updated": self.count("updated"), "superseded": self.count("superseded"),
                "rejected": self.count("rejected"), "unchanged": self.count("unchanged"),
                "notes": sorted(set(self.notes)), "redactions": self.redactions,
                "decisions": [d.to_dict() for d in self.decisions],
                "errors": self.errors, "warnings": self.warnings, "commit": self.commit,
                **({"warning": self.warning} if self.warning else {})}


def find_session_notes(vault: Vault) -> dict[tuple[str, str], list[Path]]:
    """(user, session id) -> paths of the session's notes already in the vault, ordered by
    their `part` (a note without one is part 1), then by file name."""
    found: dict[tuple[str, str], list[tuple[int, str, Path]]] = {}
    folder = vault.folder_for("session")
    if folder.is_dir():
        for path in folder.glob("*.md"):
            props = read_head(path)
            if props.get("session"):
                found.setdefault((props.get("user", "default"), props["session"]), []).append(
                    (_part_number(props.get("part")), path.name, path))
    return {key: [path for *_order, path in sorted(parts)] for key, parts in found.items()}


def _part_number(value) -> int:
    try:
        return max(int(str(value).strip()), 1)
    except ValueError:
        return 1


def extract(memory, paths, *, format: str | None = None, llm: bool = False, user: str | None = None,
            dry_run: bool = False) -> RunReport:
    """Run one extraction over transcript files; see the module docstring."""
    vault: Vault = memory.vault
    user = user or memory.user
    report = RunReport(run=run_id())
    sessions: list[tuple[Session, str]] = []
    for path in paths:
        try:
            loaded = load_transcript(path, format)
        except TranscriptError as exc:
            report.errors.append(str(exc))
            continue
        sessions.extend((s, str(path)) for s in loaded)
    if not sessions:
        return report
    now = clock.now()
    # Oldest first, whatever the file's order (ChatGPT exports list the newest first): a
    # later statement must supersede an earlier one, never the other way round.
    sessions.sort(key=lambda pair: (pair[0].start or now).replace(tzinfo=None))
    if not dry_run:
        memory.indexer.sync()  # the pool compares against what the index holds now
    names = ", ".join(sorted({Path(source).name for _s, source in sessions}))
    change = nullcontext() if dry_run else memory.change(
        f"vaultmem: extract {len(sessions)} session(s) from {names}", "extract", run=report.run, source=names)
    with change as ch:
        _run(memory, vault, sessions, user, report, now, ch, llm)
        if ch is not None:
            ch.message = _message(report, names)
    if ch is not None:
        report.commit, report.warning = ch.commit, ch.warning
        if ch.warning:
            report.warnings.append(ch.warning)
    return report


def _run(memory, vault: Vault, sessions, user: str, report: RunReport, now, ch, llm: bool) -> None:
    """Write the session notes and the memories decided from them (`ch` None: a dry run)."""
    existing_sessions = find_session_notes(vault)
    plans = []
    for session, source in sessions:
        redacted, kinds = redact_session(session)
        report.redactions += len(kinds)
        old = existing_sessions.get((user, redacted.id), [])
        turns_at, written = _write_session(vault, redacted, old, user, report.run, ch)
        report.notes.extend(written)
        plans.append((redacted, turns_at, source))
    report.sessions = len(plans)

    candidates = []
    for redacted, turns_at, _source in plans:
        found = _candidates(memory, redacted, llm, report)
        found += _turned_down(redacted, found)
        order = {t.id: i for i, t in enumerate(redacted.turns)}
        found.sort(key=lambda c: min((order.get(m, len(order)) for m in c.source_messages),
                                     default=len(order)))  # stable: a turn's own order stays
        # The day each turn was said: its own time, else its session's; unknown (None) in a
        # transcript without times, where no date is guessed (the memory says so instead).
        days = {t.id: (t.time or redacted.start).date() if (t.time or redacted.start) else None
                for t in redacted.turns}
        for cand in found:
            stated = next((days[m] for m in cand.source_messages if days.get(m)), None)
            candidates.append((cand, turns_at, stated))
    pool = load_pool(vault, user, memory.snapshot())
    live = [c for c, *_ in candidates if not c.rejected_reason]
    vectors = dict(zip(map(id, live), memory.embedder.encode([c.content for c in live]))) if live else {}
    for cand, turns_at, stated in candidates:
        vector = vectors.get(id(cand))
        sources = [_turn_link(vault, *turns_at[m]) for m in cand.source_messages if m in turns_at]
        decision = decide(cand, user, pool, vector, links=sources)
        report.decisions.append(decision)
        if ch is None:
            plan(vault, decision, pool, user=user, sources=sources, vector=vector)
            continue
        try:
            report.notes.extend(apply(vault, decision, pool, change=ch, user=user, run=report.run,
                                      sources=sources, vector=vector, now=now,
                                      stated=stated or UNDATED))
        except VaultmemError as exc:  # e.g. the user is editing that note right now: skip it,
            # keep the rest of the run (it is still indexed and committed)
            report.errors.append(f"{decision.content[:60]}: {exc}")
            decision.action, decision.reason = "rejected", f"not written: {exc}"


def _write_session(vault: Vault, session: Session, old: list[Path], user: str, run: str,
                   ch) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Write (or extend) the session's notes within `ch` (None: a dry run, nothing written).
    Returns where each message's turn is, `{message id: (vault path, block id)}`, and the
    vault paths written or deleted. `old`: the session's notes already in the vault."""
    notes = [read_note(path) for path in old]
    if old:
        known = {str(m) for note in notes for m in as_list(note.get("message_ids"))}
        new_ids = {str(t.id) for t in session.turns}
        if new_ids <= known:
            return _turns_at([(vault.rel(path), _blocks(note)) for path, note in zip(old, notes)]), []
        if not known <= new_ids:
            # Turns missing from this export stay in the old notes; it gets notes of its own.
            old, notes = [], []
    # A later export of the same session (or a new one): render in full, reusing the parts'
    # ids and file names in order; a longer session gets new parts under free names.
    folder = vault.folder_for("session")
    rendered = render_session_parts(session, user=user, run=run, note_ids=[note.id for note in notes])
    rels = [vault.rel(path) for path in old[:len(rendered)]]
    if len(rendered) > 1:
        titles = [Path(rel).stem for rel in rels]
        titles += _free_titles(vault, folder, session, range(len(titles) + 1, len(rendered) + 1),
                               {title.lower() for title in titles})
        if titles != [note.title for note in rendered]:  # parts link to each other by name
            rendered = render_session_parts(session, user=user, run=run,
                                            note_ids=[note.id for note in notes], titles=titles)
        rels += [vault.rel(folder / f"{title}.md") for title in titles[len(rels):]]
    elif not rels:
        rels = [vault.rel(vault.unique_path(folder, rendered[0].title))]
    surplus = [vault.rel(path) for path in old[len(rendered):]]
    if ch is not None:
        for i, (rel, note) in enumerate(zip(rels, rendered)):
            if i < len(old):
                ch.write(rel, note.text)
            elif len(rendered) == 1:
                rels[0] = ch.create(folder, note.title, note.text)
            else:  # exactly the name the other parts link to; never over another writer's note
                atomic_write(vault.abs(rel), note.text, overwrite=False)
                ch.created(rel)
        for rel in surplus:  # its turns are in the parts above now
            ch.delete(rel)
    turns_at = _turns_at([(rel, note.block_ids) for rel, note in zip(rels, rendered)])
    written = rels + surplus
    if ch is not None and old:
        was_at = _turns_at([(vault.rel(path), _blocks(note)) for path, note in zip(old, notes)])
        moved = {_turn_link(vault, *was_at[m]): _turn_link(vault, *turns_at[m])
                 for m in was_at if m in turns_at and was_at[m] != turns_at[m]}
        written += _repoint_sources(vault, moved, ch) if moved else []
    return turns_at, written


def _free_titles(vault: Vault, folder: Path, session: Session, numbers, taken: set[str]) -> list[str]:
    """Free file names for new parts `numbers` of the session, none in `taken` (the names of
    its other parts) nor another of them."""
    titles = []
    for n in numbers:
        title, k = vault.unique_path(folder, part_title(session, n)).stem, 1
        while title.lower() in taken:  # a long title cut to fit lost its " part n"
            k += 1
            title = vault.unique_path(folder, f"{session_title(session)[:40]} part {n}"
                                      + (f" {k}" if k > 2 else "")).stem
        taken.add(title.lower())
        titles.append(title)
    return titles


def _repoint_sources(vault: Vault, moved: dict[str, str], ch) -> list[str]:
    """Point memories' `sources` citing a moved turn (`moved`: old link -> new link) at its
    new place, within `ch`; returns the vault paths changed. Their `updated` stays."""
    from vaultmem.memories import update_note

    sessions = vault.folder_for("session")
    prefixes = {old.split("#", 1)[0][2:] + "#^" for old in moved}
    changed = []
    for path in vault.iter_notes():
        if path.parent == sessions:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not any(prefix in text for prefix in prefixes):
            continue
        note = read_note(path)
        sources = as_list(note.get("sources"))
        repointed = [moved.get(str(value).strip(), value) for value in sources]
        if repointed != sources:
            changes = {"sources": repointed}
            if "updated" in note.meta:
                changes["updated"] = note.meta["updated"]
            changed.append(ch.record(vault.rel(path)))
            update_note(vault, path, changes, expected_raw=note.raw)
    return changed


def _turn_link(vault: Vault, rel: str, block: str) -> str:
    """`[[Sessions/2026-11-29 chat-3f2a part 2#^m-12]]` for a turn's part and block."""
    return message_link(Path(rel).relative_to(vault.config.memory_root).with_suffix("").as_posix(), block)


def _blocks(note) -> dict[str, str]:
    """Message id -> block id in a session note, from its `message_ids`, as it was rendered."""
    ids = [str(m) for m in as_list(note.get("message_ids"))]
    return dict(zip(ids, block_ids(ids)))


def _turns_at(parts) -> dict[str, tuple[str, str]]:
    """Message id -> (vault path, block id) over a session's parts `[(path, blocks)]`: the
    first part holding the message (a turn cut into pieces keeps its id in each)."""
    out: dict[str, tuple[str, str]] = {}
    for rel, blocks in parts:
        for message_id, block in blocks.items():
            out.setdefault(str(message_id), (rel, block))
    return out


_ABOUT_A_SECRET = re.compile(
    r"\b(?:key|token|password|passcode|pin|secret|credentials?|card|id|ssn|phone|number|address)\b|"
    r"密钥|秘钥|令牌|密码|口令|卡号|身份证|手机|电话|地址", re.IGNORECASE)
_NOT_MEMORY = {"greeting": "greeting or filler", "filler": "greeting or filler",
               "request": "one-off request, not a standing instruction"}


def _turned_down(session: Session, candidates) -> list[Candidate]:
    """User turns no candidate came from that were turned down for a reason worth reporting
    (a greeting, a one-off request, a secret), so `--dry-run` and the counts show them.
    Candidates about a secret redacted from their turn are marked rejected on the way."""
    from vaultmem.extract.offline import classify_turn
    from vaultmem.policy import screen

    secret_turns = {t.id for t in session.turns if "[REDACTED:" in t.text}
    for cand in candidates:
        if (not cand.rejected_reason and secret_turns.intersection(cand.source_messages)
                and _ABOUT_A_SECRET.search(cand.content)):
            # "Here is my private key: [REDACTED]" leaves "Here is the user's private key."
            cand.rejected_reason = "about a secret that was redacted; it stays out of memory"
    used = {m for c in candidates for m in c.source_messages}
    out = []
    for turn in session.turns:
        if turn.id in used or (turn.role or "user").lower() != "user" or not turn.text.strip():
            continue
        secret = screen(turn.text) if "[REDACTED:" in turn.text else None
        kind, _reason = classify_turn(turn)
        reason = secret or _NOT_MEMORY.get(kind)
        if reason:
            out.append(Candidate(content=" ".join(turn.text.split()), type="fact", importance=0.0,
                                 source_messages=[turn.id], speaker=turn.speaker, rejected_reason=reason))
    return out


def _candidates(memory, session: Session, llm: bool, report: RunReport):
    from vaultmem.extract.offline import extract_offline

    start = session.start
    if llm:
        from vaultmem.extract.llm import extract_with_fallback

        cands, warnings = extract_with_fallback(session.turns, start, memory.llm_settings())
        report.warnings.extend(f"session {session.id}: {w}" for w in warnings)
        return cands
    return extract_offline(session.turns, start, include_rejected=True)


def _message(report: RunReport, names: str) -> str:
    created = report.count("created") + report.count("superseded")
    return (f"vaultmem: extract {report.sessions} session(s) from {names}: "
            f"{created} new, {report.count('updated')} updated, "
            f"{report.count('superseded')} superseded")
