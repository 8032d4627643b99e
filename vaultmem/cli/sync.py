"""The hidden `merge-driver` command git runs for memory notes (see `vaultmem.sync.remote`)."""

import click

from vaultmem.cli.app import cli


@cli.command(name="merge-driver", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("ours", type=click.Path(dir_okay=False))
@click.argument("theirs", type=click.Path(dir_okay=False))
@click.argument("name", required=False, default="")
def merge_driver(base, ours, theirs, name):
    """Merge a memory note edited on two devices (git's `%O %A %B %P`); the result replaces
    OURS. Exit 1, with git's conflict markers, when a version is not a readable note."""
    from vaultmem.sync.merge import run_driver

    raise SystemExit(run_driver(base, ours, theirs, name))
