"""A vault on several devices: the merge driver, conflict copies, sync repairs, bulk arrivals,
and two clones of one remote, each with its own daemon, pulling and pushing with plain git."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import memory_meta, write_note
from tests.helpers.transcripts import write_jsonl
from tests.helpers.wait import wait_for
from tests.test_daemon import log_text, new_vault, no_daemon_left_behind, start, stop, vaultmem  # noqa: F401
from vaultmem.daemon.watcher import MODIFIED, Coalescer
from vaultmem.ipc import client
from vaultmem.store.note import parse_note
from vaultmem.store.vault import Vault, is_conflict_copy
from vaultmem.sync import reconcile
from vaultmem.sync.merge import CONFLICT_MARK, merge_note_texts, run_driver

BASE = """---
id: 01AAA
type: fact
created: 2026-11-01T09:00:00
updated: 2026-11-01T09:00:00
status: active
importance: 0.5
user: default
tags:
  - vaultmem/fact
sources:
  - "[[Sessions/a#^m-1]]"
mood: calm  # the person's own key
---
The user likes green tea.

They drink it every morning.
"""


def edit(text, *pairs):
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


def git(cwd, *args, check=True):
    """`git ARGS` in `cwd`; tried again while another git process (the daemon committing a
    change it saw) holds the repository's index lock, as a person's sync tries again."""
    for _attempt in range(10):
        done = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, timeout=120)
        if done.returncode == 0 or "index.lock" not in done.stderr:
            break
        time.sleep(0.5)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done


# --- the merge driver, field by field ---------------------------------------------------------

def test_fields_merge_by_their_rule():
    ours = edit(BASE, ("importance: 0.5", "importance: 0.9"), ("updated: 2026-11-01T09:00:00", "updated: 2026-11-03T09:00:00"),
                ('  - "[[Sessions/a#^m-1]]"', '  - "[[Sessions/a#^m-1]]"\n  - "[[Sessions/b#^m-2]]"'))
    theirs = edit(BASE, ("importance: 0.5", "importance: 0.6"), ("status: active", "status: superseded"),
                  ("updated: 2026-11-01T09:00:00", "updated: 2026-11-02T09:00:00"),
                  ("mood: calm  # the person's own key", "mood: happy  # the person's own key\ncolour: red"),
                  ("  - vaultmem/fact", "  - vaultmem/fact\n  - drinks"),
                  ('  - "[[Sessions/a#^m-1]]"', '  - "[[Sessions/a#^m-1]]"\n  - "[[Sessions/c#^m-3]]"'))
    merged, conflicted = merge_note_texts(BASE, ours, theirs)
    note = parse_note(merged)
    assert not conflicted and note.body == parse_note(BASE).body
    meta = note.meta
    assert meta["importance"] == 0.9                       # the max
    assert str(meta["updated"]) == "2026-11-03T09:00:00"   # the latest
    assert meta["status"] == "superseded"                  # superseded > archived > active
    assert list(meta["sources"]) == ["[[Sessions/a#^m-1]]", "[[Sessions/b#^m-2]]", "[[Sessions/c#^m-3]]"]
    assert list(meta["tags"]) == ["vaultmem/fact", "drinks"]
    assert meta["mood"] == "happy" and meta["colour"] == "red"   # only theirs changed them
    # Key order, quoting and the person's comment are ours as written.
    assert list(meta)[:9] == ["id", "type", "created", "updated", "status", "importance", "user", "tags", "sources"]
    assert '  - "[[Sessions/b#^m-2]]"' in merged and "# the person's own key" in merged


def test_other_keys_are_ours_when_both_changed_and_removals_stand():
    ours = edit(BASE, ("mood: calm  # the person's own key", "mood: tired"), ("  - vaultmem/fact\n", "  - vaultmem/fact\n  - keep\n"))
    theirs = edit(BASE, ("mood: calm  # the person's own key", "mood: happy"), ('sources:\n  - "[[Sessions/a#^m-1]]"\n', ""),
                  ("created: 2026-11-01T09:00:00", "created: 2026-10-01T09:00:00"))
    meta = parse_note(merge_note_texts(BASE, ours, theirs)[0]).meta
    assert meta["mood"] == "tired"
    assert str(meta["created"]) == "2026-10-01T09:00:00"   # the earliest
    assert "sources" not in meta                           # theirs removed it, ours left it alone
    assert list(meta["tags"]) == ["vaultmem/fact", "keep"]


def test_add_add_keeps_one_id_and_the_other_in_merged_ids():
    mine = edit(BASE, ("01AAA", "01BBB"), ("created: 2026-11-01T09:00:00", "created: 2026-11-02T09:00:00"))
    theirs = edit(BASE, ("01AAA", "01CCC"), ('  - "[[Sessions/a#^m-1]]"', '  - "[[Sessions/z#^m-9]]"'))
    meta = parse_note(merge_note_texts("", mine, theirs)[0]).meta
    assert meta["id"] == "01CCC"                         # the earlier created
    assert list(meta["merged_ids"]) == ["01BBB"]
    assert str(meta["created"]) == "2026-11-01T09:00:00"
    assert list(meta["sources"]) == ["[[Sessions/a#^m-1]]", "[[Sessions/z#^m-9]]"]
    # Both created at the same second: the smaller id, whichever side merges.
    same = edit(BASE, ("01AAA", "01DDD"))
    for ours, other in ((BASE, same), (same, BASE)):
        meta = parse_note(merge_note_texts("", ours, other)[0]).meta
        assert meta["id"] == "01AAA" and list(meta["merged_ids"]) == ["01DDD"]


def test_a_merged_id_still_finds_the_note(tmp_path):
    vault = Vault(new_vault_dir(tmp_path))
    write_note(vault.root, "Memory/Facts/Tea.md", memory_meta("01KEPT", merged_ids=["01GONE"]), "The user likes tea.")
    assert vault.resolve("01GONE") == vault.root / "Memory/Facts/Tea.md"
    assert vault.resolve("01KEPT") == vault.root / "Memory/Facts/Tea.md"


def test_bodies_merge_three_ways_and_a_real_conflict_keeps_both():
    ours = edit(BASE, ("The user likes green tea.", "The user loves green tea."))
    theirs = edit(BASE, ("They drink it every morning.", "They drink it every evening."))
    merged, conflicted = merge_note_texts(BASE, ours, theirs)
    assert not conflicted and "loves green tea" in merged and "every evening" in merged
    theirs = edit(BASE, ("The user likes green tea.", "The user likes black tea."))
    merged, conflicted = merge_note_texts(BASE, ours, theirs)
    body = parse_note(merged).body
    assert conflicted and CONFLICT_MARK in body
    assert body.startswith("The user loves green tea.")    # ours stays the note's statement
    assert "> The user likes black tea." in body and "<<<<<<<" not in body


def test_the_driver_leaves_an_unreadable_note_to_git_with_markers(tmp_path):
    paths = {}
    broken = "---\nid: [unclosed\ntype: fact\n---\nThe user likes tea.\n"
    for name, text in (("base", BASE), ("ours", broken), ("theirs", edit(BASE, ("likes green", "likes black")))):
        paths[name] = tmp_path / name
        paths[name].write_text(text)
    assert run_driver(str(paths["base"]), str(paths["ours"]), str(paths["theirs"]), "Memory/Facts/Tea.md") == 1
    left = paths["ours"].read_text()
    assert "<<<<<<< Memory/Facts/Tea.md (this device)" in left and ">>>>>>> Memory/Facts/Tea.md (other device)" in left
    assert "id: [unclosed" in left and "likes black tea" in left    # nothing lost


def test_git_runs_the_driver_for_a_note_changed_on_two_clones(tmp_path, git_identity):
    remote, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "clone", "-q", str(remote), str(a))
    vaultmem("init", str(a), vault=a)
    note = a / "Memory/Facts/Green tea.md"
    note.write_text(BASE)
    git(a, "add", "-A")
    git(a, "commit", "-qm", "tea")
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(b))
    doctor = json.loads(vaultmem("doctor", "--json", vault=b, check=False).stdout)
    assert any("not registered" in p for p in doctor["sync"]["merge_driver"])   # a fresh clone
    assert "merge_driver" in json.loads(vaultmem("init", "--json", str(b), vault=b).stdout)
    assert git(b, "status", "--porcelain").stdout == ""                       # init on a clone adds nothing
    assert "merge_driver" not in json.loads(vaultmem("init", "--json", str(b), vault=b).stdout)  # idempotent
    note.write_text(edit(BASE, ("  - vaultmem/fact", "  - vaultmem/fact\n  - from-a")))
    git(a, "commit", "-qam", "a")
    git(a, "push", "-q")
    (b / "Memory/Facts/Green tea.md").write_text(edit(BASE, ("  - vaultmem/fact", "  - vaultmem/fact\n  - from-b")))
    git(b, "commit", "-qam", "b")
    git(b, "pull", "-q", "--no-rebase")
    tags = parse_note((b / "Memory/Facts/Green tea.md").read_text()).meta["tags"]
    assert list(tags) == ["vaultmem/fact", "from-b", "from-a"]
    assert git(b, "status", "--porcelain").stdout == ""
    # A version the driver cannot read: git's own conflict, markers in the note, nothing lost.
    git(b, "push", "-q")
    git(a, "pull", "-q", "--no-rebase")
    note.write_text(note.read_text().replace("type: fact", "type: [fact").replace("green tea", "oolong"))
    git(a, "commit", "-qam", "a breaks it")
    git(a, "push", "-q")
    theirs = b / "Memory/Facts/Green tea.md"
    theirs.write_text(theirs.read_text().replace("green tea", "jasmine tea"))
    git(b, "commit", "-qam", "b")
    assert git(b, "pull", "-q", "--no-rebase", check=False).returncode != 0
    assert git(b, "status", "--porcelain").stdout.startswith("UU")
    left = theirs.read_text()
    assert "<<<<<<< Memory/Facts/Green tea.md (this device)" in left
    assert "likes jasmine tea" in left and "likes oolong" in left and "type: [fact" in left


def new_vault_dir(tmp_path):
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    return root


# --- conflict copies -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, copy", [
    ("Tea.sync-conflict-20261201-101010-ABCDEFG.md", True),
    ("Tea (conflicted copy 2026-12-01).md", True),
    ("Tea (Ada's conflicted copy 2026-12-01).md", True),
    ("Tea (Conflicted copy from laptop).md", True),
    ("Tea.md", False),
    ("Notes on sync conflicts.md", False),
])
def test_conflict_copy_names(name, copy):
    assert is_conflict_copy(name) is copy


def test_conflict_copies_are_never_indexed_and_doctor_lists_them(sample_vault, indexer_for):
    facts = sample_vault.root / "Memory" / "Facts"
    copies = ["Memory/Facts/Tea.sync-conflict-20261201-101010-ABCDEFG.md",
              "Memory/Facts/Tea (conflicted copy 2026-12-01).md", "Projects/Plan (conflicted copy).md",
              "Memory/Facts/Tea.md.orig"]
    facts.mkdir(parents=True, exist_ok=True)
    for rel in copies:
        write_note(sample_vault.root, rel, memory_meta("01COPY"), "The user likes tea, a copy.")
    indexer = indexer_for(sample_vault)
    indexer.sync()
    indexed = indexer.index.path_hashes()
    assert not set(copies) & set(indexed) and indexed
    assert not any(is_conflict_copy(Path(p).name) for p in map(str, sample_vault.iter_indexed()))
    from vaultmem.doctor import doctor

    report = doctor(sample_vault)
    assert sorted(item["path"] for item in report["sync"]["conflict_copies"]) == sorted(copies)
    assert all("delete the copy" in item["advice"] for item in report["sync"]["conflict_copies"])


# --- repairs after a merge -----------------------------------------------------------------------

def merged_tree(root: Path) -> None:
    """What two devices' extractions leave in one tree: a duplicate under two names, and
    X superseded by Y on one device and by Z on the other."""
    write_note(root, "Memory/Facts/Alice drinks tea.md", memory_meta(
        "01B", created="2026-11-02T09:00:00", updated="2026-11-02T09:00:00", importance=0.8,
        sources=["[[Sessions/s2#^m-1]]"], tags=["vaultmem/fact", "b"]), "Alice drinks tea.")
    write_note(root, "Memory/Facts/Alice drinks tea 2.md", memory_meta(
        "01A", created="2026-11-01T09:00:00", sources=["[[Sessions/s1#^m-1]]"]), "Alice drinks tea")
    write_note(root, "Memory/Facts/Alice lives in Beijing.md", memory_meta(
        "01X", status="superseded", valid_from="2026-11-20", valid_to="2026-11-28",
        superseded_by=["[[Alice moved to Shanghai]]", "[[Alice moved to Shenzhen]]"]), "Alice lives in Beijing.")
    write_note(root, "Memory/Facts/Alice moved to Shenzhen.md", memory_meta(
        "01Z", valid_from="2026-11-28", supersedes=["[[Alice lives in Beijing]]"]), "Alice moved to Shenzhen.")
    write_note(root, "Memory/Facts/Alice moved to Shanghai.md", memory_meta(
        "01Y", valid_from="2026-11-25", supersedes=["[[Alice lives in Beijing]]"]), "Alice moved to Shanghai.")
    # One-way: Y supersedes W, W still thinks it is current.
    write_note(root, "Memory/Facts/Alice works at Acme.md", memory_meta("01W"), "Alice works at Acme.")
    write_note(root, "Memory/Facts/Alice works at Orrin.md", memory_meta(
        "01V", valid_from="2026-11-26", supersedes=["[[Alice works at Acme]]"]), "Alice works at Orrin.")


def test_repairs_merge_duplicates_settle_crossings_and_are_deterministic(tmp_path, git_identity, embedder):
    from vaultmem.api import Memory, init

    roots = []
    for name in ("one", "two"):
        root = tmp_path / name
        init(root)
        merged_tree(root)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "the merged tree")
        roots.append(root)
    planned = reconcile.plan(Vault(roots[0]))
    assert [p["kind"] for p in planned] == ["duplicate", "crossing", "chain"]
    results = [Memory(root, embedder=embedder).repair() for root in roots]
    kinds = [r["kind"] for r in results[0]["repairs"]]
    assert kinds == ["duplicate", "crossing", "chain"] and len(results[0]["commits"]) == 3
    log = git(roots[0], "log", "--format=%s", "-3").stdout
    assert "merged into 'Alice drinks tea 2'" in log and "superseded by 'Alice moved to Shenzhen'" in log
    # The same tree repaired on two devices: the same bytes (their next pull merges cleanly).
    files = [{p.relative_to(r).as_posix(): p.read_bytes() for p in (r / "Memory").rglob("*.md")} for r in roots]
    assert files[0] == files[1]
    assert git(roots[0], "rev-parse", "HEAD^{tree}").stdout == git(roots[1], "rev-parse", "HEAD^{tree}").stdout
    memos = reconcile.read_memos(Vault(roots[0]))
    kept, dup = memos["Memory/Facts/Alice drinks tea 2.md"], memos["Memory/Facts/Alice drinks tea.md"]
    assert kept.active and kept.get("importance") == "0.8" and kept.props["merged_ids"] == ["01B"]
    assert kept.props["sources"] == ["[[Sessions/s1#^m-1]]", "[[Sessions/s2#^m-1]]"] and "b" in kept.props["tags"]
    assert not dup.active and dup.superseded_by == [kept.rel]
    assert kept.get("updated") == "2026-11-02T09:00:00"          # from the notes, not the clock
    shanghai, shenzhen = memos["Memory/Facts/Alice moved to Shanghai.md"], memos["Memory/Facts/Alice moved to Shenzhen.md"]
    assert shenzhen.active and not shanghai.active and shanghai.get("valid_to") == "2026-11-28"
    assert shanghai.rel in shenzhen.supersedes and shenzhen.rel in shanghai.superseded_by
    assert memos["Memory/Facts/Alice lives in Beijing.md"].get("valid_to") == "2026-11-25"
    acme = memos["Memory/Facts/Alice works at Acme.md"]
    assert not acme.active and acme.superseded_by == ["Memory/Facts/Alice works at Orrin.md"]
    assert reconcile.plan(Vault(roots[0])) == []
    assert Memory(roots[0], embedder=embedder).repair()["repairs"] == []


def test_two_values_learnt_in_one_slot_on_two_devices_leave_the_later_said(tmp_path, git_identity, embedder):
    """Device A heard "I live in Porto", device B "I moved to Denver", neither superseding
    anything: the later said stays, the other is superseded until then; values in two
    scripts are both kept, as the write policy keeps them."""
    from vaultmem.api import Memory, init

    root = tmp_path / "vault"
    init(root)
    slot = dict(subject="user", attribute="home")
    write_note(root, "Memory/Facts/The user lives in Porto.md", memory_meta(
        "01P", valid_from="2026-11-03", value="Porto", **slot), "The user lives in Porto.")
    write_note(root, "Memory/Facts/The user moved to Denver.md", memory_meta(
        "01D", valid_from="2026-11-20", value="Denver", **slot), "The user moved to Denver.")
    write_note(root, "Memory/Facts/The user works in Beijing.md", memory_meta(
        "01E", valid_from="2026-11-01", value="Beijing", subject="user", attribute="workplace"),
        "The user works in Beijing.")
    write_note(root, "Memory/Facts/用户在北京工作.md", memory_meta(
        "01F", valid_from="2026-11-02", value="北京", subject="user", attribute="workplace"), "用户在北京工作。")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the merged tree")
    assert [p["kind"] for p in reconcile.plan(Vault(root))] == ["slot"]
    done = Memory(root, embedder=embedder).repair()
    assert [r["kind"] for r in done["repairs"]] == ["slot"] and len(done["commits"]) == 1
    memos = reconcile.read_memos(Vault(root))
    porto, denver = memos["Memory/Facts/The user lives in Porto.md"], memos["Memory/Facts/The user moved to Denver.md"]
    assert denver.active and not porto.active and porto.get("valid_to") == "2026-11-20"
    assert porto.superseded_by == [denver.rel] and denver.supersedes == [porto.rel]
    assert memos["Memory/Facts/The user works in Beijing.md"].active and memos["Memory/Facts/用户在北京工作.md"].active
    assert reconcile.plan(Vault(root)) == []


# --- bulk arrivals -------------------------------------------------------------------------------

def burst_released(bulk_at):
    """A pull writing a note every 0.15 s for 1.2 s (fake clock): (batch at 1.3 s, at 1.5 s)."""
    now = [0.0]
    sink = Coalescer(quiet=0.2, max_wait=1.0, clock=lambda: now[0], bulk_at=bulk_at, bulk_max_wait=10.0)
    for n in range(9):
        now[0] = 0.15 * n
        sink.put(f"n{n}.md", MODIFIED)
    now[0] = 1.3               # past max_wait, but not yet quiet for 0.2 s
    early = sink.take(timeout=0)
    now[0] = 1.5
    return early, sink.take(timeout=0)


def test_a_bulk_burst_waits_past_max_wait_for_quiet():
    early, later = burst_released(bulk_at=100)     # a few edits: released at max_wait
    assert early is not None and len(early[0]) == 9 and later is None
    early, later = burst_released(bulk_at=5)       # a bulk arrival: one batch, once quiet
    assert early is None and len(later[0]) == 9


def test_the_daemon_indexes_a_bulk_arrival_as_one_batch(tmp_path, git_identity):
    root = new_vault(tmp_path)
    start(root)
    wait_for(lambda: client.request(root, "status")["state"] == "watching", "watching", 180)
    facts = root / "Memory" / "Facts"
    before = log_text(root).count("indexed: ")
    texts = {facts / f"Note {n}.md": (memory_meta(f"01BULK{n:04d}"), f"The user owns item number {n}.")
             for n in range(200)}
    for path, (meta, body) in texts.items():   # all at once, as a pull or a sync tool writes them
        write_note(root, path.relative_to(root).as_posix(), meta, body)
    wait_for(lambda: client.request(root, "status")["notes_indexed"] >= 200, "200 notes indexed", 180)
    lines = [line for line in log_text(root).split("indexed: ")[before + 1:]]
    assert len(lines) == 1 and lines[0].startswith("200 added"), lines
    # A checkout that changes many files at once: one batch too, and the index matches.
    git(root, "add", "-A")
    git(root, "commit", "-qm", "200 notes")
    git(root, "checkout", "-q", "-b", "other")
    before = log_text(root).count("indexed: ")
    for path in sorted(texts)[:150]:
        path.write_text(path.read_text().replace("owns item", "sold item"))
    wait_for(lambda: log_text(root).count("indexed: ") > before, "the edits indexed", 120)
    git(root, "commit", "-qam", "150 edits")
    client.request(root, "flush", {"timeout": 60.0})
    before = log_text(root).count("indexed: ")
    git(root, "checkout", "-q", "main")
    wait_for(lambda: log_text(root).count("indexed: ") > before, "the checkout indexed", 120)
    client.request(root, "flush", {"timeout": 60.0})
    lines = log_text(root).split("indexed: ")[before + 1:]
    assert len(lines) == 1 and lines[0].startswith("0 added, 150 updated"), lines
    report = json.loads(vaultmem("doctor", "--json", vault=root).stdout)
    assert report["ok"] and not any(report["drift"].values())
    stop(root)


# --- two devices, one remote, two daemons --------------------------------------------------------

TURNS = {
    "t1": ("s1", "2026-11-20", ["I live in Beijing.", "I drink green tea every morning.",
                                "My sister's birthday is March 3."]),
    "t2": ("s2", "2026-11-25", ["I moved to Shanghai.", "I play the violin on weekends."]),
    "t3": ("s3", "2026-11-28", ["I moved to Shenzhen.", "My favourite food is dumplings."]),
}


def transcript(folder: Path, name: str) -> Path:
    from datetime import datetime

    session, day, texts = TURNS[name]
    return write_jsonl(folder / f"{name}.jsonl", session, [("user", t) for t in texts], prefix="m",
                       start=datetime.fromisoformat(f"{day}T09:00:00"))


def extract(vault, *paths) -> list[str]:
    """The statements `vaultmem extract` wrote (created, updated or superseded)."""
    result = json.loads(vaultmem("extract", "--json", *map(str, paths), vault=vault).stdout)
    return [d["content"] for d in result["decisions"] if d["action"] in ("created", "updated", "superseded")]


def settled(vault) -> dict | None:
    """The daemon idle, every change committed and `doctor --json` clean: its report."""
    if not client.request(vault, "flush", {"timeout": 60.0})["idle"]:
        return None
    if git(vault, "status", "--porcelain").stdout.strip():
        return None   # a repair or an edit not committed yet
    report = json.loads(vaultmem("doctor", "--json", vault=vault, check=False).stdout)
    clean = report["ok"] and not any(report["sync"].values()) and not report["contradictions"]
    return report if clean else None


def memory_files(vault) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted((vault / "Memory").rglob("*.md"))}


def test_two_devices_synced_through_one_remote(tmp_path, git_identity):
    remote, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "clone", "-q", str(remote), str(a))
    vaultmem("init", str(a), vault=a)
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(b))
    # Each daemon commits a person's edit 1 s after it (5 s by default), as test_purge's. The
    # clone has no config of its own (.vaultmem/ is not in git): the defaults but that line.
    config = a / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert "commit_quiet_seconds = 5\n" in text
    config.write_text(text.replace("commit_quiet_seconds = 5\n", "commit_quiet_seconds = 1\n"), encoding="utf-8")
    (b / ".vaultmem").mkdir()
    (b / ".vaultmem" / "config.toml").write_text("[daemon]\ncommit_quiet_seconds = 1\n", encoding="utf-8")
    for vault in (a, b):
        start(vault)   # b's daemon registers the merge driver its clone lacks
    for vault in (a, b):
        wait_for(lambda: client.request(vault, "status")["state"] == "watching", "watching", 180)
    assert git(b, "config", "--get", "merge.vaultmem.driver").stdout.strip()

    # Overlapping extractions on each device before either syncs: add/add of the same notes.
    said = extract(a, transcript(tmp_path, "t1"), transcript(tmp_path, "t2"))
    said += extract(b, transcript(tmp_path, "t1"), transcript(tmp_path, "t3"))
    git(a, "push", "-q")
    git(b, "pull", "-q", "--no-rebase")
    wait_for(lambda: settled(b), "b repaired and clean", 180)
    assert "sync repair" in git(b, "log", "--format=%s", "-5").stdout
    git(b, "push", "-q")
    git(a, "pull", "-q", "--no-rebase")
    wait_for(lambda: settled(a), "a clean", 180)

    # The same note edited on both devices (committed by each daemon, as in Obsidian).
    violin = "Memory/Facts/Alice plays the violin on weekends.md"
    head = {v: git(v, "rev-parse", "HEAD").stdout for v in (a, b)}
    text = (a / violin).read_text()
    (a / violin).write_text(text.replace("  - vaultmem/fact\n", "  - vaultmem/fact\n  - from-a\n")
                            .rstrip("\n") + "\n\nShe started in 2019.\n")
    (b / violin).write_text(text.replace("  - vaultmem/fact\n", "  - vaultmem/fact\n  - from-b\n")
                            .replace("importance: 0.5", "importance: 0.9"))
    for vault in (a, b):
        wait_for(lambda: git(vault, "rev-parse", "HEAD").stdout != head[vault] and settled(vault),
                 "the edit committed", 120)
    git(a, "push", "-q")
    git(b, "pull", "-q", "--no-rebase")
    assert git(b, "log", "-1", "--format=%p").stdout.count(" ") == 1      # a real merge commit
    wait_for(lambda: settled(b), "b clean after the merge", 180)
    git(b, "push", "-q")
    git(a, "pull", "-q", "--no-rebase")
    reports = [wait_for(lambda: settled(v), "clean", 180) for v in (a, b)]

    assert memory_files(a) == memory_files(b)
    assert git(a, "rev-parse", "HEAD^{tree}").stdout == git(b, "rev-parse", "HEAD^{tree}").stdout
    merged = parse_note((a / violin).read_text())
    assert {"from-a", "from-b"} <= set(merged.meta["tags"]) and "She started in 2019." in merged.body
    memos = reconcile.read_memos(Vault(a))
    texts = [m.text for m in memos.values()]
    assert all(texts.count(t) == 1 for t in texts), texts              # no duplicates
    assert all(any(t.startswith(s) for t in texts) for s in said), said   # nothing lost
    active = [m for m in memos.values() if m.active]
    assert len({m.text for m in active}) == len(active)
    for memo in memos.values():                                         # chains agree both ways
        assert all(memo.rel in memos[n].supersedes for n in memo.superseded_by)
        assert all(memo.rel in memos[o].superseded_by for o in memo.supersedes)
    homes = [m for m in active if m.get("attribute") == "home"]
    assert [m.text for m in homes] == ["Alice moved to Shenzhen."]      # the latest said
    for report in reports:
        assert report["ok"] and not any(report["drift"].values())      # each index matches its vault
    for vault in (a, b):
        stop(vault)


def test_doctor_lists_what_fix_repairs_and_notes_kept_twice(tmp_path, git_identity):
    root = tmp_path / "vault"
    vaultmem("init", str(root), vault=root)
    merged_tree(root)
    write_note(root, "Memory/Facts/Edited twice.md", memory_meta("01T"),
               f"The user likes tea.\n\n> [!warning] {CONFLICT_MARK}; keep one version\n> The user likes coffee.")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "merged")
    before = json.loads(vaultmem("doctor", "--json", vault=root, check=False).stdout)["sync"]
    assert [r["kind"] for r in before["repairs"]] == ["duplicate", "crossing", "chain"]
    assert before["merge_conflicts"] == ["Memory/Facts/Edited twice.md"]
    human = vaultmem("doctor", vault=root, check=False).stdout
    assert "to repair: 'Alice drinks tea' merged into 'Alice drinks tea 2'" in human
    assert "edited on two devices: Memory/Facts/Edited twice.md" in human
    fixed = json.loads(vaultmem("doctor", "--fix", "--json", vault=root, check=False).stdout)
    assert [r["kind"] for r in fixed["fixed"]["repairs"]] == ["duplicate", "crossing", "chain"]
    assert fixed["sync"]["repairs"] == [] and git(root, "status", "--porcelain").stdout == ""


def test_a_daemon_repairs_only_what_a_merge_brought_never_the_whole_vault_at_start(tmp_path, git_identity):
    """Two notes that look like one memory, written on this device: no merge brought them,
    so the daemon's start leaves them (doctor lists them; `doctor --fix` is the person's
    call); a pull made while no daemon ran is repaired at its next start, among what the
    pull brought."""
    remote, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "clone", "-q", str(remote), str(a))
    vaultmem("init", str(a), vault=a)
    write_note(a, "Memory/Facts/Alice drinks tea.md", memory_meta("01B", created="2026-11-02T09:00:00"),
               "Alice drinks tea.")
    write_note(a, "Memory/Facts/Alice drinks tea 2.md", memory_meta("01A"), "Alice drinks tea")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "two notes of one memory, written here")
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(b))
    vaultmem("init", str(b), vault=b)
    for vault in (a, b):
        start(vault)
    for vault in (a, b):
        wait_for(lambda: client.request(vault, "status")["state"] == "watching", "watching", 180)
        assert client.request(vault, "flush", {"timeout": 60.0})["idle"]
        assert "sync repair" not in git(vault, "log", "--format=%s").stdout
    stop(a)
    write_note(b, "Memory/Facts/Alice lives in Porto.md", memory_meta(
        "01P", valid_from="2026-11-03", subject="alice", attribute="home", value="Porto"), "Alice lives in Porto.")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "b: Porto")
    git(b, "push", "-q")
    write_note(a, "Memory/Facts/Alice moved to Denver.md", memory_meta(
        "01D", valid_from="2026-11-20", subject="alice", attribute="home", value="Denver"), "Alice moved to Denver.")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "a: Denver")
    git(a, "pull", "-q", "--no-rebase", "--no-edit")        # while a's daemon is stopped
    start(a)
    wait_for(lambda: client.request(a, "status")["state"] == "watching", "watching", 180)
    assert client.request(a, "flush", {"timeout": 60.0})["idle"]
    log = git(a, "log", "--format=%s").stdout
    assert log.count("sync repair") == 1 and "'Alice lives in Porto' superseded by 'Alice moved to Denver'" in log
    memos = reconcile.read_memos(Vault(a))
    assert memos["Memory/Facts/Alice drinks tea.md"].active and memos["Memory/Facts/Alice drinks tea 2.md"].active
    for vault in (a, b):
        stop(vault)
