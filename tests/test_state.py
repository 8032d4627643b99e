import threading
from datetime import datetime

from vaultmem.index.state import FileStat, State, access_stats, record_access


def test_file_stats_round_trip_and_delete(tmp_path):
    state = State(tmp_path)
    state.put_files([FileStat("Memory/a.md", 10, 123, "h1"), FileStat("Memory/b.md", 20, 456, "h2")])
    assert State(tmp_path).files()["Memory/a.md"] == FileStat("Memory/a.md", 10, 123, "h1")
    state.delete_files(["Memory/a.md"])
    assert list(state.files()) == ["Memory/b.md"]
    state.clear_files()
    assert state.files() == {}


def test_file_stats_of_given_paths_or_of_a_folder_and_not_its_subfolders(tmp_path):
    state = State(tmp_path)
    names = ["Memory/Facts/a.md", "Memory/Facts/b_%.md", "Memory/Facts/sub/c.md", "Memory/Facts0.md",
             "Memory/Factsx/d.md", "Notes/e.md"]
    state.put_files([FileStat(name, i, i, f"h{i}") for i, name in enumerate(names)])
    assert sorted(state.files(["Notes/e.md", "Memory/Facts/a.md", "Missing.md"])) == ["Memory/Facts/a.md", "Notes/e.md"]
    assert sorted(state.files(folders=["Memory/Facts"])) == ["Memory/Facts/a.md", "Memory/Facts/b_%.md"]
    assert len(state.files([f"x{i}.md" for i in range(1200)] + ["Notes/e.md"])) == 1


def test_memory_readings_round_trip_and_forget_gone_paths(tmp_path):
    state = State(tmp_path)
    state.put_memory_fields([("Memory/Facts/a.md", 10, 5, "[{}, \"a\"]"), ("Memory/Facts/b.md", 11, 6, "[{}, \"b\"]")])
    state.put_memory_fields([("Memory/Facts/a.md", 12, 7, "[{}, \"a2\"]")], gone=["Memory/Facts/b.md"])
    assert State(tmp_path).memory_fields() == {"Memory/Facts/a.md": (12, 7, "[{}, \"a2\"]")}


def test_access_counts_first_and_last(tmp_path):
    assert access_stats(tmp_path, "01A") == {"count": 0, "first_access": None, "last_access": None}
    record_access(tmp_path, ["01A", "01B", "01A"], datetime(2026, 11, 1, 9, 0, 0, 5))
    record_access(tmp_path, ["01A"], "2026-11-03T10:00:00")
    assert access_stats(tmp_path, "01A") == {"count": 2, "first_access": "2026-11-01T09:00:00",
                                             "last_access": "2026-11-03T10:00:00"}
    assert State(tmp_path).all_access()["01B"]["count"] == 1


def test_one_state_is_safe_to_share_between_threads(tmp_path):
    state = State(tmp_path)

    def hammer():
        for _ in range(50):
            state.record_access(["01A"], "2026-11-01T09:00:00")
            state.files()

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state.access_stats("01A")["count"] == 200
