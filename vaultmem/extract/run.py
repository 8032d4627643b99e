"""An extraction run: transcripts → session notes → candidates → write policy → notes,
all one change (`change.vault_change`): the index follows and one git commit records the
run, or, when the run fails part-way, the vault is left as it was.

Sessions are decided oldest first, so a later statement supersedes an earlier one whatever
the file's order. User turns that yield no memory for a reason worth showing (a greeting, a
one-off request, a secret) are reported as rejected. Re-running the same transcript writes
nothing new: session notes are found again by their session id, and every candidate is then
already remembered ("unchanged"), even one that was superseded or merged since.
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
from vaultmem.extract.sessions import message_link, redact_session, render_session
from vaultmem.ids import run_id
from vaultmem.note import as_list, read_note
from vaultmem.policy import decide
from vaultmem.vault import Vault
from vaultmem.write import apply, head_props, load_pool, plan


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


def find_session_notes(vault: Vault) -> dict[tuple[str, str], Path]:
    """(user, session id) -> path of the session notes already in the vault."""
    found = {}
    folder = vault.folder_for("session")
    if folder.is_dir():
        for path in folder.glob("*.md"):
            text = path.read_text(encoding="utf-8", errors="replace")[:4096]
            session = next((line.split(":", 1)[1].strip().strip("'\"") for line in text.splitlines()
                            if line.startswith("session:")), None)
            if session:
                found[(head_props(path).get("user", "default"), session)] = path
    return found


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
        old = existing_sessions.get((user, session.id))
        rel, written = _write_session(vault, session, old, user, report.run, ch)
        if written:
            report.notes.append(rel)
        plans.append((redacted, rel, source))
    report.sessions = len(plans)

    candidates = []
    for redacted, rel, _source in plans:
        found = _candidates(memory, redacted, llm, report)
        found += _turned_down(redacted, found)
        order = {t.id: i for i, t in enumerate(redacted.turns)}
        found.sort(key=lambda c: min((order.get(m, len(order)) for m in c.source_messages),
                                     default=len(order)))  # stable: a turn's own order stays
        days = {t.id: (t.time or redacted.start or now).date() for t in redacted.turns}
        for cand in found:
            stated = next((days[m] for m in cand.source_messages if m in days), None)
            candidates.append((cand, rel, stated, redacted))
    pool = load_pool(vault, user, memory.snapshot())
    live = [c for c, *_ in candidates if not c.rejected_reason]
    vectors = dict(zip(map(id, live), memory.embedder.encode([c.content for c in live]))) if live else {}
    for cand, session_rel, stated, session in candidates:
        vector = vectors.get(id(cand))
        session_link = Path(session_rel).relative_to(vault.config.memory_root).with_suffix("").as_posix()
        blocks = _block_map(vault, session_rel, session)
        sources = [message_link(session_link, blocks[m]) for m in cand.source_messages if m in blocks]
        decision = decide(cand, user, pool, vector, links=sources)
        report.decisions.append(decision)
        if ch is None:
            plan(vault, decision, pool, user=user, sources=sources, vector=vector)
            continue
        try:
            report.notes.extend(apply(vault, decision, pool, change=ch, user=user, run=report.run,
                                      sources=sources, vector=vector, now=now, stated=stated))
        except VaultmemError as exc:  # e.g. the user is editing that note right now: skip it,
            # keep the rest of the run (it is still indexed and committed)
            report.errors.append(f"{decision.content[:60]}: {exc}")
            decision.action, decision.reason = "rejected", f"not written: {exc}"


def _write_session(vault: Vault, session: Session, old: Path | None, user: str, run: str,
                   ch) -> tuple[str, bool]:
    """Write (or extend) the session note within `ch` (None: a dry run, nothing written);
    returns its vault path and whether it changed."""
    if old is not None:
        note = read_note(old)
        known = [str(m) for m in as_list(note.get("message_ids"))]
        new_ids = [t.id for t in session.turns]
        if set(new_ids) <= set(known):
            return vault.rel(old), False
        if set(known) <= set(new_ids):  # a later export of the same session: rewrite in full
            rendered = render_session(session, user=user, run=run, note_id=note.id)
            if ch is not None:
                ch.write(vault.rel(old), rendered.text)
            return vault.rel(old), True
        # Turns missing from this export stay in the old note; the new one gets its own note.
    rendered = render_session(session, user=user, run=run)
    if ch is not None:
        return ch.create(vault.folder_for("session"), rendered.title, rendered.text), True
    return vault.rel(vault.unique_path(vault.folder_for("session"), rendered.title)), True


_BLOCK_CACHE: dict[tuple[str, float], dict] = {}


def _block_map(vault: Vault, session_rel: str, session: Session) -> dict[str, str]:
    """Original message id -> block id in the session note, from its `message_ids` (or, in
    a dry run where the note is not written, the ids it would get)."""
    from vaultmem.extract.sessions import block_ids

    path = vault.abs(session_rel)
    if not path.exists():
        ids = [t.id for t in session.turns]
        return dict(zip(ids, block_ids(ids)))
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _BLOCK_CACHE:
        _BLOCK_CACHE.clear()  # one entry per run is all that is ever read again
        ids = [str(m) for m in as_list(read_note(path).get("message_ids"))]
        _BLOCK_CACHE[key] = dict(zip(ids, block_ids(ids)))
    return _BLOCK_CACHE[key]


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
