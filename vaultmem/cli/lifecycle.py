"""Lifecycle commands: gc (decay and archive), correct, log (audit trail)."""

import click

from vaultmem.cli.app import ask, cli, emit_json, pass_ctx


@cli.command()
@click.option("--dry-run", is_flag=True, help="List what would be archived, change nothing.")
@click.option("--user", help="Only this namespace.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def gc(ctx, dry_run, user, as_json):
    """Archive low-importance memories nobody has recalled for a while (config [gc])."""
    args = dict(dry_run=dry_run, user=user)
    result = ask(ctx, "gc", args)
    if as_json:
        emit_json(result)
        return
    verb = "would archive" if dry_run else "archived"
    for item in result["plan"]:
        click.echo(f"{verb}: {item['path']}\n  why: {item['reason']}")
    click.echo(f"{len(result['plan'])} memories {verb}" if result["plan"] else "Nothing to archive.")


@cli.command()
@click.argument("note")
@click.argument("text")
@click.option("--user", help="Namespace the note must belong to.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
@pass_ctx
def correct(ctx, note, text, user, as_json):
    """Supersede NOTE with its corrected TEXT (the old version is kept as superseded)."""
    args = dict(ref=note, text=text, user=user)
    result = ask(ctx, "correct", args)
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['action']}: {result.get('path') or '-'}")
    click.echo(f"  why: {result['reason']}")


@cli.command()
@click.option("-n", "--limit", default=50, show_default=True, help="How many events.")
@click.option("--run", "run_id", help="Only the events of this extraction run.")
@click.option("--user", help="Only this namespace's notes.")
@click.option("--json", "as_json", is_flag=True, help="Print the events as JSON.")
@pass_ctx
def log(ctx, limit, run_id, user, as_json):
    """What happened to memories: created, updated, superseded, archived, forgotten, rolled back."""
    events = ctx.memory().log(limit=limit, run=run_id, user=user)
    if as_json:
        emit_json(events)
        return
    for event in events:
        run = f" [{event['run']}]" if event["run"] else ""
        click.echo(f"{event['date'][:19]}  {event['what']:<18} {event['message']}{run}")
        for path in event["paths"][:5]:
            click.echo(f"    {path}")
        if len(event["paths"]) > 5:
            click.echo(f"    ... and {len(event['paths']) - 5} more")
    if not events:
        click.echo("No memory changes recorded yet.")
