"""The same generated cases whatever ran before in the test process.

Hypothesis (6.131 on) draws now and then from the literals of every local module loaded so far
(`hypothesis.internal.conjecture.providers._get_local_constants`), so the cases of a
derandomized test changed with the tests that ran before it in the process: with a `-k`
selection, or with how pytest-xdist dealt the modules to its workers (loading vaultmem's lazy
modules and benchmarks/). `pin_local_constants` fixes that pool to the literals of the
package's own source files, read without importing them, for the whole run.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType


def pin_local_constants(package: Path) -> bool:
    """Make Hypothesis draw local constants from `package`'s .py files only; False (nothing
    done) on a Hypothesis without that pool."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants, constants_from_module
        from hypothesis.internal.floats import float_to_int
        from sortedcontainers import SortedSet
    except ImportError:
        return False
    if not hasattr(providers, "_get_local_constants"):
        return False
    pinned = []

    def package_constants():
        if not pinned:
            # Sorted sets (as Hypothesis keeps its own pool), so the order never depends
            # on string hashing.
            pool = Constants(integers=SortedSet(), floats=SortedSet(key=float_to_int),
                             bytes=SortedSet(), strings=SortedSet())
            for path in sorted(package.rglob("*.py")):
                module = ModuleType(path.stem)
                module.__file__ = str(path)
                pool |= constants_from_module(module)
            pinned.append(pool)
        return pinned[0]

    providers._get_local_constants = package_constants
    providers.CONSTANTS_CACHE.cache.clear()
    return True
