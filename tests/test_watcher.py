"""The watcher: change folding, the coalescing queue, and real watchdog events on disk."""

import os
import shutil
import threading
import time

import pytest

from vaultmem.daemon.watcher import ADDED, DELETED, MODIFIED, Coalescer, fold, make_handler, start_observer


@pytest.mark.parametrize("queued, arriving, kept", [
    (None, ADDED, ADDED),
    (ADDED, MODIFIED, ADDED),        # a new note edited again is still new
    (DELETED, MODIFIED, DELETED),    # a modify after a delete is dropped
    (DELETED, ADDED, MODIFIED),      # delete then create (a save by rename) is an edit
    (ADDED, DELETED, DELETED),       # kept: the "add" may have replaced an indexed note
    (MODIFIED, DELETED, DELETED),
    (MODIFIED, ADDED, MODIFIED),
])
def test_fold(queued, arriving, kept):
    assert fold(queued, arriving) == kept


def test_take_waits_for_quiet_and_folds_a_burst():
    sink = Coalescer(quiet=0.05, max_wait=5)
    for change in (ADDED, MODIFIED, MODIFIED):
        sink.put("Memory/Facts/a.md", change)
    sink.put("Memory/Facts/b.md", DELETED)
    batch, rescan = sink.take(timeout=5)
    assert batch == {"Memory/Facts/a.md": ADDED, "Memory/Facts/b.md": DELETED}
    assert rescan is False
    assert len(sink) == 0


def test_take_releases_a_never_ending_burst_at_max_wait():
    sink = Coalescer(quiet=0.2, max_wait=0.3)
    stop = threading.Event()

    def typist():  # an event every 20 ms, never quiet for 200 ms
        n = 0
        while not stop.is_set():
            sink.put(f"n{n % 3}.md", MODIFIED)
            n += 1
            time.sleep(0.02)

    thread = threading.Thread(target=typist)
    thread.start()
    try:
        first = sink.take(timeout=10)
        still_typing = thread.is_alive() and not stop.is_set()
    finally:
        stop.set()
        thread.join()
    assert first is not None and still_typing
    assert set(first[0]) <= {"n0.md", "n1.md", "n2.md"} and first[0]


def test_take_times_out_and_wakes():
    sink = Coalescer(quiet=0.01, max_wait=0.1)
    assert sink.take(timeout=0.05) is None
    threading.Timer(0.05, sink.wake).start()
    assert sink.take(timeout=30) is None  # returned by wake(), long before the timeout


def test_rescan_request_is_released_with_the_batch():
    sink = Coalescer(quiet=0.01, max_wait=0.1)
    sink.request_rescan()
    assert sink.has_rescan()
    assert sink.take(timeout=5) == ({}, True)
    assert not sink.has_rescan()


def _drain(sink, until, deadline=10.0):
    """Merge batches until `until(merged, rescan)` holds or the deadline passes."""
    merged, rescan = {}, False
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = sink.take(timeout=0.2)
        if got:
            for rel, change in got[0].items():
                merged[rel] = fold(merged.get(rel), change)
            rescan = rescan or got[1]
        if until(merged, rescan):
            break
    return merged, rescan


def test_vault_folder_deleted_is_reported(tmp_path):
    root = tmp_path / "vault"
    (root / "Memory").mkdir(parents=True)
    gone = threading.Event()
    observer = start_observer(root, make_handler(root, lambda rel: True, Coalescer(),
                                                 on_root_gone=gone.set))
    try:
        shutil.rmtree(root)
        assert gone.wait(10)
    finally:
        observer.stop()
        observer.join()


@pytest.fixture
def watched(tmp_path):
    root = tmp_path / "vault"
    (root / "Memory" / "Facts").mkdir(parents=True)
    (root / ".vaultmem").mkdir()
    sink = Coalescer(quiet=0.05, max_wait=0.5)
    def accept(rel):  # lets `.vaultmem/x.md` through: only make_handler's skip_dirs drops it
        return rel.endswith(".md") and not rel.rsplit("/", 1)[-1].startswith(".")

    handler = make_handler(root, accept, sink)
    observer = start_observer(root, handler)
    yield root, sink
    observer.stop()
    observer.join()


def test_real_events_create_edit_rename_delete(watched):
    root, sink = watched
    note = root / "Memory" / "Facts" / "Tea.md"
    note.write_text("one", encoding="utf-8")
    with open(note, "a", encoding="utf-8") as handle:
        handle.write(" two")
    merged, _ = _drain(sink, lambda m, r: m.get("Memory/Facts/Tea.md") == ADDED)
    assert merged == {"Memory/Facts/Tea.md": ADDED}

    note.rename(root / "Memory" / "Facts" / "Green tea.md")
    merged, _ = _drain(sink, lambda m, r: len(m) == 2)
    assert merged == {"Memory/Facts/Tea.md": DELETED, "Memory/Facts/Green tea.md": ADDED}

    (root / "Memory" / "Facts" / "Green tea.md").unlink()
    merged, _ = _drain(sink, lambda m, r: m)
    assert merged == {"Memory/Facts/Green tea.md": DELETED}


def test_own_state_and_rejected_files_are_not_queued(watched):
    root, sink = watched
    (root / ".vaultmem" / "daemon.log").write_text("log line", encoding="utf-8")
    (root / ".vaultmem" / "x.md").write_text("state", encoding="utf-8")
    (root / "Memory" / "Facts" / "image.png").write_bytes(b"\x89PNG")
    (root / "Memory" / "Facts" / ".hidden.md").write_text("tmp", encoding="utf-8")
    marker = root / "Memory" / "Facts" / "Marker.md"
    marker.write_text("m", encoding="utf-8")
    merged, _ = _drain(sink, lambda m, r: "Memory/Facts/Marker.md" in m)
    # Events arrive in order, so by the marker's event the others were seen and dropped.
    assert merged == {"Memory/Facts/Marker.md": ADDED}


def test_deleting_a_folder_asks_for_a_rescan(watched):
    root, sink = watched
    folder = root / "Memory" / "Old"
    folder.mkdir()
    (folder / "a.md").write_text("a", encoding="utf-8")
    _drain(sink, lambda m, r: "Memory/Old/a.md" in m)
    os.rename(folder, root.parent / "moved-out")  # watchdog reports only the folder
    _, rescan = _drain(sink, lambda m, r: r)
    assert rescan
