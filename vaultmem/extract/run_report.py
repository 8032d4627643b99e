"""What an extraction run reports: its counts, as the commits hold them (memory notes created,
updated, superseded; session and entity notes), the first MAX_LISTED_DECISIONS decisions,
and each step's commit subject.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.store.vault import Vault

MAX_LISTED_DECISIONS = 1000  # the report lists these first decisions; the counts cover all


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
    model_sessions: list[dict] = field(default_factory=list)  # per session: calls, tokens, who decided
    model_usage: Counter = field(default_factory=Counter)     # the run's calls and tokens

    def model_session(self, session: str, outcome) -> None:
        """What one session cost with the model, and whether the rules decided any of it (why)."""
        usage = {key: int(outcome.usage.get(key, 0)) for key in ("calls", "prompt_tokens", "completion_tokens")}
        self.model_usage.update(usage)
        self.model_usage["sessions"] += 1
        entry = {"session": session, **usage, "decided_by": "model"}
        if outcome.fell_back:
            self.model_usage["sessions_by_rules"] += 1
            why = next((w for w in outcome.warnings if "offline" in w), outcome.warnings[-1] if outcome.warnings else "")
            entry.update(decided_by="rules" if outcome.endpoint_failed or not usage["calls"] else "model and rules",
                         why=why)
        if len(self.model_sessions) < MAX_LISTED_DECISIONS:
            self.model_sessions.append(entry)

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
                **({"model_usage": {key: self.model_usage.get(key, 0) for key in
                              ("sessions", "calls", "prompt_tokens", "completion_tokens", "sessions_by_rules")},
                    "model_sessions": self.model_sessions} if self.model_usage else {}),
                **({"warning": self.warning} if self.warning else {})}


def tally_plan(report: RunReport, decision) -> None:
    """A dry run's counts: what the decision would write."""
    if decision.action in ("created", "superseded") and decision.path:
        report.created.add(decision.path)
    if decision.action == "superseded" and decision.target is not None:
        report.superseded.add(decision.target.rel)
    elif decision.action == "updated" and decision.target is not None:
        report.updated.add(decision.target.rel)


def message(vault: Vault, tally: dict, sessions: int, names: str, step: int | None) -> str:
    """The step's commit subject: its counts are of the notes this very commit holds."""
    kinds = classify(vault, tally)
    return (f"vaultmem: extract {sessions} session(s) from {names}{f' (step {step})' if step else ''}: "
            f"{len(kinds['created'])} new, {len(kinds['updated'] - kinds['superseded'])} updated, "
            f"{len(kinds['superseded'])} superseded; {len(kinds['session'])} session note(s), "
            f"{len(kinds['entity'])} entity note(s)")


def classify(vault: Vault, tally: dict) -> dict[str, set[str]]:
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


def _kind(vault: Vault, rel: str) -> str:
    folder = Path(rel).parent
    if folder == Path(vault.rel(vault.folder_for("session"))):
        return "session"
    if folder == Path(vault.rel(vault.folder_for("entity"))):
        return "entity"
    if any(folder == Path(vault.rel(vault.folder_for(t))) for t in STATEMENT_TYPES):
        return "memory"
    return "other"
