"""`python -m vaultmem ...`: the command line, for when the `vaultmem` script is not on PATH
(and as the merge driver git runs calls it)."""

from vaultmem.cli import main

main()
