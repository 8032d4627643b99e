"""Version commands: history, diff, rollback, forget (git is the record)."""

import click

from vaultmem.cli.app import ask, cli, emit_json, pass_ctx

_json = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
_user = click.option("--user", help="Only if NOTE belongs to this namespace.")


@cli.command()
@click.argument("note")
@_user
@_json
@pass_ctx
def history(ctx, note, user, as_json):
    """Every version of NOTE, newest first (renames followed), with author and action."""
    result = ctx.memory().history(note, user=user)
    if as_json:
        emit_json(result)
        return
    if not result["versions"]:
        click.echo(f"{result['note']} has no committed versions yet.")
    for v in result["versions"]:
        moved = f"  (from {v['old_path']})" if v["old_path"] else ""
        click.echo(f"{v['short']}  {v['date']}  {v['action']:<12} {v['author']:<16} {v['message']}{moved}")


@cli.command()
@click.argument("note")
@click.argument("rev", required=False)
@_user
@_json
@pass_ctx
def diff(ctx, note, rev, user, as_json):
    """What changed in NOTE: REV against now, or (without REV) its latest change."""
    result = ctx.memory().diff(note, rev, user=user)
    if as_json:
        emit_json(result)
    elif result["diff"]:
        click.echo(result["diff"], nl=False)
    else:
        click.echo("No differences.")


@cli.command()
@click.argument("note", required=False)
@click.option("--to", "rev", help="The revision to restore NOTE to (see `vaultmem history NOTE`).")
@click.option("--run", "run", help="Undo everything this extraction run wrote.")
@_user
@_json
@pass_ctx
def rollback(ctx, note, rev, run, user, as_json):
    """Restore NOTE to an earlier version, or undo a whole extraction run (new commit)."""
    if (run and (note or rev)) or (not run and not (note and rev)):
        raise click.UsageError("give either NOTE --to REV or --run RUN")
    args = dict(ref=note, to=rev, run=run, user=user)
    result = ask(ctx, "rollback", args)
    if as_json:
        emit_json(result)
        return
    what = f"run {run}" if run else f"{result['note']} to {result['rev'][:8]}"
    click.echo(f"Rolled back {what}" + (f" in commit {result['commit'][:8]}" if result["commit"] else
                                        " (nothing to change)"))
    for path in result["restored"]:
        click.echo(f"  restored {path}")
    for path in result["removed"]:
        click.echo(f"  removed  {path}")
    for path in result.get("later_changes", []):
        click.echo(f"  note: {path} had changed after the run; the later version is in its history")


@cli.command()
@click.argument("note")
@click.option("--purge", is_flag=True, help="Also erase it from every commit of git history.")
@click.option("--force", is_flag=True, help="Purge even if the history was already pushed.")
@_user
@_json
@pass_ctx
def forget(ctx, note, purge, force, user, as_json):
    """Archive NOTE (out of search, kept in history), or --purge it from history too."""
    if force and not purge:
        raise click.UsageError("--force only applies with --purge")
    args = dict(ref=note, purge=purge, force=force, user=user)
    result = ask(ctx, "forget", args)
    if as_json:
        emit_json(result)
        return
    if not purge:
        click.echo(f"Archived {result['from']} -> {result['note']}")
        return
    click.echo(f"Purged {result['note']} (also known as: {', '.join(result['paths'])})")
    for hub in result.get("hubs_removed", []):
        click.echo(f"  with its entity hub {hub} (nothing else links to it)")
    for turns in result.get("turns_redacted", []):
        click.echo(f"Redacted the source turns {', '.join(turns['turns'])} of {turns['note']}")
    click.echo(f"Rewrote {len(result['rewritten'])} commits; moved {', '.join(result['refs']) or 'no refs'}:")
    for pair in result["rewritten"]:
        click.echo(f"  {pair['old'][:12]} -> {pair['new'][:12]}")
    if "index" in result:
        click.echo(f"Index rewritten: {result['index']['versions_removed']} old versions and "
                   f"{result['index']['files_removed']} files deleted; state.db: "
                   f"{result['state']['rows_removed']} rows deleted, vacuumed")
    for warning in result["warnings"]:
        click.echo(f"warning: {warning}", err=True)
