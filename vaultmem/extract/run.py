"""An extraction run: transcripts → session notes → candidates → write policy → notes.

The run goes in steps, each one change (`change.vault_change`): its notes are written, the
index follows and one git commit records them, or, when the step fails part-way, the vault
is left as that step found it. Every commit of a run carries the same `Vaultmem-Run`
trailer, so `rollback --run` undoes all of them at once. With `--llm` a step is one
session (the model is slow: an interrupted run keeps every session it finished); the
offline extractor takes steps of about STEP_TURNS turns (a small transcript is one
commit). Only the current step's candidates, decisions and vectors are held, so memory
stays flat whatever the transcript's size; the report keeps counts, paths and the first
MAX_LISTED_DECISIONS decisions (`decisions_left_out` counts the rest).

Resuming: re-running the same command finds each session's notes by its session id. A
session the LLM has decided is marked `extracted_by: llm` on its (first) note, in the
same commit as its memories and written after them, so a run stopped part-way (Ctrl-C,
SIGTERM, a crash) asks the model again only for the sessions it had not finished. A
session whose endpoint failed is not marked: the next `--llm` run tries it again. The
offline extractor is cheap and decides every session again ("unchanged").

Counts are of notes, as the commits hold them: `created` memory notes added (one that
replaces an older memory too), `superseded` memory notes this run marked superseded,
`updated` memory notes that existed before the run and were changed by it otherwise;
`session_notes`, `entity_notes` the others written. `rejected` and `unchanged` count
statements (nothing is written for them).

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
from collections import Counter, deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import TranscriptError, VaultmemError
from vaultmem.extract.importers import load_transcript
from vaultmem.extract.review import check, review
from vaultmem.extract.sessions import message_link, part_title, redact_session, render_session_parts, session_title
from vaultmem.memory.write import UNDATED, Merges, apply, load_pool, plan
from vaultmem.policy.candidate import Candidate
from vaultmem.policy.decide import decide
from vaultmem.store.ids import run_id
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.store.note import as_list, read_head, read_note
from vaultmem.store.session_note import Session, block_ids
from vaultmem.store.vault import Vault, atomic_write, is_conflict_copy

STEP_TURNS = 2000            # offline: a step (one commit) closes once it holds this many turns
MAX_LISTED_DECISIONS = 1000  # the report lists these first decisions; the counts cover all
EXTRACTED_BY = "extracted_by"  # on a session's first note: the LLM decided its memories


@dataclass
class RunReport:
    run: str
    sessions: int = 0
    notes: set[str] = field(default_factory=set)
    decisions: list[dict] = field(default_factory=list)
    decisions_left_out: int = 0
    statements: Counter = field(default_factory=Counter)  # decisions by action
    created: set[str] = field(default_factory=set)        # memory notes, as committed
    updated: set[str] = field(default_factory=set)
    superseded: set[str] = field(default_factory=set)
    session_notes: set[str] = field(default_factory=set)
    entity_notes: set[str] = field(default_factory=set)
    resumed: int = 0  # sessions the LLM had already decided in an earlier run: skipped
    errors: list[str] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)  # transcript files not imported: path, line, error
    warnings: list[str] = field(default_factory=list)
    redactions: int = 0
    commits: list[str] = field(default_factory=list)
    warning: str | None = None   # a step is kept but its commit (or indexing) failed

    def count(self, action: str) -> int:
        """Notes created, updated or superseded (as the commits hold them); statements
        rejected or unchanged."""
        if action == "created":
            return len(self.created)
        if action == "superseded":
            return len(self.superseded)
        if action == "updated":
            return len(self.updated - self.created - self.superseded)
        return self.statements[action]

    def listed(self, decision) -> None:
        self.statements[decision.action] += 1
        if len(self.decisions) < MAX_LISTED_DECISIONS:
            self.decisions.append(decision.to_dict())
        else:
            self.decisions_left_out += 1

    def to_dict(self) -> dict:
        return {"run": self.run, "sessions": self.sessions, "created": self.count("created"),
                "updated": self.count("updated"), "superseded": self.count("superseded"),
                "rejected": self.count("rejected"), "unchanged": self.count("unchanged"),
                "notes": sorted(self.notes), "session_notes": len(self.session_notes),
                "entity_notes": len(self.entity_notes), "resumed": self.resumed,
                "redactions": self.redactions, "decisions": self.decisions,
                "decisions_left_out": self.decisions_left_out,
                "errors": self.errors, "failed": self.failed, "warnings": self.warnings,
                "commit": self.commits[-1] if self.commits else None, "commits": self.commits,
                **({"warning": self.warning} if self.warning else {})}


class ExtractInterrupted(VaultmemError):
    """An extraction run stopped part-way; the sessions it finished are kept."""


def find_session_notes(vault: Vault) -> dict[tuple[str, str], list[Path]]:
    """(user, session id) -> paths of the session's notes already in the vault, ordered by
    their `part` (a note without one is part 1), then by file name."""
    found: dict[tuple[str, str], list[tuple[int, str, Path]]] = {}
    folder = vault.folder_for("session")
    if folder.is_dir():
        for path in folder.glob("*.md"):
            if is_conflict_copy(path.name):
                continue
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
            dry_run: bool = False, progress=None) -> RunReport:
    """Run one extraction over transcript files; see the module docstring. `progress(done,
    total, turns_done, turns_total)` is called after each session (sessions and turns)."""
    vault: Vault = memory.vault
    user = user or memory.user
    report = RunReport(run=run_id())
    sessions: list[tuple[Session, str]] = []
    for path in paths:
        try:
            loaded = load_transcript(path, format)
        except TranscriptError as exc:  # nothing of this file is written; the others go on
            report.errors.append(str(exc))
            report.failed.append({"path": exc.path, "line": exc.line, "error": exc.reason})
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
    run = _Run(memory, vault, user, report, now, llm, progress, len(sessions),
               sum(len(s.turns) for s, _source in sessions))
    todo = deque(sessions)  # a session's objects go once it is done
    del sessions
    steps = 0
    while todo:
        step = _next_step(todo, llm)
        steps += 1
        change = nullcontext() if dry_run else memory.change(
            f"vaultmem: extract {len(step)} session(s) from {names}", "extract", run=report.run, source=names)
        try:
            with change as ch:
                tally = run.step(step, ch)
                if ch is not None:
                    ch.message = _message(vault, tally, len(step), names, steps if todo or steps > 1 else None)
        except (KeyboardInterrupt, VaultmemError) as exc:
            raise _stopped(report, run, exc) from exc
        if ch is not None:
            run.account(ch, tally)
    return report


def _next_step(todo: deque, llm: bool) -> list:
    """The sessions of the next step: one with the LLM, else up to about STEP_TURNS turns."""
    step = [todo.popleft()]
    turns = len(step[0][0].turns)
    while not llm and todo and turns + len(todo[0][0].turns) <= STEP_TURNS:
        turns += len(todo[0][0].turns)
        step.append(todo.popleft())
    return step


def _stopped(report: RunReport, run: "_Run", exc: BaseException) -> BaseException:
    """The error to raise when a step failed or was interrupted: what was kept, and how to go on."""
    kept = (f"the {run.done} session(s) finished before it are kept (run {report.run}); run the "
            f"same command again to resume" if report.commits else "nothing was kept")
    if isinstance(exc, KeyboardInterrupt):
        return ExtractInterrupted(f"extraction interrupted at session {run.done + 1} of {run.total}; {kept}")
    if report.commits:
        exc.args = (f"{str(exc).rstrip('.')} (in session {run.done + 1} of {run.total}); {kept}",)
    return exc


class _Run:
    """The state a run keeps between steps: the pool, where sessions' notes are, counts."""

    def __init__(self, memory, vault: Vault, user: str, report: RunReport, now, llm: bool, progress,
                 total: int, turns_total: int):
        self.memory, self.vault, self.user, self.report, self.now, self.llm = memory, vault, user, report, now, llm
        self.progress, self.total, self.turns_total = progress, total, turns_total
        self.done = self.turns_done = 0
        self.existing = find_session_notes(vault)
        self.pool = load_pool(vault, user, memory.snapshot(), memory.indexer.state)
        self.seconds = float(getattr(vault.config, "llm_session_seconds", 0) or 0)
        self.merges = Merges()  # duplicates of the current step, written at its end

    def step(self, sessions, ch) -> dict:
        """Decide and write `sessions` within `ch` (None: a dry run); returns what the
        step's commit holds, as `account` needs it."""
        tally = {"superseded": set()}
        # Offline, every session's candidates are known before any is decided: embedded in
        # one call, sorted by length over the whole step, they pad less than session by
        # session (the embedder keeps the vectors for `_session`).
        found = {} if self.llm else {id(session): self._found(session) for session, _ in sessions}
        if found:
            live = [c.content for cands, _ in found.values() for c in cands if not c.rejected_reason]
            if live:
                self.memory.embedder.encode(live)
        merges = self.merges = Merges()
        for session, _source in sessions:
            self._session(session, ch, tally, found.get(id(session)))
            self.done += 1
            self.turns_done += len(session.turns)
            self.report.sessions = self.done
            if self.progress is not None:
                self.progress(self.done, self.total, self.turns_done, self.turns_total)
        if ch is not None:
            self.report.errors.extend(merges.flush(self.vault, ch))
            tally["changed"] = ch.changed
            # a path absent before this step (VaultChange records each path's bytes first)
            tally["new"] = {rel for rel in tally["changed"] if ch._before.get(rel, (None,))[0] is None}
        return tally

    def account(self, ch, tally) -> None:
        """Add a committed step's notes to the report."""
        report, vault = self.report, self.vault
        if ch.commit:
            report.commits.append(ch.commit)
        if ch.warning:
            report.warning = ch.warning
            report.warnings.append(ch.warning)
        report.notes.update(tally["changed"])
        kinds = _classify(vault, tally)
        report.created |= kinds["created"]
        report.updated |= kinds["updated"]
        report.superseded |= kinds["superseded"]
        report.session_notes |= kinds["session"]
        report.entity_notes |= kinds["entity"]

    def _found(self, session: Session):
        """The offline extractor's candidates of `session` (redacted), and the redaction."""
        redacted, kinds = redact_session(session)
        found, _ = self._candidates(redacted)
        return found + _turned_down(redacted, found), (redacted, kinds)

    def _session(self, session: Session, ch, tally, prepared=None) -> None:
        vault, report, user = self.vault, self.report, self.user
        redacted, kinds = prepared[1] if prepared else redact_session(session)
        report.redactions += len(kinds)
        old = self.existing.get((user, redacted.id), [])
        if self.llm and old and _decided_by_llm(old, redacted):
            report.resumed += 1
            return
        if old and ch is not None:  # its notes may move, and their links with them: merge first
            report.errors.extend(self.merges.flush(vault, ch))
        turns_at, written = _write_session(vault, redacted, old, user, report.run, ch)
        if ch is not None and written:  # the same session again later in the run finds these
            parts = list(dict.fromkeys(rel for rel, _block in turns_at.values()))
            self.existing[(user, redacted.id)] = [vault.abs(rel) for rel in parts]
        if prepared:
            found, done_by_llm = list(prepared[0]), False
        else:
            found, done_by_llm = self._candidates(redacted)
            found += _turned_down(redacted, found)
        order = {t.id: i for i, t in enumerate(redacted.turns)}
        found.sort(key=lambda c: min((order.get(m, len(order)) for m in c.source_messages),
                                     default=len(order)))  # stable: a turn's own order stays
        # The day each turn was said: its own time, else its session's; unknown (None) in a
        # transcript without times, where no date is guessed (the memory says so instead).
        days = {t.id: (t.time or redacted.start).date() if (t.time or redacted.start) else None
                for t in redacted.turns}
        live = [c for c in found if not c.rejected_reason]
        vectors = dict(zip(map(id, live), self.memory.embedder.encode([c.content for c in live]))) if live else {}
        verdicts = self._review(redacted, live, vectors) if done_by_llm and live else {}
        for cand in found:
            stated = next((days[m] for m in cand.source_messages if days.get(m)), None)
            vector = vectors.get(id(cand))
            sources = [_turn_link(vault, *turns_at[m]) for m in cand.source_messages if m in turns_at]
            decision = decide(cand, user, self.pool, vector, links=sources)
            decision, refused = check(decision, verdicts.get(id(cand)), self.pool, vector)
            if refused:
                report.warnings.append(f"session {redacted.id}: {refused}")
            if ch is None:
                plan(vault, decision, self.pool, user=user, sources=sources, vector=vector)
                _tally_plan(report, decision)
                report.listed(decision)
                continue
            target = decision.target.rel if decision.action == "superseded" and decision.target else None
            try:
                written = apply(vault, decision, self.pool, change=ch, user=user, run=report.run,
                                sources=sources, vector=vector, now=self.now, stated=stated or UNDATED,
                                merges=self.merges)
            except VaultmemError as exc:  # e.g. the user is editing that note right now: skip it,
                # keep the rest of the run (it is still indexed and committed)
                report.errors.append(f"{decision.content[:60]}: {exc}")
                decision.action, decision.reason = "rejected", f"not written: {exc}"
                written = []
            if target and target in written:
                tally["superseded"].add(target)
            report.listed(decision)
        if ch is not None and done_by_llm and turns_at:
            _mark_decided_by_llm(vault, next(iter(turns_at.values()))[0], ch)

    def _review(self, session: Session, live: list, vectors: dict) -> dict:
        """The model's verdicts on what the session's candidates update (`extract/review.py`).
        When it fails, the rules decide the session alone and the run says so."""
        from vaultmem.extract.llm import LLMSettings, chat

        settings = LLMSettings.coerce(self.memory.llm_settings())
        outcome = review(live, vectors, self.user, self.pool, lambda messages, tokens: chat(settings, messages, tokens))
        self.report.warnings.extend(f"session {session.id}: {w}" for w in outcome.warnings)
        return outcome.verdicts

    def _rules_extract(self) -> bool:
        return self.vault.config.llm_extractor == "rules"

    def _candidates(self, session: Session) -> tuple[list, bool]:
        """The session's candidates, and whether the LLM decided them (its endpoint did not fail)."""
        from vaultmem.extract.offline import extract_offline

        if not self.llm or self._rules_extract():
            return extract_offline(session.turns, session.start, include_rejected=True), self.llm
        from vaultmem.extract.llm import extract_session

        outcome = extract_session(session.turns, session.start, self.memory.llm_settings(), seconds=self.seconds)
        self.report.warnings.extend(f"session {session.id}: {w}" for w in outcome.warnings)
        return outcome.candidates, not outcome.endpoint_failed


