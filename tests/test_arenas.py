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
