import json

import pytest
from click.testing import CliRunner
from conftest import memory_meta, write_note

from vaultmem.api import Memory
from vaultmem.cli import cli
from vaultmem.doctor import doctor, stats


@pytest.fixture
def memory(sample_vault, embedder):
    mem = Memory(sample_vault.root, embedder=embedder)
    mem.reindex()
    return mem


def test_clean_vault_after_reindex_has_no_drift(memory):
    report = memory.doctor()
    assert report["ok"] is True and report["index_error"] is None
    assert report["drift"] == {"missing": [], "stale": [], "orphaned": []}
    assert report["parse_errors"] == [] and report["contradictions"] == []


def test_drift_is_reported_and_reindex_fixes_it(memory):
    root = memory.vault.root
    coffee = root / "Memory/Preferences/Cutting back on coffee.md"
    coffee.write_text(coffee.read_text().replace("less of it", "none at all"))
    (root / "Memory/Facts/Has a dog named Biscuit.md").unlink()
    write_note(root, "Memory/Facts/Plays chess.md", memory_meta("01CHESS"), "The user plays chess.")
    report = doctor(memory.vault)
    assert report["ok"] is False
    assert report["drift"] == {"missing": ["Memory/Facts/Plays chess.md"],
                               "stale": ["Memory/Preferences/Cutting back on coffee.md"],
                               "orphaned": ["Memory/Facts/Has a dog named Biscuit.md"]}
    memory.reindex()
    assert doctor(memory.vault)["drift"] == {"missing": [], "stale": [], "orphaned": []}


def test_unparseable_notes_broken_links_and_contradictions(memory):
    root = memory.vault.root
    (root / "Memory/Facts/Broken.md").write_text("---\ntype: [fact\n---\nx\n")
    write_note(root, "Memory/Facts/Lives in Porto.md",
               memory_meta("01PORTO", subject="user", attribute="home", entities=["[[Porto]]"]),
               "The user lives in Porto. See [[Nowhere land]] and [[Lives in Lisbon]].")
    memory.reindex()
    report = doctor(memory.vault)
    assert report["ok"] is False
    assert report["parse_errors"][0]["path"] == "Memory/Facts/Broken.md"
    assert "Broken.md" not in " ".join(report["drift"]["missing"])
    broken = {(b["path"], b["link"]) for b in report["broken_links"]}
    assert ("Memory/Facts/Lives in Porto.md", "[[Nowhere land]]") in broken
    assert ("Memory/Facts/Lives in Porto.md", "[[Porto]]") in broken
    assert ("Memory/Facts/Lives in Porto.md", "[[Lives in Lisbon]]") not in broken
    pairs = [sorted(c["paths"]) for c in report["contradictions"]]
    assert ["Memory/Facts/Lives in Lisbon.md", "Memory/Facts/Lives in Porto.md"] in pairs


def test_two_active_memories_saying_nearly_the_same_of_one_entity_are_reported(memory):
    """Read from the index's vectors and filter columns (its snapshot reads no text)."""
    root = memory.vault.root
    write_note(root, "Memory/Facts/Mei hikes.md", memory_meta("01MEIA", entities=["[[Mei]]"]),
               "Mei goes hiking in the mountains every weekend.")
    write_note(root, "Memory/Facts/Mei goes hiking.md", memory_meta("01MEIB", entities=["[[Mei]]"]),
               "Every weekend Mei goes hiking in the mountains.")
    memory.reindex()
    reasons = {tuple(sorted(c["paths"])): c["reason"] for c in doctor(memory.vault)["contradictions"]}
    assert reasons[("Memory/Facts/Mei goes hiking.md", "Memory/Facts/Mei hikes.md")].startswith(
        "similar fact memories (cosine ")


def test_block_links_to_missing_turns_are_broken(memory):
    root = memory.vault.root
    write_note(root, "Memory/Sessions/2026-11-29 chat.md",
               {"id": "01S", "type": "session", "created": "2026-11-29T10:00:00",
                "updated": "2026-11-29T10:00:00", "status": "active", "user": "default"},
               "**Alice** · 2026-11-29 10:00\nI drink too much coffee. ^m-1\n\n"
               "**Alice** · 2026-11-29 10:05\nTea later. ^m-12")
    write_note(root, "Memory/Facts/Coffee habit.md",
               memory_meta("01CH", sources=["[[2026-11-29 chat#^m-1]]", "[[2026-11-29 chat#^m-9]]",
                                            "[[2026-11-29 chat#^m-12]]", "[[2026-11-29 chat#^m-2]]"]),
               "The user drinks a lot of coffee.")
    links = {b["link"]: b["reason"] for b in doctor(memory.vault)["broken_links"]}
    assert links.get("[[2026-11-29 chat#^m-9]]") == "no such block"
    assert "[[2026-11-29 chat#^m-1]]" not in links and "[[2026-11-29 chat#^m-12]]" not in links
    assert links.get("[[2026-11-29 chat#^m-2]]") == "no such block"


