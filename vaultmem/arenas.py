"""glibc's malloc arenas, capped at two for a vaultmem process.

glibc gives each thread that allocates its own arena, up to 8 per core, and an arena other
than the main one keeps its high-water mark: pages freed inside it stay mapped
(`malloc_trim` returns little). LanceDB's writer threads, ONNX Runtime's and the tokenizer's
each left their peaks behind, so a long extraction grew ~13 MB a commit while Python's own
memory stayed flat (tracemalloc: 26 -> 28 MB over 8,000 turns, RSS 391 -> 520 MB); with two
arenas the same run grew a third as much. Set before the threads start (the CLI's and the
daemon's first step); a `MALLOC_ARENA_MAX` in the environment is the person's and stands.
"""

from __future__ import annotations

import os
import sys

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def cap_malloc_arenas(limit: int = ARENAS) -> bool:
    """Cap glibc's arenas at `limit` for threads started from now on; False where the C
    library is not glibc, or the environment already says how many."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_ARENA_MAX, int(limit)) == 1
