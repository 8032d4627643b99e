"""Health checks: vault/index drift, unreadable notes, broken links, contradictions; stats.

    >>> report = doctor(vault)                # doctest: +SKIP
    >>> report["ok"], report["drift"]["stale"]  # doctest: +SKIP
    (False, ['Memory/Facts/Tea.md'])

`ok` is False when the index drifted from the vault (missing, stale or orphaned rows) or a
note cannot be parsed; broken links and contradictions are reported as warnings. A note over
`limits.MAX_NOTE_BYTES` is listed in `parse_errors` with the reason every path gives it, and,
while the index still holds rows of it, as `stale` (the next sync removes them). `llm` says
which model writes the memory and when it last answered (`extract.model_report`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from vaultmem.errors import IndexUnavailable, VaultmemError
from vaultmem.index.chunking import as_list, as_text
from vaultmem.index.table import ChunkIndex
from vaultmem.store.limits import note_too_large
from vaultmem.store.links import LinkResolver, parse_link, wikilinks
from vaultmem.store.note import content_hash, parse_note_bytes

LINK_PROPERTIES = ("entities", "sources", "supersedes", "superseded_by")
# Two active memories of one subject this similar are probably two versions of one fact.
CONTRADICTION_SIMILARITY = 0.8


def _scan(vault):
    """(rel -> (hash, note)) of parseable notes, [(rel, reason)] of the others, and the
    set of those refused for their size (not read: the size alone decides, as in the indexer)."""
    notes, errors, oversized = {}, [], set()
    for path in vault.iter_notes():
        rel = vault.rel(path)
        try:
            too_large = note_too_large(Path(path).stat().st_size)
            if too_large:
                errors.append((rel, too_large))
                oversized.add(rel)
                continue
            data = Path(path).read_bytes()
            notes[rel] = (content_hash(data), parse_note_bytes(data, path))
        except OSError as exc:
            errors.append((rel, f"cannot read: {exc.strerror}"))
        except VaultmemError as exc:
            errors.append((rel, getattr(exc, "reason", None) or str(exc)))
    return notes, errors, oversized


def broken_links(vault, notes, resolver=None) -> list[dict]:
    """Wikilinks in memory notes (body and link properties) that Obsidian cannot open:
    no such note (an alias alone included, see `links`), heading or block."""
    resolver = resolver or LinkResolver(vault.root)
    broken = []
    for rel, (_, note) in notes.items():
        if as_text(note.meta.get("type")) == "session":
            continue
        links = wikilinks(note.body or "")
        for key in LINK_PROPERTIES:
            links += [found for value in as_list(note.meta.get(key))
                      for found in wikilinks(str(value)) or [parse_link(str(value))]]
        for link in links:
            reason = resolver.problem(link, rel)
            if reason:
                broken.append({"path": rel, "link": link.raw, "reason": reason})
    return broken


def contradictions(vault, notes, index: ChunkIndex | None, resolver=None) -> list[dict]:
    """Pairs of active memories about the same subject.

    Same subject means: the same `subject`+`attribute` properties, one `supersedes` the
    other while both are still active, or (with an index) the same type, a shared entity
    and vectors closer than CONTRADICTION_SIMILARITY (similarity alone is not a subject:
    an English model puts any two Chinese sentences close together).
    """
    from vaultmem.retrieve.current import slot_of

    active = {rel: note for rel, (_, note) in notes.items()
              if as_text(note.meta.get("type")) not in ("session", "entity", "")
              and as_text(note.meta.get("status")) in ("active", "")}
    found, seen = [], set()

    def add(a, b, reason):
        key = tuple(sorted((a, b)))
        if a != b and key not in seen:
            seen.add(key)
            found.append({"paths": list(key), "reason": reason})

    by_subject: dict = {}
    read_from_text: dict = {}   # slots read from statements (`current.slot_of`): their values
    for rel, note in active.items():
        subject, attribute = as_text(note.meta.get("subject")), as_text(note.meta.get("attribute"))
        if subject and attribute:
            key = (as_text(note.meta.get("user")), subject, attribute)
            by_subject.setdefault(key, []).append(rel)
        else:
            slot = slot_of(note.statement())   # read from the statement, as `context` reads it
            if slot is not None:
                key = (as_text(note.meta.get("user")), *slot[:2])
                by_subject.setdefault(key, []).append(rel)
                read_from_text[rel] = slot[2]
    for (_, subject, attribute), rels in by_subject.items():
        for other in rels[1:]:
            values = {read_from_text.get(r) for r in (rels[0], other)}
            if None not in values and len(values) == 1:
                continue   # the same value said twice, both read from their statements
            add(rels[0], other, f"both active for {subject} / {attribute}")
    resolver = resolver or LinkResolver(vault.root)
    for rel, note in active.items():
        for key in ("supersedes", "superseded_by"):
            for value in as_list(note.meta.get(key)):
                other = resolver.resolve(parse_link(str(value)).target, rel)
                if other in active:
                    add(rel, other, f"{key} link but both are active")
    if index is not None:
        _similar_pairs(index, add)
    return found


def _similar_pairs(index: ChunkIndex, add) -> None:
    import numpy as np

    snap = index.snapshot()
    cols = snap.columns
    rows = np.flatnonzero((cols["status"] == "active") & (cols["type"] != "session")
                          & (cols["type"] != "entity"))
    if len(rows) < 2:
        return
    vectors = snap.vectors[rows]
    for start in range(0, len(rows), 1024):  # blocks keep memory flat on big vaults
        sims = vectors[start:start + 1024] @ vectors.T
        for i, j in zip(*np.nonzero(sims >= CONTRADICTION_SIMILARITY)):
            a, b = rows[start + i], rows[j]
            if a >= b or cols["path"][a] == cols["path"][b]:
                continue
            shared = set(cols["entities"][a].strip("|").split("|")) & set(
                cols["entities"][b].strip("|").split("|")) - {""}
            if shared and cols["type"][a] == cols["type"][b] and cols["user"][a] == cols["user"][b]:
                add(cols["path"][a], cols["path"][b], f"similar {cols['type'][a]} memories "
                    f"(cosine {float(sims[i, j]):.2f}) both active")


def doctor(vault) -> dict:
    """Compare vault and index, and check notes. See the module docstring for `ok`."""
    from vaultmem.extract import model_report

    notes, parse_errors, oversized = _scan(vault)
    index = ChunkIndex(vault.root)
    index.hits_on_demand = True   # the similar pairs read filter columns and vectors alone
    index_error = None
    try:
        index.check_model(vault.config.model)
        indexed = index.path_hashes()
    except (IndexUnavailable, OSError, ValueError, RuntimeError) as exc:
        index_error, indexed, index = str(exc), {}, None
    unparsed = {rel for rel, _ in parse_errors}
    hashes = {rel: h for rel, (h, _) in notes.items()}
    own, own_oversized = _own_notes(vault)     # the person's notes: hashed, never parsed
    hashes.update(own)
    oversized |= own_oversized
    # The indexer keeps the rows of a note that stopped parsing, but removes an oversized one's.
    drift = {
        "missing": sorted(rel for rel in hashes if rel not in indexed),
        "stale": sorted([rel for rel, h in hashes.items() if rel in indexed and indexed[rel] != h]
                        + [rel for rel in oversized if rel in indexed]),
        "orphaned": sorted(rel for rel in indexed if rel not in hashes and rel not in unparsed
                           and rel not in oversized),
    }
    has_drift = any(drift.values()) or index_error is not None
    resolver = LinkResolver(vault.root)
    return {
        "ok": not has_drift and not parse_errors,
        "notes": len(notes) + len(parse_errors),
        "user_notes": len(own) + len(own_oversized),
        "index_error": index_error,
        "drift": drift,
        "parse_errors": [{"path": p, "reason": r} for p, r in parse_errors],
        "broken_links": broken_links(vault, notes, resolver),
        "contradictions": contradictions(vault, notes, index, resolver),
        "model_advice": model_advice(vault, notes),
        "sync": sync_findings(vault, notes),
        "llm": model_report(vault.config, vault.state_dir),
    }


def sync_findings(vault, notes) -> dict:
    """What a vault kept on several devices needs (warnings: `ok` does not change):
    `merge_driver` problems, what git does not ignore but should (`ignores`: `.vaultmem/`,
    Obsidian's `.trash/`), sync tools' `conflict_copies`, `merge_conflicts` (notes whose
    two devices' texts the merge driver kept side by side) and the `repairs` that
    `doctor --fix` would make (`reconcile.plan`)."""
    from vaultmem.sync import reconcile
    from vaultmem.sync import remote as sync
    from vaultmem.sync.merge import CONFLICT_MARK

    return {
        "merge_driver": sync.driver_problems(vault),
        "ignores": sync.ignore_problems(vault),
        "conflict_copies": sync.conflict_copies(vault),
        "merge_conflicts": sorted(rel for rel, (_, note) in notes.items() if CONFLICT_MARK in (note.body or "")),
        "repairs": [{k: r[k] for k in ("kind", "message", "notes")} for r in reconcile.plan(vault)],
    }


def _own_notes(vault) -> tuple[dict, set]:
    """(rel -> content hash) of the person's notes in scope, and those over the size limit."""
    hashes, oversized = {}, set()
    for path in vault.iter_user_notes():
        rel = vault.rel(path)
        try:
            if note_too_large(Path(path).stat().st_size):
                oversized.add(rel)
                continue
            hashes[rel] = content_hash(Path(path).read_bytes())
        except OSError:
            continue   # gone or unreadable meanwhile: the indexer reports it
    return hashes, oversized


def model_advice(vault, notes) -> str | None:
    """A hint when the vault's memories are mostly Chinese, Japanese or Korean but its model
    reads English only (a vault made before the multilingual model, or on an English
    locale); None otherwise. A warning: `ok` does not change."""
    from vaultmem.store.config import MULTILINGUAL_MODEL, MULTILINGUAL_MODELS
    from vaultmem.store.languages import CJK_VAULT_SHARE, SAMPLE_BYTES, SAMPLE_FILES, cjk_share

    if vault.config.model in MULTILINGUAL_MODELS:
        return None
    sample = "\n".join((note.body or "")[:SAMPLE_BYTES] for _, note in list(notes.values())[:SAMPLE_FILES])
    share = cjk_share(sample)
    if share < CJK_VAULT_SHARE:
        return None
    return (f"{share:.0%} of the memory notes' text is Chinese, Japanese or Korean, which "
            f"{vault.config.model} does not read: `vaultmem init --model {MULTILINGUAL_MODEL}` "
            "then `vaultmem reindex` switches this vault to the multilingual model")


def stats(vault) -> dict:
    """Notes by type and status and the index's size. Counts come from the index when it
    is usable (a 100k-note vault is not re-parsed), else from the vault's frontmatter."""
    index = ChunkIndex(vault.root)
    files = sum(1 for _ in vault.iter_notes())
    info = {"exists": index.exists(), "chunks": 0, "notes": 0, "bytes": 0, "model": None, "dim": None}
    per_note, counted_from = None, "vault"
    if info["exists"]:
        meta = index.meta() or {}
        info.update(model=meta.get("model"), dim=meta.get("dim"), bytes=index.size_bytes())
        try:
            rows = index.rows(columns=["path", "type", "status"])
            info["chunks"] = len(rows)
            per_note = {r["path"]: (r["type"], r["status"]) for r in rows}
            info["notes"], counted_from = len(per_note), "index"
        except (IndexUnavailable, OSError, ValueError, RuntimeError) as exc:
            info["error"] = str(exc)
    if per_note is None:
        notes, _, _ = _scan(vault)
        per_note = {rel: (as_text(n.meta.get("type")) or "untyped",
                          as_text(n.meta.get("status")) or "active") for rel, (_, n) in notes.items()}
    memories = [(t, s) for t, s in per_note.values() if t != "note"]   # not the person's notes
    by_type = Counter(t for t, _ in memories)
    by_status = Counter(s for _, s in memories)
    return {"notes": files, "user_notes": sum(1 for _ in vault.iter_user_notes()), "counted_from": counted_from,
            "by_type": dict(sorted(by_type.items())), "by_status": dict(sorted(by_status.items())),
            "index": info}
