"""The one source of "now", so that tests (and subprocesses they start) can fake the clock."""

import os
from datetime import date, datetime


def now() -> datetime:
    """Naive local time to the second; `VAULTMEM_NOW=2026-01-02T03:04:05` overrides it."""
    fake = os.environ.get("VAULTMEM_NOW")
    if fake:
        return datetime.fromisoformat(fake).replace(microsecond=0, tzinfo=None)
    return datetime.now().replace(microsecond=0)


def today() -> date:
    return now().date()


def iso(dt: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS`, the date-time form Obsidian properties accept."""
    return dt.replace(microsecond=0, tzinfo=None).isoformat(timespec="seconds")
