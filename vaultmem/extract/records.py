"""Reading a transcript file: its text, JSON, JSON lines and times, with errors that name
the file and line and say what to do (`TranscriptError`). Every loader shares these
(`importers.py` for jsonl and Markdown, `chat_exports.py`, `agent_transcripts.py`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from vaultmem.errors import TranscriptError

# Parts of an OpenAI-style `content` list that hold visible text; images, audio, files go.
TEXT_PARTS = ("text", "input_text", "output_text")


def parse_time(value) -> datetime | None:
    """ISO string (offset optional, `Z` allowed) or epoch seconds/milliseconds -> naive local.

    Raises ValueError for anything else; None and "" give None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value  # epoch milliseconds
        return datetime.fromtimestamp(seconds, timezone.utc).astimezone().replace(tzinfo=None, microsecond=0)
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    text = value.strip()
    if re.fullmatch(r"\d{9,13}(\.\d+)?", text):
        return parse_time(float(text))
    match = _ISO.fullmatch(text)
    if not match:
        raise ValueError(f"not an ISO date-time: {value!r}")
    date, clock, zone = match.group("date"), match.group("clock") or "00:00:00", match.group("zone")
    if len(clock) == 5:
        clock += ":00"
    parsed = datetime.fromisoformat(f"{date}T{clock}")
    if zone:
        zone = "+00:00" if zone in ("Z", "z") else zone
        if len(zone) == 5:  # +0800
            zone = zone[:3] + ":" + zone[3:]
        parsed = datetime.fromisoformat(parsed.isoformat() + zone).astimezone().replace(tzinfo=None)
    return parsed


_ISO = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})(?:[T ](?P<clock>\d{2}:\d{2}(?::\d{2})?)(?:[.,]\d+)?)?"
                  r"\s*(?P<zone>[Zz]|[+-]\d{2}:?\d{2})?")


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TranscriptError(path, None, "file not found — check the path") from None
    except IsADirectoryError:
        raise TranscriptError(path, None, "is a directory — pass the transcript files in it") from None
    except OSError as exc:
        raise TranscriptError(path, None, f"cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise TranscriptError(path, line, "not UTF-8 — re-save the file as UTF-8") from None
    if not text.strip():
        raise TranscriptError(path, None, "file is empty — nothing to import")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def load_json(path: Path, text: str):
    try:
        return no_lone_surrogates(json.loads(text))
    except json.JSONDecodeError as exc:
        raise TranscriptError(path, exc.lineno, f"not valid JSON ({exc.msg}: column {exc.colno}) — "
                              "fix the file or re-export it") from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, 10,000 nested arrays
        raise TranscriptError(path, None, f"not usable JSON ({_json_problem(exc)}) — fix the file "
                              "or re-export it") from None


def _json_problem(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]


def no_lone_surrogates(value):
    """JSON may spell half a UTF-16 pair, which no file can hold as UTF-8: replace each
    with U+FFFD, as a decoder does with a bad byte."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [no_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {no_lone_surrogates(k): no_lone_surrogates(v) for k, v in value.items()}
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def line_of(text: str, needle: str) -> int | None:
    """Best-effort line number of a JSON value, so errors in exports point somewhere useful."""
    at = text.find(json.dumps(needle)) if needle else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def time_or_error(path: Path, line: int | None, value) -> datetime | None:
    try:
        return parse_time(value)
    except (ValueError, OverflowError, OSError):  # OverflowError/OSError: a year past 9999
        raise TranscriptError(path, line, f"bad time {value!r} — use ISO 8601 "
                              "(2026-11-29T10:29:41) or epoch seconds") from None


JSONL_HINT = 'each line must be one JSON object like {"id": "m-1", "role": "user", "text": "..."}'


def jsonl_records(path: Path, text: str, hint: str = JSONL_HINT):
    """(line number, object) for each non-blank line; TranscriptError for a line that is
    not one JSON object, with the parser's whole message (its column: the line is ours)."""
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = no_lone_surrogates(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise TranscriptError(path, number, f"not JSON ({exc.msg}: column {exc.colno}) — {hint}") from None
        except (ValueError, RecursionError) as exc:
            raise TranscriptError(path, number, f"not usable JSON ({_json_problem(exc)}) — {hint}") from None
        if not isinstance(record, dict):
            raise TranscriptError(path, number, f"not a JSON object — {hint}")
        yield number, record


def content_text(content) -> str:
    """The visible text of a message's `content`: a string, or a list of parts of which the
    text ones (`{"type": "text"|"input_text"|"output_text", "text": ...}`, or bare strings)
    count; images, audio, files and tool parts are dropped."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    texts = [part if isinstance(part, str) else part.get("text")
             for part in content
             if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") in TEXT_PARTS)]
    return "\n\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())
