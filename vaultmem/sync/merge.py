"""git's merge driver for memory notes: two devices' edits of one note merged by field.

    $ git config merge.vaultmem.driver "python -m vaultmem merge-driver %O %A %B %P"
    $ cat Memory/.gitattributes
    *.md merge=vaultmem

A note synced by git and changed on two devices (an extraction added a source on one, the
person raised its importance on the other) conflicts line by line in its frontmatter, where
both sides touched neighbouring lines. Merged by meaning instead: lists of links, tags and
message ids are united, `importance` is the higher, `created` the earlier, `updated` the
later, a retired status wins over an active one; any other property is ours unless only
theirs changed it. The bodies get git's own 3-way merge; when both sides rewrote the same
lines, both texts are kept (theirs in a callout under ours, `CONFLICT_MARK`) and the note
is listed by `doctor` until the person keeps one. Two devices creating the same title
(git gives an empty base) get one id: the earlier `created`, then the smaller id; the
other id stays in `merged_ids`, which `Vault.resolve` also answers to.

A note that does not parse is left to git: conflict markers, exit status 1, no text lost.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from vaultmem.errors import NoteParseError
from vaultmem.store.note import parse_note, render_note
from vaultmem.store.values import as_datetime, link_target

# Lists merged as ordered sets: ours first, then what theirs added.
SET_KEYS = ("sources", "source_messages", "message_ids", "entities", "tags", "aliases", "supersedes",
            "superseded_by", "merged_ids")
# The later status of a memory's life wins: a retirement on either device stands.
STATUS_RANK = {"active": 0, "archived": 1, "superseded": 2}
MERGED_IDS = "merged_ids"
CONFLICT_MARK = "vaultmem merge: this note was edited on two devices"
CALLOUT = f"> [!warning] {CONFLICT_MARK}; keep one version and delete the other"


def merge_note_texts(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """`(merged text, bodies_conflicted)` of three versions of a note (`base` "" when both
    created it). NoteParseError when a version (other than an empty base) cannot be read."""
    ours_note = parse_note(ours, "ours")
    theirs_note = parse_note(theirs, "theirs")
    base_note = parse_note(base, "base") if base.strip() else None
    if not (ours_note.meta and theirs_note.meta):
        raise NoteParseError("ours" if not ours_note.meta else "theirs", "no frontmatter to merge by field")
    merge_meta(base_note.meta if base_note else {}, ours_note.meta, theirs_note.meta)
    body, conflicted = merge_bodies(base_note.body if base_note else "", ours_note.body, theirs_note.body)
    ours_note.body = body
    return render_note(ours_note), conflicted


def merge_meta(base: dict, ours, theirs: dict) -> None:
    """Merge `theirs` into `ours` (a round-trip map: its order, quoting and comments stay)."""
    _merge_ids(ours, theirs)
    for key in list(theirs):
        if key in SET_KEYS:
            _set_key(ours, key, merge_set(base.get(key), ours.get(key), theirs.get(key)))
        elif key == "importance":
            _set_key(ours, key, _max_number(ours.get(key), theirs.get(key)))
        elif key in ("created", "updated"):
            _set_key(ours, key, _pick_time(ours.get(key), theirs.get(key), latest=key == "updated"))
        elif key == "status":
            _set_key(ours, key, max((ours.get(key), theirs.get(key)), key=_status_rank))
        elif key != "id" and _same(ours.get(key), base.get(key)) and not _same(theirs.get(key), base.get(key)):
            _insert_like(ours, theirs, key)
    for key in list(ours):
        if key in base and key not in theirs and key != "id" and _same(ours[key], base[key]):
            del ours[key]  # theirs removed it, ours left it as it was


def _merge_ids(ours, theirs: dict) -> None:
    """One id for a note both devices created: the one that came with the earlier
    `created`, then the smaller; the other kept in `merged_ids` (so that commands and
    reports naming it still find the note)."""
    mine, other = str(ours.get("id") or ""), str(theirs.get("id") or "")
    if not other or other == mine:
        return
    if not mine:
        ours["id"] = theirs["id"]
        return

    def order(created, note_id):
        when = as_datetime(created)
        return (when is None, when.isoformat() if when else "", note_id)

    keep_theirs = order(theirs.get("created"), other) < order(ours.get("created"), mine)
    if keep_theirs:
        ours["id"] = theirs["id"]
    lost = mine if keep_theirs else other
    ours[MERGED_IDS] = merge_set(None, ours.get(MERGED_IDS), _as_list(theirs.get(MERGED_IDS)) + [lost])


def _status_rank(status) -> int:
    return -2 if status is None else STATUS_RANK.get(str(status), -1)


def merge_set(base, ours, theirs) -> list | None:
    """Ours in order, then theirs' new items; an item one side removed from `base` (and the
    other kept) stays removed. Links compare by target, other values as text."""
    base_l, ours_l, theirs_l = (_as_list(v) for v in (base, ours, theirs))
    keys = {_key(v) for v in base_l}
    ours_keys, theirs_keys = {_key(v) for v in ours_l}, {_key(v) for v in theirs_l}
    out, seen = [], set()
    for value in ours_l + theirs_l:
        key = _key(value)
        if key in seen or (key in keys and (key not in ours_keys or key not in theirs_keys)):
            continue
        seen.add(key)
        out.append(value)
    if not out and ours is None and theirs is None:
        return None
    return out


def merge_bodies(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """git's 3-way merge of the bodies; where both sides changed the same lines, ours then
    theirs in a callout (`CALLOUT`), and True."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    merged, clean = _merge_file(ours, base, theirs, "ours", "base", "theirs")
    if clean:
        return merged, False
    quoted = "\n".join(f"> {line}" if line else ">" for line in theirs.rstrip("\n").split("\n"))
    return (ours.rstrip("\n") + "\n\n" + CALLOUT + "\n> The other device's version:\n>\n"
            + quoted + "\n"), True


