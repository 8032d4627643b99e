"""Repairs after two devices' memories met in one tree (a git merge, a sync tool's bulk copy).

    >>> plan(vault)              # what `vaultmem doctor` lists             # doctest: +SKIP
    [{'kind': 'duplicate', 'message': "vaultmem: sync repair: ...", 'notes': [...]}]
    >>> repair(memory)           # what `doctor --fix` and the daemon do    # doctest: +SKIP
    {'repairs': [...], 'commits': ['3f2a...']}

Each device wrote through the write policy alone, so the merged tree can hold what the
policy would never have let one device write:
- duplicates: one memory under two names (the policy's duplicate test: the same statement,
  `policy.normalise`d, or the same subject and attribute with the same value). The note
  said first is kept, with the other's sources, entities, tags and id (`merged_ids`); the
  other stays, superseded by it, so nothing is lost and links to it still lead somewhere.
- crossing supersedes: device A superseded X by Y, device B superseded X by Z. The one
  said last (`valid_from`, then `created`, then the id) stays active; the others are
  superseded by it.
- two values in one slot: device A learnt "lives in Porto", device B "moved to Denver",
  neither knowing the other's (the policy, seeing both, would have superseded the first).
  The one said last stays active, the others are superseded by it; values in two scripts
  ("北京" and "Beijing") stay both, as the policy keeps them.
- one-way supersede links (`superseded_by` without the matching `supersedes`, or the
  reverse): completed, and a memory superseded by an active one is no longer active.
Each repair is one commit through `change.vault_change`. Everything here is a function of
the tree alone (order by name, times taken from the notes, never the clock), so two devices
repairing the same merged tree make the same changes, and their next pull merges cleanly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import VaultmemError
from vaultmem.policy.pool import normalise
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.store.links import LinkResolver, parse_link
from vaultmem.store.note import statement_of
from vaultmem.store.properties import read_properties
from vaultmem.store.values import as_date, as_datetime, as_list
from vaultmem.sync.merge import MERGED_IDS, merge_set
from vaultmem.text.script import han_share

# Links and lists a repair unites into a kept note.
UNITED = ("sources", "source_messages", "entities", "tags")
# A tree needing more repairs than this is not the aftermath of a merge: left to the person.
MAX_REPAIRS = 500


@dataclass
class Memo:
    """What the repairs read of one memory note."""

    rel: str
    props: dict
    text: str
    supersedes: list[str] = field(default_factory=list)       # resolved vault paths
    superseded_by: list[str] = field(default_factory=list)

    def get(self, key) -> str:
        value = self.props.get(key)
        return "" if value is None or isinstance(value, list) else str(value)

    @property
    def active(self) -> bool:
        return self.get("status") in ("active", "")

    @property
    def said(self) -> tuple:
        """When it was said, for "the latest said stays": valid_from, created, id, path."""
        day = as_date(self.get("valid_from")) or as_date(self.get("created"))
        created = as_datetime(self.get("created"))
        return (day.isoformat() if day else "", created.isoformat() if created else "",
                self.get("id"), self.rel)


def read_memos(vault) -> dict[str, Memo]:
    """The vault's statement memories (facts, preferences, events, procedures) by path;
    notes that do not parse are left out (doctor reports them)."""
    memos = {}
    for note_type in STATEMENT_TYPES:
        folder = vault.folder_for(note_type)
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            memo = _read_memo(vault, path)
            if memo is not None:
                memos[memo.rel] = memo
    _link_up(memos, memos.values(), LinkResolver(vault.root))
    return memos


def _read_memo(vault, path: Path) -> Memo | None:
    rel = vault.rel(path)
    if not path.is_file() or not vault.is_memory_path(rel):
        return None
    try:
        text = path.read_bytes().decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
        found = read_properties(text, path)
    except (OSError, UnicodeDecodeError, VaultmemError):  # doctor's parse_errors says why
        return None
    return Memo(rel, found[0], statement_of(found[1])) if found else None


def _link_up(memos: dict[str, Memo], which, resolver: LinkResolver) -> None:
    """Resolve the supersede links of the memos `which` to paths among `memos`."""
    for memo in which:
        memo.supersedes, memo.superseded_by = [], []
        for key in ("supersedes", "superseded_by"):
            for value in as_list(memo.props.get(key)):
                target = resolver.resolve(parse_link(str(value)).target, memo.rel)
                if target in memos and target != memo.rel:
                    getattr(memo, key).append(target)


def plan(vault, memos: dict[str, Memo] | None = None, touching=None) -> list[dict]:
    """Every repair the tree needs now, as `{"kind", "message", "notes", "edits"}`; `edits`
    maps a path to `{"set": {key: value}, "add": {key: [link or value]}}`. `touching`: only
    the repairs that involve one of these paths (what a merge or a sync brought)."""
    memos = read_memos(vault) if memos is None else memos
    # All kinds are listed; `repair` carries out the first and plans again, since merging
    # duplicates changes which crossings and links are left.
    found = _duplicates(memos) + _crossings(memos) + _slots(memos) + _one_way(memos)
    if touching is not None:
        touching = set(touching)
        found = [r for r in found if touching.intersection(r["notes"])]
    return found


def _duplicates(memos: dict[str, Memo]) -> list[dict]:
    groups: dict[tuple, list[Memo]] = {}
    for memo in memos.values():
        if not memo.active or not memo.text:
            continue
        keys = [("text", memo.get("user"), memo.get("type"), normalise(memo.text))]
        subject, attribute, value = (memo.get(k).lower() for k in ("subject", "attribute", "value"))
        if subject and attribute and value:
            keys.append(("slot", memo.get("user"), subject, attribute, value))
        for key in keys:
            groups.setdefault(key, []).append(memo)
    repairs, done = [], set()
    for key in sorted(groups):
        members = sorted({m.rel: m for m in groups[key] if m.rel not in done}.values(), key=lambda m: m.said)
        if len(members) < 2:
            continue
        keep, others = members[0], members[1:]
        done.update(m.rel for m in members)
        adds = {k: [v for m in others for v in as_list(m.props.get(k))] for k in UNITED}
        adds[MERGED_IDS] = [i for m in others for i in [m.get("id"), *as_list(m.props.get(MERGED_IDS))] if i]
        adds["supersedes"] = [_link(m.rel) for m in others]
        edits = {keep.rel: {"set": _importance(members), "add": adds}}
        for other in others:
            edits[other.rel] = {"set": {"status": "superseded"}, "add": {"superseded_by": [_link(keep.rel)]}}
        _stamp(edits, members)
        names = ", ".join(f"'{_title(m.rel)}'" for m in others)
        repairs.append({"kind": "duplicate", "notes": [m.rel for m in members], "edits": edits,
                        "message": f"vaultmem: sync repair: {names} merged into '{_title(keep.rel)}' "
                                   "(one memory written on two devices)"})
    return repairs


def _crossings(memos: dict[str, Memo]) -> list[dict]:
    repairs, seen, claimed = [], set(), {}
    for memo in memos.values():   # who says it supersedes whom, looked up once (not n^2)
        for older in memo.supersedes:
            claimed.setdefault(older, set()).add(memo.rel)
    for rel in sorted(memos):
        successors = set(memos[rel].superseded_by) | claimed.get(rel, set())
        live = sorted((memos[s] for s in successors if memos[s].active), key=lambda m: m.said)
        if len(live) < 2 or tuple(m.rel for m in live) in seen:
            continue
        seen.add(tuple(m.rel for m in live))
        latest, earlier = live[-1], live[:-1]
        edits = _latest_stays(latest, earlier)
        first = as_date(live[0].get("valid_from"))
        ended = as_date(memos[rel].get("valid_to"))
        if first and ended and ended > first:   # it held until the first of them was said
            edits[rel] = {"set": {"valid_to": first}, "add": {}}
        _stamp(edits, live + [memos[rel]])
        names = ", ".join(f"'{_title(m.rel)}'" for m in earlier)
        repairs.append({"kind": "crossing", "notes": [rel] + [m.rel for m in live], "edits": edits,
                        "message": f"vaultmem: sync repair: {names} superseded by '{_title(latest.rel)}' "
                                   f"(both superseded '{_title(rel)}' on two devices; the later said stays)"})
    return repairs


def _slots(memos: dict[str, Memo]) -> list[dict]:
    groups: dict[tuple, list[Memo]] = {}
    for memo in memos.values():
        subject, attribute, value = (memo.get(k).strip().lower() for k in ("subject", "attribute", "value"))
        if memo.active and subject and attribute and value:
            groups.setdefault((memo.get("user"), subject, attribute), []).append(memo)
    repairs = []
    for key in sorted(groups):
        live = sorted(groups[key], key=lambda m: m.said)
        values = {m.get("value").strip().lower() for m in live}
        if len(values) < 2 or len({han_share(v) > 0 for v in values}) > 1:
            continue
        latest = live[-1]
        earlier = [m for m in live[:-1] if m.get("value").strip().lower() != latest.get("value").strip().lower()]
        if not earlier:
            continue
        edits = _latest_stays(latest, earlier)
        _stamp(edits, [latest, *earlier])
        names = ", ".join(f"'{_title(m.rel)}'" for m in earlier)
        repairs.append({"kind": "slot", "notes": [m.rel for m in earlier] + [latest.rel], "edits": edits,
                        "message": f"vaultmem: sync repair: {names} superseded by '{_title(latest.rel)}' "
                                   f"({key[2]}: two values learnt on two devices; the later said stays)"})
    return repairs


def _latest_stays(latest: Memo, earlier: list[Memo]) -> dict:
    """Edits that leave `latest` active and the `earlier` superseded by it, each valid
    until `latest` was said (unless it already has an end)."""
    edits = {latest.rel: {"set": {}, "add": {"supersedes": [_link(m.rel) for m in earlier]}}}
    until = as_date(latest.get("valid_from"))
    for memo in earlier:
        changes = {"status": "superseded"}
        if until and not memo.get("valid_to"):
            changes["valid_to"] = until
        edits[memo.rel] = {"set": changes, "add": {"superseded_by": [_link(latest.rel)]}}
    return edits


def _one_way(memos: dict[str, Memo]) -> list[dict]:
    repairs = []
    for rel in sorted(memos):
        memo = memos[rel]
        for newer in memo.superseded_by:
            if rel not in memos[newer].supersedes:
                repairs.append(_agree(memos, rel, newer))
        for older in memo.supersedes:
            old = memos[older]
            if rel not in old.superseded_by or (old.active and memo.active):
                repairs.append(_agree(memos, older, rel))
    unique = {}
    for repair in repairs:
        unique.setdefault(tuple(repair["notes"]), repair)
    return list(unique.values())


def _agree(memos, older: str, newer: str) -> dict:
    """Both links of `older` superseded by `newer`, and `older` retired if still active."""
    old, new = memos[older], memos[newer]
    changes = {"status": "superseded"} if old.active and new.active else {}
    edits = {older: {"set": changes, "add": {"superseded_by": [_link(newer)]}},
             newer: {"set": {}, "add": {"supersedes": [_link(older)]}}}
    _stamp(edits, [old, new])
    return {"kind": "chain", "notes": [older, newer], "edits": edits,
            "message": f"vaultmem: sync repair: '{_title(older)}' superseded by '{_title(newer)}' "
                       "on both notes (their links disagreed after a sync)"}


def _importance(members: list[Memo]) -> dict:
    values = []
    for memo in members:
        try:
            values.append(float(memo.get("importance")))
        except ValueError:
            continue
    return {"importance": round(max(values), 2)} if values else {}


def _stamp(edits: dict, memos: list[Memo]) -> None:
    """`updated`: the latest of the notes involved, not the clock (see the module docstring)."""
    times = [t for t in (as_datetime(m.get("updated")) for m in memos) if t is not None]
    if times:
        for edit in edits.values():
            edit["set"]["updated"] = max(times)


def _link(rel: str) -> str:
    return f"[[{Path(rel).stem}]]"


def _title(rel: str) -> str:
    return Path(rel).stem


def repair(memory, touching=None) -> dict:
    """Carry out `plan`, one commit per repair, until the tree needs none (`touching`: of
    the repairs involving those paths): `{"repairs": [{"kind", "message", "notes"}],
    "commits": [sha]}`. The vault is read once; after each repair only the notes it
    edited are read again."""
    from vaultmem.memory.memories import update_note
    from vaultmem.store.note import read_note
    from vaultmem.store.values import link

    vault, done, commits, tried = memory.vault, [], [], set()
    memos, resolver = read_memos(vault), None
    for _round in range(MAX_REPAIRS):
        pending = [p for p in plan(vault, memos, touching) if (p["kind"], tuple(p["notes"])) not in tried]
        if not pending:
            break
        step = pending[0]
        tried.add((step["kind"], tuple(step["notes"])))  # one that changed nothing is not retried
        with memory.change(step["message"], "repair") as change:
            for rel, edit in step["edits"].items():
                path = vault.abs(rel)
                note = read_note(path)
                changes = dict(edit["set"])
                for key, values in edit["add"].items():
                    new = [link(v[2:-2]) if str(v).startswith("[[") else str(v) for v in values]
                    merged = merge_set(None, note.meta.get(key), new)
                    if merged:
                        changes[key] = merged
                change.record(rel)
                update_note(vault, path, changes, expected_raw=note.raw)
        done.append({k: step[k] for k in ("kind", "message", "notes")})
        if change.commit:
            commits.append(change.commit)
        resolver = resolver or LinkResolver(vault.root)
        edited = []
        for rel in step["edits"]:
            memo = _read_memo(vault, vault.abs(rel))
            if memo is None:
                memos.pop(rel, None)
            else:
                memos[rel] = memo
                edited.append(memo)
        _link_up(memos, edited, resolver)
    return {"repairs": done, "commits": commits}
