"""glibc's malloc tuned for a long-lived vaultmem process: two arenas, fixed mmap and trim thresholds.

glibc gives each thread that allocates its own arena, up to 8 per core, and an arena other
than the main one keeps its high-water mark: pages freed inside it stay mapped
(`malloc_trim` returns little). LanceDB's writer threads, ONNX Runtime's and the tokenizer's
each left their peaks behind, so a long extraction grew ~13 MB a commit while Python's own
memory stayed flat (tracemalloc: 26 -> 28 MB over 8,000 turns, RSS 391 -> 520 MB); with two
arenas the same run grew a third as much. Set before the threads start (the CLI's and the
daemon's first step); a `MALLOC_ARENA_MAX` in the environment is the person's and stands.

glibc also raises its mmap threshold to the size of each mapped block it frees (up to 32 MB),
so once a snapshot's 19 MB vector matrix had been freed the next ones came from the heap,
whose pages a small allocation above them keeps. A fixed threshold of 4 MiB gives every bigger
block its own mapping, returned to the system when freed; the trim threshold is fixed at 32 MiB
(glibc's own would stay at 128 KiB once the mmap one is set), so a query's temporaries (a few
MB at 100k chunks) are reused from the heap's top instead of given back and faulted in again
(+3 ms a search at 100k chunks with 1 MiB and no trim threshold). Side by side, three daemons
each on a 12,200-chunk vault after 20 searches and 20 edits: RSS 394-427 MB, peak 447-478,
with glibc's sliding thresholds; 397-401 MB, peak 445-449, with these. A
`MALLOC_MMAP_THRESHOLD_` or `MALLOC_TRIM_THRESHOLD_` in the environment stands.
"""

from __future__ import annotations

import os
import sys

ARENAS = 2
MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 32 << 20
_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def tune_malloc() -> dict:
    """The three settings, before any thread starts (the CLI's and the daemon's first step):
    `{"arenas": bool, "mmap_threshold": bool, "trim_threshold": bool}`, False where not set."""
    return {"arenas": cap_malloc_arenas(), "mmap_threshold": fix_mmap_threshold(),
            "trim_threshold": _mallopt("MALLOC_TRIM_THRESHOLD_", _M_TRIM_THRESHOLD, TRIM_THRESHOLD)}


def cap_malloc_arenas(limit: int = ARENAS) -> bool:
    """Cap glibc's arenas at `limit` for threads started from now on; False where the C
    library is not glibc, or the environment already says how many."""
    return _mallopt("MALLOC_ARENA_MAX", _M_ARENA_MAX, limit)


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Map every block of `size` bytes or more on its own, and keep that threshold fixed;
    False where the C library is not glibc, or the environment already sets it."""
    return _mallopt("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, size)


def _mallopt(variable: str, option: int, value: int) -> bool:
    if not sys.platform.startswith("linux") or variable in os.environ:
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(option, int(value)) == 1