def _merge_file(ours: str, base: str, theirs: str, *labels) -> tuple[str, bool]:
    """`git merge-file -p` of three texts: (result with conflict markers if any, clean)."""
    with tempfile.TemporaryDirectory(prefix="vaultmem-merge-") as scratch:
        paths = []
        for name, text in zip(("ours", "base", "theirs"), (ours, base, theirs)):
            path = os.path.join(scratch, name)
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            paths.append(path)
        args = [arg for label in labels for arg in ("-L", label)]
        done = subprocess.run(["git", "merge-file", "-p", *args, *paths], capture_output=True)
    if done.returncode < 0 or done.returncode > 127:
        raise OSError(f"git merge-file failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "surrogateescape"), done.returncode == 0


def run_driver(base_path: str, ours_path: str, theirs_path: str, name: str = "") -> int:
    """What git runs for `%O %A %B %P`: the merged note written over `ours_path`; 0 when
    merged (a body conflict is kept inside the note), 1 with git's conflict markers in
    `ours_path` when a version cannot be read as a note (nothing is lost either way)."""
    texts = []
    for path in (base_path, ours_path, theirs_path):
        with open(path, "rb") as handle:
            texts.append(handle.read())
    try:
        base, ours, theirs = (data.decode("utf-8") for data in texts)
        merged, _conflicted = merge_note_texts(base, ours, theirs)
    except (UnicodeDecodeError, NoteParseError):
        label = name or "note"
        base, ours, theirs = (t.decode("utf-8", "surrogateescape") for t in texts)
        result, clean = _merge_file(ours, base, theirs, f"{label} (this device)",
                                    f"{label} (common ancestor)", f"{label} (other device)")
        _write(ours_path, result.encode("utf-8", "surrogateescape"))
        return 0 if clean else 1
    _write(ours_path, merged.encode("utf-8"))
    return 0


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


# --- small value helpers -----------------------------------------------------------------
def _as_list(value) -> list:
    if value in (None, ""):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _key(value) -> str:
    return str(link_target(value)) if isinstance(value, str) else str(value)


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return None if value is None else str(value)


def _same(a, b) -> bool:
    return _plain(a) == _plain(b)


def _max_number(a, b):
    numbers = [v for v in (a, b) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return max(numbers) if numbers else (a if a is not None else b)


def _pick_time(a, b, latest: bool):
    """The later (or earlier) of two date-times, as its side wrote it; an unreadable one loses."""
    ta, tb = as_datetime(a), as_datetime(b)
    if ta is None or tb is None:
        return a if ta is not None or tb is None else b
    return (b if tb > ta else a) if latest else (b if tb < ta else a)


def _set_key(meta, key, value) -> None:
    """Set a merged value; one equal to ours is left as ours wrote it (comments, style)."""
    if value is not None and not (key in meta and _same(meta[key], value)):
        meta[key] = value


def _insert_like(ours, theirs: dict, key) -> None:
    """Take theirs' value; a key ours lacks goes after the key theirs has before it."""
    if key in ours:
        ours[key] = theirs[key]
        return
    order = list(theirs)
    before = [k for k in order[:order.index(key)] if k in ours]
    at = list(ours).index(before[-1]) + 1 if before else 0
    ours.insert(at, key, theirs[key])