def test_a_block_id_is_not_found_inside_a_longer_one(memory):
    root = memory.vault.root
    write_note(root, "Memory/Sessions/2026-11-30 chat.md",
               {"id": "01S2", "type": "session", "created": "2026-11-30T10:00:00",
                "updated": "2026-11-30T10:00:00", "status": "active", "user": "default"},
               "**Alice** · 2026-11-30 10:05\nTea later. ^m-12")
    write_note(root, "Memory/Facts/Tea later.md", memory_meta("01TL", sources=["[[2026-11-30 chat#^m-1]]"]),
               "The user drinks tea later.")
    links = {b["link"]: b["reason"] for b in doctor(memory.vault)["broken_links"]}
    assert links.get("[[2026-11-30 chat#^m-1]]") == "no such block"


def test_missing_index_is_drift(sample_vault):
    report = doctor(sample_vault)
    assert report["ok"] is False and "reindex" in report["index_error"]


def test_stats_counts_by_type_and_status(memory):
    result = stats(memory.vault)
    assert result["notes"] == 21 and result["counted_from"] == "index"
    assert result["by_status"] == {"active": 20, "superseded": 1}
    assert result["by_type"]["preference"] == 6 and sum(result["by_type"].values()) == 21
    assert result["index"]["chunks"] >= 21 and result["index"]["bytes"] > 0
    assert (result["index"]["model"], result["index"]["dim"]) == ("all-MiniLM-L6-v2", 384)


def test_cli_doctor_exit_code_and_stats(memory):
    runner = CliRunner()
    root = str(memory.vault.root)
    result = runner.invoke(cli, ["--vault", root, "doctor"])
    assert result.exit_code == 0 and "Index matches the vault." in result.output
    (memory.vault.root / "Memory/Facts/Has a dog named Biscuit.md").unlink()
    result = runner.invoke(cli, ["--vault", root, "doctor", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["drift"]["orphaned"] == ["Memory/Facts/Has a dog named Biscuit.md"]
    result = runner.invoke(cli, ["--vault", root, "stats"])
    assert result.exit_code == 0 and "20 memory and session notes, 3 of your own notes" in result.output
    assert "all-MiniLM-L6-v2" in result.output


def test_links_obsidian_opens_are_not_broken(tmp_path):
    """Case, `\\|` in a table, code, comments, same-name notes, NFD names, headings, blocks
    and attachments as Obsidian resolves them; a bare alias is reported with the fix."""
    import unicodedata

    from vaultmem.api import init
    from vaultmem.store.vault import Vault

    root = tmp_path / "vault"
    init(root)
    write_note(root, "Help/Properties.md", {"aliases": ["Props"]}, "# Properties\n\n## Property types")
    write_note(root, "People/Alice Chen.md", {"aliases": ["Alice"]}, "Met at work.")
    write_note(root, "Projects/Plan.md", {"type": "project"}, "The plan.")
    write_note(root, "Archive/Plan.md", {"type": "project"}, "The old plan.")
    (root / "Places").mkdir()
    (root / "Places" / (unicodedata.normalize("NFD", "Café Zürich") + ".md")).write_text("A café.\n")
    (root / "Attachments").mkdir()
    (root / "Attachments" / "Engelbart.jpg").write_bytes(b"\xff\xd8")
    write_note(root, "Memory/Sessions/2026-11-29 chat.md",
               {"id": "01S", "type": "session", "created": "2026-11-29T10:00:00",
                "updated": "2026-11-29T10:00:00", "status": "active", "user": "default"},
               "**Alice** · 2026-11-29 10:00\nI drink too much coffee. ^m-1\n\n"
               "**Alice** · 2026-11-29 10:05\nTea later. ^m-12")
    body = ("See [[properties]], [[Properties#property TYPES]] and [[plan]] at [[Café Zürich]].\n\n"
            "| Who | Photo |\n| --- | --- |\n| [[Alice Chen\\|Alice]] | ![[Engelbart.jpg\\|100]] |\n\n"
            "Write `[[Not a note]]` to link. %%[[Hidden draft]]%%\n\n```md\n[[Example only]]\n```\n")
    write_note(root, "Memory/Facts/Links.md",
               memory_meta("01LINKS", entities=["[[Alice Chen|Alice]]", "[[CAFÉ ZÜRICH]]"],
                           sources=["[[Sessions/2026-11-29 chat#^m-1]]", "[[2026-11-29 chat#^m-12]]"]),
               body)
    assert doctor(Vault(root))["broken_links"] == []

    write_note(root, "Memory/Facts/Broken links.md",
               memory_meta("01BROKEN", entities=["[[Alice]]"], sources=["[[2026-11-29 chat#^m-2]]"]),
               "See [[Nowhere land]] and [[Properties#No such heading]]; `[[Code]]` is fine.")
    links = {b["link"]: b["reason"] for b in doctor(Vault(root))["broken_links"]}
    assert links == {"[[Alice]]": "links to an alias of Alice Chen; write [[Alice Chen|Alice]]",
                     "[[2026-11-29 chat#^m-2]]": "no such block", "[[Nowhere land]]": "no such note",
                     "[[Properties#No such heading]]": "no such heading"}
