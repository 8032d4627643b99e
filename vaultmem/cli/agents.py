"""Agent integration commands: mcp (the MCP server on stdio) and export (hot-set files)."""

import click

from vaultmem.cli.app import cli, emit_json, pass_ctx

EXPORT_FORMATS = ("claude", "agents", "hermes")


@cli.command()
@pass_ctx
def mcp(ctx):
    """Serve this vault to MCP clients (Claude, Cursor, Hermes...) on stdin/stdout."""
    from vaultmem.mcp_server import serve

    serve(ctx.vault_opt)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), required=True,
              help="claude: CLAUDE.md section; agents: AGENTS.md section; hermes: MEMORY.md + USER.md.")
@click.option("--out", type=click.Path(), help="Target file (hermes: folder). Default: the agent's "
              "user-wide file (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/.hermes/memories/).")
@click.option("--user", help="Namespace to export (default: the config's user).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@pass_ctx
def export(ctx, fmt, out, user, as_json):
    """Write the most important current memories where another agent reads them at start-up."""
    result = ctx.memory().export(fmt, out=out, user=user)
    if as_json:
        emit_json(result)
        return
    left = f", {result['left_out']} left out for size" if result["left_out"] else ""
    click.echo(f"Exported {result['memories']} memories ({result['chars']} characters{left}) to "
               + ", ".join(result["files"]))
    for item in result["flagged"]:
        click.echo(f"skipped {item['path']}: reads like instructions to a model "
                   "(see `vaultmem doctor`)", err=True)
