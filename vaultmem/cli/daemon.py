"""Daemon commands: `daemon start|stop|status|run` and `service install|uninstall`."""

import sys

import click

from vaultmem.cli.app import cli, emit_json, pass_ctx

NOT_RUNNING_EXIT = 3  # as `systemctl status` does for an inactive unit


def _root(ctx):
    from vaultmem.store.vault import find_vault

    return find_vault(ctx.vault_opt)


@cli.group()
def daemon():
    """The background watcher and query server for this vault."""


@daemon.command()
@click.option("--timeout", default=60.0, show_default=True, help="Seconds to wait for it to answer.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def start(ctx, timeout, as_json):
    """Start the daemon in the background (returns once it answers)."""
    from vaultmem.daemon.control import start_daemon

    result = start_daemon(_root(ctx), timeout=timeout)
    if as_json:
        emit_json(result)
    elif result["started"]:
        click.echo(f"vaultmem daemon started (pid {result['pid']}); log: {result['log']}")
    else:
        click.echo(f"vaultmem daemon already running (pid {result['pid']})")


@daemon.command()
@click.option("--timeout", default=130.0, show_default=True,
              help="Seconds to wait for the write in flight to finish.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def stop(ctx, timeout, as_json):
    """Stop the daemon gracefully (it finishes the write in flight)."""
    from vaultmem.daemon.control import stop_daemon

    result = stop_daemon(_root(ctx), timeout=timeout)
    if as_json:
        emit_json(result)
    elif result["stopped"]:
        click.echo(f"vaultmem daemon stopped (pid {result['pid']})")
    else:
        click.echo("vaultmem daemon is not running")


@daemon.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_ctx
def status(ctx, as_json):
    """Show pid, uptime, notes indexed, queue and last error (exit 3 if not running)."""
    from vaultmem.daemon.control import daemon_status

    result = daemon_status(_root(ctx))
    if as_json:
        emit_json(result)
    elif not result["running"]:
        click.echo(f"vaultmem daemon is not running for {result['vault']}")
    else:
        _print_status(result)
    if not result["running"]:
        sys.exit(NOT_RUNNING_EXIT)


def _print_status(result):
    click.echo(f"vaultmem daemon running (pid {result.get('pid')}) for {result.get('vault')}")
    if result.get("state") == "unreachable":
        click.echo(f"  not answering: {result['last_error']['reason']}")
        return
    click.echo(f"  state: {result['state']}, up {_duration(result['uptime_seconds'])}")
    indexed = result["notes_indexed"]
    click.echo(f"  notes indexed: {'counting' if indexed is None else indexed}, "
               f"queue: {result['queue']}")
    scan = result.get("scan")  # absent from a daemon older than the field
    if scan:
        click.echo(f"  startup scan: {_scan_text(scan)}")
    error = result.get("last_error")
    click.echo(f"  last error: {error['path']}: {error['reason']}" if error else "  last error: none")
    mcp = result.get("mcp_http")  # `[mcp] http` set
    if mcp:
        served = mcp["url"] if mcp.get("url") else f"not served: {mcp['error']}"
        click.echo(f"  MCP on HTTP: {served}")
    plugin = result.get("obsidian")  # once some user has an Obsidian token
    if plugin and (plugin.get("url") or not plugin["error"].startswith("no Obsidian token")):
        served = plugin["url"] if plugin.get("url") else f"not served: {plugin['error']}"
        click.echo(f"  Obsidian plugin: {served}")
    click.echo(f"  log: {result['log']}")


def _scan_text(scan):
    if scan["phase"] == "done":
        return f"done in {scan['seconds']:.1f} s" if scan.get("seconds") is not None else "done"
    if scan["phase"] in ("checking", "building") and scan.get("total") is not None:
        done = f"{scan['checked']} of {scan['total']} notes checked" if scan["phase"] == "checking" else \
            f"{scan['checked']:,} of {scan['total']:,} chunks embedded"
        if scan.get("seconds_left") is not None:
            from vaultmem.cli.progress import duration

            done += f", ~{duration(scan['seconds_left'])} left"
        return f"{scan['phase']}, {done} (searches meanwhile say their results may miss recent notes)"
    return scan["phase"]


def _duration(seconds):
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


@daemon.command()
@pass_ctx
def run(ctx):
    """Run the daemon in the foreground (what a service manager runs); Ctrl-C stops it."""
    from vaultmem.daemon.runner import run_daemon

    run_daemon(_root(ctx), foreground=True)


@cli.group()
def service():
    """A systemd user unit (Linux) or launchd agent (macOS) that runs the daemon at login."""


@service.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def install(ctx, as_json):
    """Write the unit for this vault and print how to enable it."""
    from vaultmem.daemon.service import install_service

    result = install_service(_root(ctx))
    if as_json:
        emit_json(result)
        return
    click.echo(f"wrote {result['installed']}")
    click.echo(f"enable and start it with:\n  {result['enable']}")


@service.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def uninstall(ctx, as_json):
    """Stop and remove this vault's unit."""
    from vaultmem.daemon.service import uninstall_service

    result = uninstall_service(_root(ctx))
    if as_json:
        emit_json(result)
        return
    if result["removed"] is None:
        click.echo(f"no {result['manager']} unit installed for this vault ({result['name']})")
        return
    click.echo(f"removed {result['removed']}")
    if result["disable"]:
        click.echo(f"if it is still running, stop it with:\n  {result['disable']}")
