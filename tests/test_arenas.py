"""vaultmem/arenas.py: a vaultmem process keeps glibc's malloc to two arenas however many
threads allocate (counted from glibc's own `malloc_info` report, in a real subprocess)."""

import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent("""
    import ctypes, sys, threading
    from vaultmem.arenas import cap_malloc_arenas
    capped = cap_malloc_arenas() if sys.argv[1] == "cap" else False
    hold, together = [], threading.Barrier(8)
    def allocate():   # all alive at once: a thread that ended hands its arena to the next
        together.wait()
        hold.extend(bytearray(4096) for _ in range(200))   # past pymalloc: glibc's malloc
        together.wait()
    threads = [threading.Thread(target=allocate) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    out = libc.fopen(sys.argv[2].encode(), b"w")
    libc.malloc_info(0, out)
    libc.fclose(out)
    print(capped)
""")


def arenas(tmp_path, mode: str) -> tuple[str, int]:
    report = tmp_path / f"{mode}.xml"
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(report)], capture_output=True,
                          text=True, env=env, timeout=60, check=True)
    return done.stdout.strip(), report.read_text().count("<heap nr=")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas")
def test_threads_share_two_arenas_once_capped(tmp_path):
    capped, heaps = arenas(tmp_path, "cap")
    assert capped == "True" and heaps <= 2
    uncapped, heaps_before = arenas(tmp_path, "plain")
    assert uncapped == "False" and heaps_before > 2   # what the cap changes: a heap per thread


def test_the_persons_malloc_arena_max_stands(monkeypatch):
    from vaultmem.arenas import cap_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert cap_malloc_arenas() is False


THRESHOLD_PROBE = textwrap.dedent("""
    import ctypes, sys
    from vaultmem.arenas import tune_malloc
    tuned = all(tune_malloc().values()) if sys.argv[1] == "tune" else False
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    def rss_mb():
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmRSS:")) / 1024
    def block(size):
        address = libc.malloc(size)
        libc.memset(address, 1, size)   # touched: resident
        return address
    SMALL, BIG = 2 << 20, 8 << 20
    libc.free(block(BIG))   # glibc's sliding threshold rises past BIG here
    temporary = block(SMALL)   # a query's temporary, at the heap's top
    held = rss_mb()
    libc.free(temporary)
    kept = held - rss_mb()
    blocks, pins = [], []
    for _ in range(13):   # a smaller allocation after each block pins it in the heap
        blocks.append(block(BIG))
        pins.append(libc.malloc(200 << 10))   # too big for any free hole: taken from the top
    held = rss_mb()
    for address in blocks:
        libc.free(address)
    print(tuned, round(kept, 1), round(held - rss_mb()))
""")


def returned_mb(mode: str) -> tuple[str, float, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", THRESHOLD_PROBE, mode], capture_output=True,
                          text=True, env=env, timeout=60, check=True)
    tuned, small, big = done.stdout.split()
    return tuned, float(small), int(big)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's thresholds")
def test_freed_big_blocks_go_back_to_the_system_and_a_temporary_stays_for_reuse():
    tuned, small, big = returned_mb("tune")
    assert tuned == "True" and big >= 95      # 13 blocks of 8 MiB: 104 MB unmapped
    assert small <= 0.5                        # a freed 2 MiB at the heap's top is kept
    plain, _, kept = returned_mb("plain")
    assert plain == "False" and kept <= 10     # what it changes: the heap kept the big ones


def test_the_persons_thresholds_stand(monkeypatch):
    from vaultmem.arenas import fix_mmap_threshold, tune_malloc

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert fix_mmap_threshold() is False
    assert tune_malloc() == {"arenas": False, "mmap_threshold": False, "trim_threshold": False}
