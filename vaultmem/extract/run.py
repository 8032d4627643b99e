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
from collections import deque
from contextlib import nullcontext
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import TranscriptError, VaultmemError
from vaultmem.extract.importers import load_transcript
from vaultmem.extract.judge import judge
from vaultmem.extract.review import check, review
from vaultmem.extract.run_report import RunReport, classify, message, tally_plan
from vaultmem.extract.session_notes import (
    decided_by_llm,
    find_session_notes,
    mark_decided_by_llm,
    turn_link,
    write_session,
)
from vaultmem.extract.sessions import hide_in, hide_marked, redact_session
from vaultmem.memory.write import UNDATED, Merges, apply, load_pool, plan
from vaultmem.policy.candidate import Candidate
from vaultmem.policy.decide import decide
from vaultmem.store.ids import run_id
from vaultmem.store.session_note import Session
from vaultmem.store.vault import Vault

STEP_TURNS = 2000            # offline: a step (one commit) closes once it holds this many turns


class ExtractInterrupted(VaultmemError):
    """An extraction run stopped part-way; the sessions it finished are kept."""


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
                    ch.message = message(vault, tally, len(step), names, steps if todo or steps > 1 else None)
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
        self.pool = load_pool(vault, user, memory.snapshot(user), memory.indexer.state)
        self.seconds = float(getattr(vault.config, "llm_session_seconds", 0) or 0)
        self.merges = Merges()  # duplicates of the current step, written at its end
        self.shown: set = set()  # ids of the held memories the model saw for the current session
        self.secrets: list = []  # what the model marked secret in the current session

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
        kinds = classify(vault, tally)
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
        if self.llm and old and decided_by_llm(old, redacted):
            report.resumed += 1
            return
        if prepared:
            found, done_by_llm = list(prepared[0]), False
        else:
            # The model reads the session before it is saved: what it marks secret, the
            # patterns of `policy/redact.py` missed, and the saved session hides it too.
            self.secrets = []
            found, done_by_llm = self._candidates(redacted)
            if self.secrets:
                redacted, hidden = hide_marked(redacted, self.secrets)
                report.redactions += hidden
                _refuse_marked(found, self.secrets)
            found += _turned_down(redacted, found)
        if old and ch is not None:  # its notes may move, and their links with them: merge first
            report.errors.extend(self.merges.flush(vault, ch))
        turns_at, written = write_session(vault, redacted, old, user, report.run, ch)
        if ch is not None and written:  # the same session again later in the run finds these
            parts = list(dict.fromkeys(rel for rel, _block in turns_at.values()))
            self.existing[(user, redacted.id)] = [vault.abs(rel) for rel in parts]
        order = {t.id: i for i, t in enumerate(redacted.turns)}
        found.sort(key=lambda c: min((order.get(m, len(order)) for m in c.source_messages),
                                     default=len(order)))  # stable: a turn's own order stays
        # The day each turn was said: its own time, else its session's; unknown (None) in a
        # transcript without times, where no date is guessed (the memory says so instead).
        days = {t.id: (t.time or redacted.start).date() if (t.time or redacted.start) else None
                for t in redacted.turns}
        live = [c for c in found if not c.rejected_reason]
        vectors = dict(zip(map(id, live), self.memory.embedder.encode([c.content for c in live]))) if live else {}
        # One request a session: the model says what each memory does to the held ones as it
        # writes them. A model that said nothing of it (the rules' candidates with `extractor =
        # "rules"`, or a reply without "action", as a small model answers) is asked in a second,
        # short request (`extract/review.py`).
        unjudged = done_by_llm and live and all(c.verdict is None for c in live)
        verdicts = self._review(redacted, live, vectors) if unjudged else {}
        made = {}  # id(candidate) -> the memory it became or restated, for "N2" targets
        for cand in found:
            stated = next((days[m] for m in cand.source_messages if days.get(m)), None)
            vector = vectors.get(id(cand))
            sources = [turn_link(vault, *turns_at[m]) for m in cand.source_messages if m in turns_at]
            decision = decide(cand, user, self.pool, vector, links=sources)
            if cand.verdict is not None:
                decision, refused = judge(decision, self.pool, vector, self.shown, made)
            else:
                decision, refused = check(decision, verdicts.get(id(cand)), self.pool, vector)
            if refused:
                report.warnings.append(f"session {redacted.id}: {refused}")
            if ch is None:
                plan(vault, decision, self.pool, user=user, sources=sources, vector=vector)
                tally_plan(report, decision)
                made[id(cand)] = self._became(decision)
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
            if decision.action == "superseded" and cand.verdict is not None and cand.verdict.also:
                self._replace_also(decision, made, ch, tally, stated, vector)
            made[id(cand)] = self._became(decision)
            report.listed(decision)
        if ch is not None and done_by_llm and turns_at:
            mark_decided_by_llm(vault, next(iter(turns_at.values()))[0], ch)

    def _replace_also(self, decision, made: dict, ch, tally: dict, stated, vector=None) -> None:
        """The further memories the model said an update replaces ("a plan that came true"
        beside the old value): each superseded by the new memory too, when it is still active
        and shares something with it or with a memory the update replaces (`judge.unrelated`:
        the new diet replaces "keto" and the plan to batch-prep keto lunches; 禾映's job replaces
        the offer from 禾映, the job at 澜途 and the plan to leave 澜途)."""
        from vaultmem.extract.judge import share_words, unrelated
        from vaultmem.extract.review import _cosine
        from vaultmem.policy.pool import Existing
        from vaultmem.memory.write import supersede

        cand = decision.candidate
        until = cand.valid_from or stated
        lead = [decision.target] if isinstance(decision.target, Existing) else []
        listed = []
        for target in cand.verdict.also:
            entry = target if not isinstance(target, Candidate) else made.get(id(target))
            if entry is not None and entry is not decision.target and entry in self.pool.entries \
                    and entry not in listed:
                listed.append(entry)

        def score(entry):
            return _cosine(vector, entry.vector) if vector is not None and entry.vector is not None else None

        direct = [e for e in listed if not unrelated(cand, e, score(e))]
        anchors = lead + direct   # one hop: a memory let in by a shared word lets nothing in after it
        for entry in listed:
            if entry not in direct and not any(share_words(a.text, entry.text) for a in anchors):
                self.report.warnings.append(f"the model said {cand.content[:50]!r} also replaces {entry.rel}, "
                                            "which it shares nothing with; kept")
                continue
            ch.record(entry.rel)
            supersede(self.vault, entry, new_rel=decision.path, until=until, now=self.now)
            self.pool.discard(entry)
            tally["superseded"].add(entry.rel)

    def _became(self, decision):
        """The memory a decision wrote or restated (an `Existing`), or None."""
        if decision.action in ("created", "superseded") and decision.id:
            return next((e for e in reversed(self.pool.entries) if e.id == decision.id), None)
        return decision.target if decision.action in ("updated", "unchanged") else None

    def _review(self, session: Session, live: list, vectors: dict) -> dict:
        """The model's verdicts on what the session's candidates update (`extract/review.py`).
        When it fails, the rules decide the session alone and the run says so."""
        from vaultmem.extract.llm_endpoint import LLMSettings, chat

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
        from vaultmem.extract.judge import held_for
        from vaultmem.extract.llm import extract_session

        held = held_for(session.turns, self.pool, self.user, self.memory.embedder.encode)
        outcome = extract_session(session.turns, session.start, self.memory.llm_settings(), held=held,
                                  seconds=self.seconds)
        self.shown = {id(item.entry) for item in outcome.shown}
        self.secrets = list(outcome.secrets)
        self.report.warnings.extend(f"session {session.id}: {w}" for w in outcome.warnings)
        self.report.model_session(session.id, outcome)
        def own(target):  # an "N2" target is that candidate itself
            return outcome.candidates[target] if isinstance(target, int) else target

        for cand in outcome.candidates:
            if cand.verdict is not None:
                cand.verdict.target = own(cand.verdict.target)
                cand.verdict.also = [own(target) for target in cand.verdict.also]
        return outcome.candidates, not outcome.fell_back


_ABOUT_A_SECRET = re.compile(
    r"\b(?:key|token|password|passcode|pin|secret|credentials?|card|id|ssn|phone|number|address)\b|"
    r"密钥|秘钥|令牌|密码|口令|卡号|身份证|手机|电话|地址", re.IGNORECASE)
_NOT_MEMORY = {"greeting": "greeting or filler", "filler": "greeting or filler",
               "request": "one-off request, not a standing instruction"}


def _refuse_marked(candidates, secrets) -> None:
    """A memory holding what the model marked secret (in its statement, title or alias) is
    refused, whatever else it says, and the run's report shows it hidden."""
    for cand in candidates:
        holds = False
        for field in ("content", "title", "alias"):
            text = getattr(cand, field, None)
            if isinstance(text, str):
                text, count = hide_in(text, secrets)
                if count:
                    holds = True
                    setattr(cand, field, text)
        if holds and not cand.rejected_reason:
            cand.rejected_reason = "holds what the model marked a secret; it stays out of memory"


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
