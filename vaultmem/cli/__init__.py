"""vaultmem's command line: one click group, commands registered by area modules."""

from vaultmem.cli.app import cli

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
    from vaultmem.arenas import cap_malloc_arenas

    cap_malloc_arenas()  # before any thread starts (see vaultmem/arenas.py)
    cli(prog_name="vaultmem")
