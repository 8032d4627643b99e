"""Agent integration commands: mcp (the MCP server on stdio or HTTP, its tokens) and export
(hot-set files)."""

import click

from vaultmem.cli.app import cli, emit_json, pass_ctx

EXPORT_FORMATS = ("claude", "agents", "hermes")
DEFAULT_HTTP = "127.0.0.1:8765"  # config.MCP_DEFAULT_ADDRESS (the CLI starts without importing config)


@cli.group(invoke_without_command=True)
@click.option("--http", "address", is_flag=False, flag_value=DEFAULT_HTTP, default=None,
              metavar="[HOST:PORT]", help=f"Serve on streamable HTTP instead (default {DEFAULT_HTTP}; "
              "every request needs a token from `vaultmem mcp token`).")
@click.pass_context
def mcp(click_ctx, address):
    """Serve this vault to MCP clients (Claude, Cursor, Hermes...) on stdin/stdout, or on HTTP."""
    if click_ctx.invoked_subcommand is not None:
        return
    vault_opt = click_ctx.obj.vault_opt
    if address is None:
        from vaultmem.agents.mcp_server import serve

        serve(vault_opt)
        return
    from vaultmem.agents.mcp_http import HttpServer, is_loopback
    from vaultmem.store.vault import find_vault

    server = HttpServer(find_vault(vault_opt), address)
    click.echo(f"vaultmem MCP server on {server.url} (Authorization: Bearer <token>)", err=True)
    if not is_loopback(server.host):
        click.echo("warning: plain HTTP reaches beyond this machine — put TLS in front "
                   "(Caddy, nginx) and bind 127.0.0.1 behind it", err=True)
    server.run()


@mcp.command()
@click.option("--user", help="Whose memory the token reaches (default: the config's user).")
@click.option("--new", "new", is_flag=True, help="Make a new token, replacing the user's old one.")
@click.option("--revoke", is_flag=True, help="Delete the user's token: it stops working at once.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def token(ctx, user, new, revoke, as_json):
    """Make (or replace, or revoke) the bearer token one user's MCP clients send over HTTP.

    The token is printed once; the vault keeps only its hash (.vaultmem/mcp_tokens.json)."""
    from vaultmem.agents import mcp_tokens
    from vaultmem.store.config import load_config
    from vaultmem.store.vault import find_vault

    if new and revoke:
        raise click.UsageError("give --new or --revoke, not both")
    root = find_vault(ctx.vault_opt)
    user = user or load_config(root).user
    if revoke:
        if not mcp_tokens.revoke(root, user):
            raise click.ClickException(f"{user!r} has no MCP token — nothing to revoke")
        emit_json({"user": user, "revoked": True}) if as_json else click.echo(f"Revoked {user}'s token.")
        return
    held = mcp_tokens.existing(root, user)
    if held and not new:
        raise click.ClickException(f"{user!r} already has an MCP token (made {held.get('created')}); "
                                   "only its hash is kept, so it cannot be shown again — run "
                                   f"`vaultmem mcp token --user {user} --new` to replace it")
    made = mcp_tokens.issue(root, user)
    if as_json:
        emit_json(dict(made, file=str(mcp_tokens.tokens_path(root))))
        return
    click.echo(made["token"])
    click.echo(f"Token for {user}, shown only now: clients send `Authorization: Bearer <token>`; "
               "every call with it acts as this user.", err=True)


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
