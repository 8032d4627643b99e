"""Agent integration commands: mcp (the MCP server on stdio or HTTP, its tokens), obsidian
(the plugin's token) and export (hot-set files)."""

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


def _token_options(fn):
    for option in reversed((
            click.option("--user", help="Whose memory the token reaches (default: the config's user)."),
            click.option("--new", "new", is_flag=True, help="Make a new token, replacing the user's old one."),
            click.option("--revoke", is_flag=True, help="Delete the user's token: it stops working at once."),
            click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."))):
        fn = option(fn)
    return pass_ctx(fn)


@mcp.command()
@_token_options
def token(ctx, user, new, revoke, as_json):
    """Make (or replace, or revoke) the bearer token one user's MCP clients send over HTTP.

    The token is printed once; the vault keeps only its hash (.vaultmem/mcp_tokens.json)."""
    made = _token(ctx, "mcp", user, new, revoke, as_json)
    if made is not None and not as_json:
        click.echo(f"Token for {made['user']}, shown only now: clients send `Authorization: Bearer "
                   "<token>`; every call with it acts as this user.", err=True)


@cli.group()
def obsidian():
    """The Obsidian plugin's door into the daemon (a loopback HTTP API, `obsidian-plugin/`)."""


@obsidian.command(name="token")
@_token_options
def obsidian_token(ctx, user, new, revoke, as_json):
    """Make (or replace, or revoke) the token the vaultmem Obsidian plugin sends.

    Paste it into Obsidian (Settings → vaultmem); the vault keeps only its hash. While some
    user has one, the daemon serves the plugin on 127.0.0.1 (the port it picked is in
    .vaultmem/obsidian.json); a daemon already running starts serving at once."""
    made = _token(ctx, "obsidian", user, new, revoke, as_json)
    if made is None:
        return
    from vaultmem.errors import VaultmemError
    from vaultmem.ipc.client import try_request

    try:  # the token is made and printed whatever the daemon answers
        serving = try_request(made["root"], "obsidian_api", {})
    except VaultmemError as exc:
        serving = {"url": None, "error": f"{exc} — restart it (`vaultmem daemon stop`, then `start`)"}
    if as_json:
        return
    click.echo(f"Token for {made['user']}, shown only now: paste it into Obsidian → Settings → "
               "vaultmem.", err=True)
    if serving and serving.get("url"):
        click.echo(f"The daemon serves the plugin on {serving['url']}.", err=True)
    elif serving and serving.get("error"):
        click.echo(f"The daemon cannot serve the plugin: {serving['error']}", err=True)
    else:
        click.echo("Start the daemon (`vaultmem daemon start`): it serves the plugin.", err=True)


def _token(ctx, client: str, user, new, revoke, as_json) -> dict | None:
    """The token command of `client` ("mcp", "obsidian"): the token made (printed) with
    "root" added, or None when one was revoked."""
    from vaultmem.agents import mcp_tokens
    from vaultmem.store.config import load_config
    from vaultmem.store.vault import find_vault

    if new and revoke:
        raise click.UsageError("give --new or --revoke, not both")
    root = find_vault(ctx.vault_opt)
    user = user or load_config(root).user
    name = {"mcp": "MCP token", "obsidian": "Obsidian token"}[client]
    command = f"{client} token"
    if revoke:
        if not mcp_tokens.revoke(root, user, client):
            raise click.ClickException(f"{user!r} has no {name} — nothing to revoke")
        emit_json({"user": user, "revoked": True}) if as_json else click.echo(f"Revoked {user}'s token.")
        return None
    held = mcp_tokens.existing(root, user, client)
    if held and not new:
        raise click.ClickException(f"{user!r} already has an {name} (made {held.get('created')}); "
                                   "only its hash is kept, so it cannot be shown again — run "
                                   f"`vaultmem {command} --user {user} --new` to replace it")
    made = mcp_tokens.issue(root, user, client)
    if as_json:
        emit_json(dict(made, file=str(mcp_tokens.tokens_path(root))))
    else:
        click.echo(made["token"])
    return dict(made, root=root)


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
