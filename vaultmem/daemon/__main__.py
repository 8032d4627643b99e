"""`python -m vaultmem.daemon --vault PATH`: the process `daemon start` and the service run."""

import argparse
import sys

from vaultmem.errors import VaultmemError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vaultmem.daemon")
    parser.add_argument("--vault", help="vault folder (default: $VAULTMEM_VAULT or the "
                                        "nearest vault upward)")
    parser.add_argument("--background", action="store_true",
                        help="log only to .vaultmem/daemon.log (set by `daemon start`)")
    options = parser.parse_args(argv)
    from vaultmem.arenas import tune_malloc
    from vaultmem.daemon.runner import run_daemon

    tune_malloc()  # before the model's and the index's threads (see vaultmem/arenas.py)
    try:
        run_daemon(options.vault, foreground=not options.background)
    except VaultmemError as exc:
        print(f"vaultmem daemon: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
