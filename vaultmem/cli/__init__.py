"""vaultmem's command line: one click group, commands registered by area modules."""

from vaultmem.cli.app import cli

__all__ = ["cli", "main"]

# Each module registers its commands on `cli` when imported.
from vaultmem.cli import core  # noqa: F401,E402  init, add, show, list
from vaultmem.cli import extract  # noqa: F401,E402
from vaultmem.cli import lifecycle  # noqa: F401,E402  gc, correct, log
from vaultmem.cli import index  # noqa: F401,E402  search, context, reindex, doctor, stats
from vaultmem.cli import history  # noqa: F401,E402  history, diff, rollback, forget
from vaultmem.cli import daemon  # noqa: F401,E402  daemon start|stop|status|run, service
from vaultmem.cli import agents  # noqa: F401,E402  mcp, export
from vaultmem.cli import sync  # noqa: F401,E402  merge-driver (hidden: git runs it)
from vaultmem.cli import hooks  # noqa: F401,E402  hook session-end


def main():
    """The process's entry (the `vaultmem` script, `python -m vaultmem`): the command, then
    `leave`. Python callers use `cli` (click's group), which returns or raises as usual."""
    from vaultmem.arenas import tune_malloc

    tune_malloc()  # before any thread starts (see vaultmem/arenas.py)
    try:
        cli(prog_name="vaultmem")
    except SystemExit as exc:
        leave(exc.code)
    leave(0)


def leave(code) -> None:
    """Exit as Python would - threads' exit hooks (idle worker pools stop), every non-daemon
    thread joined, atexit handlers run, output flushed - minus tearing the interpreter down:
    freeing every module and object and running LanceDB's and ONNX Runtime's destructors
    took 0.2-0.3 s after a cold `add` or `search` had printed its answer (~12 % of it).
    Everything vaultmem writes is on disk when a command returns (atomic writes with fsync,
    git and LanceDB commits), so nothing is lost by not freeing memory the OS takes back.
    Where the interpreter's hooks are not there to call, or coverage is measuring, it is
    plain `sys.exit`."""
    import atexit
    import os
    import sys
    import threading

    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"), as Python prints it
        print(code, file=sys.stderr)
        code = 1
    shutdown, run_exit_handlers = getattr(threading, "_shutdown", None), getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exit_handlers is None or "coverage" in sys.modules:
        sys.exit(code)
    shutdown()
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that left (`| head`), a closed stream
            code = code or 1
    os._exit(code)