def _kind(vault: Vault, rel: str) -> str:
    folder = Path(rel).parent
    if folder == Path(vault.rel(vault.folder_for("session"))):
        return "session"
    if folder == Path(vault.rel(vault.folder_for("entity"))):
        return "entity"
    if any(folder == Path(vault.rel(vault.folder_for(t))) for t in STATEMENT_TYPES):
        return "memory"
    return "other"


def _tally_plan(report: RunReport, decision) -> None:
    """A dry run's counts: what the decision would write."""
    if decision.action in ("created", "superseded") and decision.path:
        report.created.add(decision.path)
    if decision.action == "superseded" and decision.target is not None:
        report.superseded.add(decision.target.rel)
    elif decision.action == "updated" and decision.target is not None:
        report.updated.add(decision.target.rel)


def _decided_by_llm(old: list[Path], session: Session) -> bool:
    """The session's notes hold every turn of `session` and say the LLM decided its memories."""
    try:
        if str(read_head(old[0]).get(EXTRACTED_BY, "")) != "llm":
            return False
        known = {str(m) for path in old for m in as_list(read_note(path).get("message_ids"))}
    except (OSError, VaultmemError):
        return False
    return {str(t.id) for t in session.turns} <= known


def _mark_decided_by_llm(vault: Vault, rel: str, ch) -> None:
    """`extracted_by: llm` on the session's first note, after its memories: a later run skips it."""
    from vaultmem.memory.memories import update_note

    path = vault.abs(rel)
    note = read_note(path)
    if str(note.get(EXTRACTED_BY, "")) == "llm":
        return
    ch.record(rel)
    update_note(vault, path, {EXTRACTED_BY: "llm", "updated": note.meta["updated"]}, expected_raw=note.raw)


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
    from vaultmem.memory.memories import update_note

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
    from vaultmem.policy.screen import screen

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


def _message(vault: Vault, tally: dict, sessions: int, names: str, step: int | None) -> str:
    """The step's commit subject: its counts are of the notes this very commit holds."""
    kinds = _classify(vault, tally)
    return (f"vaultmem: extract {sessions} session(s) from {names}{f' (step {step})' if step else ''}: "
            f"{len(kinds['created'])} new, {len(kinds['updated'] - kinds['superseded'])} updated, "
            f"{len(kinds['superseded'])} superseded; {len(kinds['session'])} session note(s), "
            f"{len(kinds['entity'])} entity note(s)")


def _classify(vault: Vault, tally: dict) -> dict[str, set[str]]:
    """A step's changed paths by what they are: memory notes created (absent before the
    step), updated (there before), superseded (by this step); session and entity notes."""
    out = {"created": set(), "updated": set(), "session": set(), "entity": set(),
           "superseded": tally["superseded"] & set(tally["changed"])}
    for rel in tally["changed"]:
        kind = _kind(vault, rel)
        if kind == "memory":
            out["created" if rel in tally["new"] else "updated"].add(rel)
        elif kind == "session" or (kind == "entity" and rel in tally["new"]):
            out[kind].add(rel)
    return out
