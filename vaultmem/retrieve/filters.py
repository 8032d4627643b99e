"""Search filters: metadata conditions (user, type, tag, since, as of, scope, current or not)
as one numpy mask over an index snapshot, the one definition the vector half, the keyword half
and the no-index fallback all apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from vaultmem.errors import VaultmemError
from vaultmem.index.user_notes import NOTE_TYPE

# What a search reads: memory and session notes, the person's own notes, or both.
SCOPES = ("memories", "notes", "all")


@dataclass(frozen=True)
class Filters:
    """Metadata conditions as a numpy mask over a `Snapshot`: the one definition of the
    filters, used by the vector half, the keyword half and the no-index fallback."""

    user: str | None = None
    type: str | None = None
    tag: str | None = None
    since: str | None = None
    as_of: str | None = None
    all: bool = False
    also_users: tuple = ()
    # Memories whose `valid_to` day is before `today` are no longer current: left out
    # unless `all` or `as_of` asks for the past.
    today: str | None = None
    # "memories" (memory and session notes), "notes" (the person's own) or "all".
    scope: str = "all"

    def mask(self, snap):
        import numpy as np

        cols = snap.columns
        mask = np.ones(len(snap), dtype=bool)
        notes = cols["type"] == NOTE_TYPE
        if self.user is not None:   # the person's notes belong to the vault, not a namespace
            mask &= np.isin(cols["user"], [self.user, *self.also_users]) | notes
        if self.scope == "memories":
            mask &= ~notes
        elif self.scope == "notes":
            mask &= notes
        if self.type:
            mask &= cols["type"] == self.type
        if self.tag:
            inner, nested = f"|{self.tag}|", f"|{self.tag}/"
            mask &= np.fromiter((inner in t or nested in t for t in cols["tags"]), bool, len(snap))
        if self.since:
            mask &= cols["created"] >= self.since
        if self.as_of:
            day = self.as_of
            start = snap.cache.get("start_day")
            if start is None:  # valid_from, else the creation day (astype U10 truncates); a
                # memory with an end and no start (a past state told later) held since before;
                # an event told ahead of its day, from the day it was told (`held_from`)
                start = np.where(cols["valid_from"] != "", cols["valid_from"].astype("U10"),
                                 np.where(cols["valid_to"] != "", "", cols["created"].astype("U10")))
                start = np.where(cols["held_from"] != "", cols["held_from"], start)
                snap.cache["start_day"] = start
            mask &= start <= day
            ends = cols["valid_to"]
            mask &= (ends == "") | (ends > day) | ((ends.astype("U10") == day) & (cols["status"] != "superseded"))
            if not self.all:
                mask &= cols["status"] != "archived"
        elif not self.all:
            mask &= cols["status"] == "active"
            if self.today:
                mask &= (cols["valid_to"] == "") | (cols["valid_to"] >= self.today)
        return mask


    def where(self, user: bool = True) -> str | None:
        """A SQL condition every row `mask` lets through meets (user, scope, type, tag,
        since), what LanceDB's indexes are asked with on a table too large to hold in memory
        so that they return rows the mask keeps; `user=False` leaves the user out (None when
        nothing is left). Only a narrowing: the mask still decides over what comes back.
        Whether a memory is current (status, valid_to, as_of) is left to the mask: nearly
        every row is, and evaluating it for a million rows cost each query 130 ms."""
        from vaultmem.index.table import sql_in, sql_str

        clauses = []
        if user and self.user is not None:
            clauses.append(f"({sql_in('user', [self.user, *self.also_users])} OR type = {sql_str(NOTE_TYPE)})")
        if self.scope == "memories":
            clauses.append(f"type != {sql_str(NOTE_TYPE)}")
        elif self.scope == "notes":
            clauses.append(f"type = {sql_str(NOTE_TYPE)}")
        if self.type:
            clauses.append(f"type = {sql_str(self.type)}")
        if self.tag:
            tag = self.tag.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            clauses.append(f"(tags LIKE {sql_str('%|' + tag + '|%')} ESCAPE '\\' "
                           f"OR tags LIKE {sql_str('%|' + tag + '/%')} ESCAPE '\\')")
        if self.since:
            clauses.append(f"created >= {sql_str(self.since)}")
        return " AND ".join(clauses) or None


def check_scope(scope) -> str:
    """`scope` as one of SCOPES ("both" is "all"); a VaultmemError names the choices."""
    scope = "all" if scope in (None, "", "both") else str(scope)
    if scope not in SCOPES:
        raise VaultmemError(f"unknown scope {scope!r} — use memories, notes or all")
    return scope


def normalise_day(value) -> str | None:
    """`2026-11-29` (str or date) -> '2026-11-29'; raises ConfigError-like message otherwise."""
    if value in (None, ""):
        return None
    text = value.isoformat() if isinstance(value, date) else str(value).strip()
    try:
        date.fromisoformat(text[:10])
    except ValueError:
        raise VaultmemError(f"{value!r} is not a date — use YYYY-MM-DD") from None
    return text


def row_passes(row: dict, filters: Filters) -> bool:
    """`Filters` applied to one row (the fallback has no table to query)."""
    from vaultmem.index.snapshot import FILTER_COLUMNS, of_rows

    return bool(filters.mask(of_rows([row], FILTER_COLUMNS))[0])
