"""`python -m vaultmem ...`: the command line, for when the `vaultmem` script is not on PATH."""

from vaultmem.cli import main

main()
