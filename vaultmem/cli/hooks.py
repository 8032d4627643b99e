"""`hook`: one-line commands for agents' lifecycle hooks (README "Agent hooks")."""

import json
import sys

import click

from vaultmem.cli.app import cli, emit_json, pass_ctx


@cli.group()
def hook():
    """Commands an agent's hooks run (Claude Code's settings.json `hooks`)."""


@hook.command("session-end")
@click.option("--json", "as_json", is_flag=True, help="Print where the transcript went as JSON.")
@pass_ctx
def session_end(ctx, as_json):
    """Read the hook's JSON on stdin (Claude Code's SessionEnd or Stop: `transcript_path`)
    and copy that transcript into the inbox, where the daemon extracts it."""
    from vaultmem.daemon.inbox import drop
    from vaultmem.errors import TranscriptError

    path = _transcript_path(sys.stdin.read())
    try:
        landed = drop(ctx.memory().vault, path)
    except TranscriptError as exc:
        raise click.ClickException(str(exc)) from None
    rel = landed.relative_to(ctx.memory().vault.root).as_posix()
    if as_json:
        emit_json({"transcript": path, "inbox": rel})
    else:
        click.echo(f"queued {rel} for the daemon")


def _transcript_path(stdin: str) -> str:
    """`transcript_path` of the hook's JSON input; a ClickException saying what is wrong."""
    try:
        data = json.loads(stdin)
    except ValueError as exc:
        raise click.ClickException(f"stdin is not the hook's JSON ({exc}) — run this from an agent's "
                                   'SessionEnd hook, or pipe {"transcript_path": "..."} into it') from None
    path = data.get("transcript_path") if isinstance(data, dict) else None
    if not isinstance(path, str) or not path:
        raise click.ClickException("the hook's JSON has no 'transcript_path' — use a Claude Code "
                                   "SessionEnd or Stop hook, which sends it")
    return path
