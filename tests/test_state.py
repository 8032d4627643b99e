import threading
from datetime import datetime

from vaultmem.state import FileStat, State, access_stats, record_access


def test_file_stats_round_trip_and_delete(tmp_path):
    state = State(tmp_path)
    state.put_files([FileStat("Memory/a.md", 10, 123, "h1"), FileStat("Memory/b.md", 20, 456, "h2")])
    assert State(tmp_path).files()["Memory/a.md"] == FileStat("Memory/a.md", 10, 123, "h1")
    state.delete_files(["Memory/a.md"])
    assert list(state.files()) == ["Memory/b.md"]
    state.clear_files()
    assert state.files() == {}


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
