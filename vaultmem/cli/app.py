"""The click group every command module registers on, and the helpers they share."""

import json
import os

import click

from vaultmem.errors import VaultmemError


class Ctx:
    """Per-invocation state: the --vault option and a lazily opened Memory."""

    def __init__(self, vault_opt):
        self.vault_opt = vault_opt
        self._memory = None

    def memory(self, user=None):
        """The API object for this vault (opened once per command)."""
        if self._memory is None:
            from vaultmem.api import Memory

            self._memory = Memory(self.vault_opt)
        return self._memory


pass_ctx = click.make_pass_decorator(Ctx)


class VaultmemGroup(click.Group):
    """A group that turns any VaultmemError into a one-line message and exit code 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except VaultmemError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=VaultmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--vault", "vault_opt", type=click.Path(file_okay=False), envvar="VAULTMEM_VAULT",
              help="Vault folder (default: $VAULTMEM_VAULT, else the nearest folder upward "
                   "holding .vaultmem/ or .obsidian/).")
@click.version_option(package_name="obsidian-vaultmem", prog_name="vaultmem")
@click.pass_context
def cli(click_ctx, vault_opt):
    """vaultmem: long-term memory for AI agents, kept as Markdown in an Obsidian vault."""
    click_ctx.obj = Ctx(vault_opt)


def emit_json(data):
    """Print one JSON document on stdout (the --json contract)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def warn(result):
    """A result's `warning` on stderr (a search fallback, a change kept but not committed),
    and its `advice` (a Chinese question on an English-only model)."""
    if result.get("warning"):
        click.echo(f"warning: {result['warning']}", err=True)
    if result.get("advice"):
        click.echo(f"hint: {result['advice']}", err=True)


def via_daemon(ctx, op, args, why=None):
    """The daemon's answer to `op`, or None when no daemon runs (then work in-process;
    `why` gets the reason, see `client.try_request`). `args` must fit the protocol table
    (`vaultmem.ipc.protocol`); checked before sending."""
    from vaultmem.ipc.client import try_request
    from vaultmem.ipc.protocol import check

    check(op, args)
    return try_request(ctx.vault_opt, op, args, why=why)


def ask(ctx, op, args) -> dict:
    """`op` answered by the vault's daemon when one runs, else by `Memory.<op>` in-process
    (the protocol table names what exists; `cli.fallback` says what else that does); its
    `warning`, if any, goes to stderr."""
    why = []
    result = via_daemon(ctx, op, args, why)
    if result is None:
        from vaultmem.cli.fallback import in_process

        result = in_process(ctx, op, args, why[-1] if why else None)
    warn(result)
    return result


os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
