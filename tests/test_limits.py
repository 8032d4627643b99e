"""vaultmem/store/limits.py: one set of size limits, the same on every path.

A note over MAX_NOTE_BYTES is refused with the same sentence by `reindex`, `doctor` and the
daemon (a real daemon process), and its old text leaves the index. A session too long for one
note is written as linked parts, each within the limits, and memories citing its turns
resolve to the part holding the turn.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.wait import wait_for as wait
from vaultmem.api import Memory, init
from vaultmem.errors import DaemonError
from vaultmem.extract.importers import load_transcript
from vaultmem.extract.sessions import message_link, render_session_parts, split_session
from vaultmem.ipc import client
from vaultmem.store import limits
from vaultmem.store.note import parse_note
from vaultmem.store.session_note import parse_session_turns

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
GARDEN = "Memory/Facts/Garden.md"
KITCHEN = "Memory/Facts/Kitchen.md"


def note_text(note_id, body):
    return (f"---\nid: {note_id}\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
            f"updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n{body}\n")


def daemon(vault, action):
    done = subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", action, "--json"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for(predicate, what="condition"):
    """`tests.helpers.wait.wait_for`, taking a daemon still building its index ("busy") as
    not yet."""
    def answered():
        try:
            return predicate()
        except DaemonError as exc:
            if "busy" not in str(exc):
                raise
            return False
    return wait(answered, what)


def daemon_finds(vault, query, rel) -> bool:
    return any(h["path"] == rel for h in client.request(vault, "search", {"query": query, "k": 20})["hits"])


def log_text(vault):
    log = vault / ".vaultmem" / "daemon.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def grow(path: Path, size: int) -> None:
    """Append plain prose to the note until it is `size` bytes (the frontmatter stays valid)."""
    filler = "The quick brown fox jumps over the lazy dog near the river bank today.\n"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + filler * ((size - len(text)) // len(filler) + 1), encoding="utf-8")


def found(memory, query, rel) -> bool:
    return any(h["path"] == rel for h in memory.search(query, k=20)["hits"])


def test_limits_read_plainly():
    assert limits.note_too_large(limits.MAX_NOTE_BYTES) is None
    assert limits.note_too_large(limits.MAX_NOTE_BYTES + 1) == (
        "file is 2.1 MB, over the 2 MB limit for a note — split it into smaller notes")
    # A session part fits a note with room to spare, and its ids fit the frontmatter limit.
    assert limits.MAX_SESSION_NOTE_BYTES < limits.MAX_NOTE_BYTES
    assert limits.MAX_SESSION_TURNS * 50 < limits.MAX_FRONTMATTER_BYTES


def test_a_3mb_note_is_refused_alike_by_reindex_doctor_and_the_daemon(tmp_path, embedder):
    root = tmp_path / "vault"
    init(root)
    garden = root / GARDEN
    garden.write_text(note_text("01JGARDEN0000000000000000A", "The user grows heirloom tomatoes on the balcony."))
    memory = Memory(root, embedder=embedder)
    memory.reindex()
    assert found(memory, "heirloom tomatoes on the balcony", GARDEN)

    grow(garden, 3 * 1024 * 1024)
    reason = limits.note_too_large(garden.stat().st_size)
    assert re.match(r"file is 3\.\d MB, over the 2 MB limit for a note", reason)
    refused = {"path": GARDEN, "reason": reason}
    # doctor, before the index caught up: the note is listed, and its indexed text is stale.
    report = memory.doctor()
    assert refused in report["parse_errors"] and GARDEN in report["drift"]["stale"] and not report["ok"]
    # reindex says the same, and removes the old text: nothing stale stays searchable.
    result = memory.reindex()
    assert refused in result["errors"] and result["removed"] == 1
    assert not found(memory, "heirloom tomatoes on the balcony", GARDEN)
    report = memory.doctor()
    assert refused in report["parse_errors"] and not any(report["drift"].values())
    assert refused in memory.reindex()["errors"]  # said every time, never silently skipped

    # The daemon, at startup, and for a note that grows while it watches.
    kitchen = root / KITCHEN
    kitchen.write_text(note_text("01JKITCHEN000000000000000A", "The user bakes sourdough bread on Sundays."))
    assert daemon(root, "start")["started"]
    try:
        wait_for(lambda: client.request(root, "status")["state"] == "watching", what="watching")
        wait_for(lambda: f"skipped {GARDEN}: {reason}" in log_text(root), what="the startup scan's refusal")
        wait_for(lambda: daemon_finds(root, "sourdough bread on Sundays", KITCHEN), what="the small note indexed")
        grow(kitchen, 3 * 1024 * 1024)
        kitchen_reason = limits.note_too_large(kitchen.stat().st_size)
        wait_for(lambda: f"skipped {KITCHEN}: {kitchen_reason}" in log_text(root), what="the refusal")
        wait_for(lambda: not daemon_finds(root, "sourdough bread on Sundays", KITCHEN),
                 what="the grown note's old text gone from search")
        status = client.request(root, "status")
        assert status["last_error"]["path"] in (GARDEN, KITCHEN)
        assert status["last_error"]["reason"].endswith("over the 2 MB limit for a note — split it into smaller notes")
        # Back within the limit, it is indexed again.
        kitchen.write_text(note_text("01JKITCHEN000000000000000A", "The user bakes rye bread on Saturdays."))
        wait_for(lambda: daemon_finds(root, "rye bread on Saturdays", KITCHEN), what="the note indexed again")
    finally:
        daemon(root, "stop")


# --- session notes: a long session is written as linked parts within the limits ---------

def long_transcript(path: Path, turns: int, words: int) -> Path:
    lines = []
    for n in range(turns):
        role = "user" if n % 2 == 0 else "assistant"
        text = (f"My sister Maya lives in Lisbon and works as a nurse." if n == turns - 2 else
                f"Turn {n}: " + " ".join(f"word{(n * 7 + i) % 997}" for i in range(words)))
        lines.append(json.dumps({"session": "marathon", "id": f"m-{n}", "time": f"2026-11-29T10:{n % 60:02d}:00",
                                 "role": role, "text": text}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_long_session_is_split_into_linked_parts_within_the_limits(tmp_path):
    (session,) = load_transcript(long_transcript(tmp_path / "long.jsonl", 2500, 60))
    notes = render_session_parts(session)
    assert len(notes) >= 3  # 2,500 turns: over MAX_SESSION_TURNS, and over the byte cap
    titles = [n.title for n in notes]
    assert titles[0] == "2026-11-29 marathon" and titles[1] == "2026-11-29 marathon part 2"
    turns = []
    for i, note in enumerate(notes):
        size = len(note.text.encode("utf-8"))
        assert size <= limits.MAX_SESSION_NOTE_BYTES
        parsed = parse_note(note.text)
        assert parsed.meta["part"] == i + 1 and parsed.meta["session"] == "marathon"
        part_turns = parse_session_turns(parsed.body)
        assert 0 < len(part_turns) <= limits.MAX_SESSION_TURNS
        assert [str(m) for m in parsed.meta["message_ids"]] == list(note.block_ids)
        # Each part links to its neighbours by their titles.
        links = re.findall(r"^Continued (from|in) \[\[(.+)\]\]$", parsed.body, re.M)
        assert links == ([("from", titles[i - 1])] if i > 0 else []) + (
            [("in", titles[i + 1])] if i < len(notes) - 1 else [])
        turns += part_turns
    assert [t.block_id for t in turns] == [f"m-{n}" for n in range(2500)]  # every turn once, in order


def test_a_turn_too_long_for_a_part_is_cut_into_pieces_that_keep_its_message_id(tmp_path):
    path = tmp_path / "huge.jsonl"
    long_line = "lorem ipsum dolor sit amet " * 40_000  # ~1 MB in one line
    path.write_text("\n".join(json.dumps({"session": "s", "id": i, "role": "user", "text": t})
                              for i, t in (("a", "hello"), ("b", long_line), ("c", "bye"))) + "\n")
    (session,) = load_transcript(path)
    parts, _ = split_session(session)
    assert len(parts) >= 3
    notes = render_session_parts(session)
    assert all(len(n.text.encode("utf-8")) <= limits.MAX_SESSION_NOTE_BYTES for n in notes)
    texts = [t.text for n in notes for t in parse_session_turns(parse_note(n.text).body)]
    assert re.sub(r"\s", "", "".join(texts[1:-1])) == long_line.replace(" ", "")  # cut, nothing lost
    ids = [str(m) for n in notes for m in parse_note(n.text).meta["message_ids"]]
    assert ids[0] == "a" and ids[-1] == "c" and set(ids[1:-1]) == {"b"}


def test_parts_written_to_a_vault_resolve_every_turn_link(tmp_path):
    """Links to turns, as memory notes' `sources` carry them, open the part holding the turn
    (checked by doctor's own link check: the note and the `#^block` exist)."""
    from vaultmem.doctor import broken_links
    from vaultmem.store.vault import Vault

    root = tmp_path / "vault"
    init(root)
    vault = Vault(root)
    (session,) = load_transcript(long_transcript(tmp_path / "long.jsonl", 1200, 20))
    notes = render_session_parts(session)
    assert len(notes) == 2
    folder = vault.folder_for("session")
    links = []
    for note in notes:
        (folder / f"{note.title}.md").write_text(note.text, encoding="utf-8")
        rel = Path(vault.rel(folder / f"{note.title}.md")).relative_to(vault.config.memory_root)
        links += [message_link(rel.with_suffix("").as_posix(), block) for block in note.block_ids.values()]
    memory_note = (note_text("01JMAYA0000000000000000A", "The user's sister Maya lives in Lisbon.")
                   .replace("user: default\n", "user: default\nsources:\n" +
                            "".join(f'  - "{link}"\n' for link in links)))
    (root / "Memory" / "Facts" / "Maya.md").write_text(memory_note, encoding="utf-8")
    notes_by_rel = {vault.rel(p): (None, parse_note(p.read_text(encoding="utf-8"))) for p in vault.iter_notes()}
    assert len(links) == 1200 and broken_links(vault, notes_by_rel) == []
    assert any("part 2#^m-1199" in link for link in links)


def test_extract_writes_a_long_session_as_parts_and_its_memories_cite_the_right_part(
        tmp_path, embedder, monkeypatch):
    # 10 turns a part instead of 1,000: the same code path, without embedding 1,200 turns.
    monkeypatch.setattr(limits, "MAX_SESSION_TURNS", 10)
    root = tmp_path / "vault"
    init(root)
    memory = Memory(root, embedder=embedder)
    transcript = long_transcript(tmp_path / "long.jsonl", 16, 20)
    report = memory.extract([transcript])
    sessions = sorted((root / "Memory" / "Sessions").glob("*.md"), key=lambda p: p.stem)
    assert [p.stem for p in sessions] == ["2026-11-29 marathon", "2026-11-29 marathon part 2"]
    assert all(p.stat().st_size <= limits.MAX_SESSION_NOTE_BYTES for p in sessions)
    maya = [p for p in (root / "Memory").rglob("*.md") if "Lisbon" in p.read_text(encoding="utf-8")
            and not {"Sessions", "Entities"} & set(p.parts)]  # the memory, not the session or a hub
    assert maya, report.to_dict() if hasattr(report, "to_dict") else report
    source = parse_note(maya[0].read_text(encoding="utf-8")).meta["sources"][0]
    assert re.fullmatch(r"\[\[Sessions/2026-11-29 marathon part 2#\^m-14\]\]", source)
    assert memory.doctor()["broken_links"] == []

    # Re-extracting the same transcript finds both parts again: nothing new, same ids.
    before = {p.name: p.read_bytes() for p in sessions}
    again = memory.extract([transcript])
    assert not any("Sessions" in rel for rel in again["notes"]) and again["created"] == 0
    assert {p.name: p.read_bytes() for p in (root / "Memory" / "Sessions").glob("*.md")} == before
    assert memory.doctor()["broken_links"] == []


def test_a_later_export_keeps_the_parts_ids_and_names_adds_parts_and_deletes_surplus_ones(
        tmp_path, embedder, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SESSION_TURNS", 10)  # few turns keep the embedding short
    root = tmp_path / "vault"
    init(root)
    memory = Memory(root, embedder=embedder)
    folder = root / "Memory" / "Sessions"
    memory.extract([long_transcript(tmp_path / "long.jsonl", 16, 20)])
    ids = {p.stem: parse_note(p.read_text(encoding="utf-8")).id for p in folder.glob("*.md")}
    # The part 2 name is taken elsewhere in the vault: the new part 3 gets a free name and
    # part 2 links to it by that name.
    (root / "Memory" / "Facts" / "2026-11-29 marathon part 3.md").write_text(
        note_text("01JTAKEN00000000000000000A", "A note that took the name."), encoding="utf-8")
    report = memory.extract([long_transcript(tmp_path / "longer.jsonl", 26, 20)])
    parts = {p.stem: parse_note(p.read_text(encoding="utf-8")) for p in folder.glob("*.md")}
    assert sorted(parts) == ["2026-11-29 marathon", "2026-11-29 marathon part 2", "2026-11-29 marathon part 3 2"]
    assert {stem: parts[stem].id for stem in ids} == ids
    assert [parts[stem].meta["part"] for stem in sorted(parts)] == [1, 2, 3]
    assert "Continued in [[2026-11-29 marathon part 3 2]]" in parts["2026-11-29 marathon part 2"].body
    assert "Continued from [[2026-11-29 marathon part 2]]" in parts["2026-11-29 marathon part 3 2"].body
    assert [m for stem in sorted(parts) for m in parts[stem].meta["message_ids"]] == [f"m-{n}" for n in range(26)]
    assert "Memory/Sessions/2026-11-29 marathon part 3 2.md" in report["notes"]
    assert memory.doctor()["broken_links"] == []

    # With room for the whole session in one note, the first part holds it all (no `part`),
    # the others are deleted, and the memory citing a turn of part 2 now cites part 1.
    monkeypatch.setattr(limits, "MAX_SESSION_TURNS", 1000)
    memory.extract([long_transcript(tmp_path / "longest.jsonl", 27, 20)])
    (only,) = folder.glob("*.md")
    note = parse_note(only.read_text(encoding="utf-8"))
    assert only.stem == "2026-11-29 marathon" and note.id == ids["2026-11-29 marathon"]
    assert "part" not in note.meta and len(note.meta["message_ids"]) == 27
    sources = [s for p in (root / "Memory").rglob("*.md") if "Sessions" not in p.parts
               for s in parse_note(p.read_text(encoding="utf-8")).meta.get("sources") or []]
    assert "[[Sessions/2026-11-29 marathon#^m-14]]" in sources and not any("part" in s for s in sources)
    assert memory.doctor()["broken_links"] == []
