"""`python -m vaultmem`: the command line, as the merge driver git runs calls it."""

from vaultmem.cli import main

main()
