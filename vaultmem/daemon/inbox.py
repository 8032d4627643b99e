"""The inbox: transcripts agents drop into `Memory/Inbox/` are extracted once they settle.

A file is extracted when its size and mtime stayed the same for `settle` seconds (an agent
may still be writing it). Success moves it to `Inbox/processed/` (secrets redacted); failure leaves it where
it is with a sibling `<name>.error.txt` saying why, and it is retried when it changes.

With `[llm] enabled` the person's own model writes the memories. A session the model failed
is decided by the offline rules instead: the transcript is still processed, and the outcome
and the daemon's log name the session and why. Dropped again (an agent's log grows), it is
given to the model again.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from vaultmem.store.files import atomic_write

log = logging.getLogger("vaultmem.daemon")

TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".md", ".markdown", ".txt")
ERROR_SUFFIX = ".error.txt"
PROCESSED = "processed"


class Inbox:
    """Tracks transcripts waiting in the inbox; `process_due()` extracts the settled ones.

    `run_extract(paths)` does the extraction (the daemon passes `Memory.extract` wrapped in
    its index lock, which asks the model as `[llm] enabled` says) and returns the extract
    summary dict.
    """

    def __init__(self, vault, run_extract, settle: float, clock=time.monotonic):
        self.vault = vault
        self.dir = Path(vault.inbox_dir)
        self.rel_dir = self.dir.relative_to(vault.root).as_posix()
        self.run_extract = run_extract
        self.settle = settle  # [daemon] inbox_settle_seconds
        self._clock = clock
        self._waiting: dict[str, tuple[tuple, float]] = {}  # rel -> (size, mtime), since

    def __len__(self) -> int:
        return len(self._waiting)

    def wants(self, rel: str) -> bool:
        """Is `rel` a transcript dropped straight into the inbox (not processed/, no reports)?"""
        parent, _, name = rel.rpartition("/")
        return (parent == self.rel_dir and not name.startswith(".")
                and name.lower().endswith(TRANSCRIPT_SUFFIXES)
                and not name.endswith(ERROR_SUFFIX))

    def observe(self, rel: str, change: str = "modified") -> None:
        """Note an event for an inbox file; its settle time starts again."""
        signature = self._signature(rel)
        if change == "deleted" or signature is None:
            self._waiting.pop(rel, None)
            return
        self._waiting[rel] = (signature, self._clock())

    def scan(self) -> None:
        """Queue every transcript present at startup, except ones that failed and did not
        change since (their error report is newer than they are)."""
        if not self.dir.is_dir():
            return
        for entry in sorted(os.scandir(self.dir), key=lambda e: e.name):
            rel = f"{self.rel_dir}/{entry.name}"
            if not entry.is_file() or not self.wants(rel):
                continue
            report = self.dir / (entry.name + ERROR_SUFFIX)
            try:
                if report.stat().st_mtime_ns >= entry.stat().st_mtime_ns:
                    continue
            except OSError:
                pass
            self.observe(rel)

    def next_due(self) -> float | None:
        """Seconds until the next waiting file may be settled (None when none waits)."""
        if not self._waiting:
            return None
        earliest = min(since for _, since in self._waiting.values())
        return max(0.0, earliest + self.settle - self._clock())

    def process_due(self) -> list[dict]:
        """Extract every file that stayed unchanged for `settle` seconds; their outcomes."""
        outcomes = []
        now = self._clock()
        for rel, (signature, since) in list(self._waiting.items()):
            if now - since < self.settle:
                continue
            current = self._signature(rel)
            if current is None:
                self._waiting.pop(rel, None)
            elif current != signature:
                self._waiting[rel] = (current, now)  # still being written
            else:
                self._waiting.pop(rel, None)
                outcomes.append(self._extract(rel))
        return outcomes

    def _signature(self, rel: str):
        try:
            st = os.stat(self.vault.root / rel)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def _extract(self, rel: str) -> dict:
        path = self.vault.root / rel
        report = path.with_name(path.name + ERROR_SUFFIX)
        try:
            result = self.run_extract([str(path)])
            problems = _problems(result)
            if problems:
                raise ExtractFailed("; ".join(problems))
        except Exception as exc:  # any failure is reported beside the file, never fatal
            reason = str(exc) or type(exc).__name__
            log.warning("inbox: %s not extracted: %s", rel, reason)
            try:
                atomic_write(report, f"vaultmem could not extract {path.name}:\n{reason}\n\n"
                                     "Fix the file (or replace it) and the daemon retries it.\n")
            except OSError as write_exc:
                log.warning("inbox: cannot write %s: %s", report.name, write_exc)
            return {"path": rel, "ok": False, "error": reason}
        # The old report goes first: a transcript in processed/ means done, and whoever
        # sees it there must no longer find the report of an earlier failure.
        report.unlink(missing_ok=True)
        done = self._move_to_processed(path)
        said = result if isinstance(result, dict) else {}
        summary = {k: said[k] for k in ("run", "created", "updated", "superseded") if k in said}
        model = said.get("model")
        moved_to = done.relative_to(self.vault.root).as_posix()
        log.info("inbox: extracted %s -> %s by %s %s", rel, moved_to,
                 f"the model {model}" if model else "the offline rules", summary)
        # e.g. "session 7f3c…: LLM extraction failed (…); used the offline extractor instead"
        warnings = [str(w) for w in said.get("warnings") or []]
        for warning in warnings:
            log.warning("inbox: %s: %s", rel, warning)
        return {"path": rel, "ok": True, "moved_to": moved_to, "model": model,
                "warnings": warnings, "result": result}

    def _move_to_processed(self, path: Path) -> Path:
        target_dir = self.dir / PROCESSED
        target_dir.mkdir(parents=True, exist_ok=True)
        target, n = target_dir / path.name, 1
        while target.exists():
            n += 1
            target = target_dir / f"{path.stem} {n}{path.suffix}"
        _keep_redacted(path, target)
        return target


def _keep_redacted(path: Path, target: Path) -> None:
    """Keep the extracted transcript in processed/ with its secrets redacted, as its session
    note has them: the raw file would hold the passwords and keys the notes leave out.
    JSON is redacted value by value (a key such as "session" is no keyword for its value)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        os.replace(path, target)  # the importer refused it before; nothing to redact
        return
    clean = _redacted_json(text, path.suffix.lower())
    if clean is None:
        from vaultmem.policy.redact import redact
        clean = redact(text)[0]
    if clean == text:
        os.replace(path, target)
        return
    # Written aside, the original removed, then the copy renamed into place: processed/
    # shows the transcript only once the inbox no longer holds it (a crash in between
    # leaves the redacted copy as the hidden `.NAME.part`, nothing lost).
    part = target.with_name(f".{target.name}.part")
    atomic_write(part, clean)
    path.unlink()
    os.replace(part, target)


def _redacted_json(text: str, suffix: str) -> str | None:
    """The JSON or JSON-lines text with every string value redacted, or None if not JSON."""
    import json

    from vaultmem.policy.redact import redact

    def walk(value):
        if isinstance(value, str):
            return redact(value)[0]
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    try:
        if suffix == ".jsonl":
            return "".join(json.dumps(walk(json.loads(line)), ensure_ascii=False) + "\n" if line.strip()
                           else line + "\n" for line in text.splitlines())
        if suffix == ".json":
            return json.dumps(walk(json.loads(text)), ensure_ascii=False, indent=1) + "\n"
    except ValueError:
        return None
    return None


def drop(vault, source: str | Path) -> Path:
    """Copy transcript `source` into the inbox for the daemon (the agent hooks' way in);
    returns where it landed. The copy appears whole (`atomic_write`: the daemon never sees
    half of it) and replaces a copy of the same file still waiting there, since an agent's
    log only grows. TranscriptError if `source` cannot be read."""
    from vaultmem.errors import TranscriptError

    source = Path(source)
    if not source.name.lower().endswith(TRANSCRIPT_SUFFIXES) or source.name.startswith("."):
        raise TranscriptError(source, None, "not a transcript file name — the inbox takes "
                              + ", ".join(TRANSCRIPT_SUFFIXES) + " files")
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise TranscriptError(source, None, f"cannot be read ({exc.strerror}) — check the path") from None
    target = Path(vault.inbox_dir) / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)
    return target


class ExtractFailed(Exception):
    """Extraction returned per-file errors for the transcript."""


def _problems(result) -> list[str]:
    """Error messages an extract summary carries (it may report bad files instead of raising)."""
    if not isinstance(result, dict):
        return []
    errors = result.get("errors") or []
    messages = []
    for item in errors:
        if isinstance(item, dict):
            where = item.get("path") or item.get("file") or ""
            messages.append(f"{where}: {item.get('reason') or item.get('error') or item}".strip(": "))
        else:
            messages.append(str(item))
    return messages
