"""`extract`: transcripts -> session notes and memory notes."""

import os

import click

from vaultmem.cli.app import ask, cli, emit_json, pass_ctx

FORMATS = ["jsonl", "chatgpt", "claude", "markdown"]


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Transcript format (default: sniffed).")
@click.option("--llm", is_flag=True, help="Use the LLM endpoint of config.toml [llm] instead of the offline rules.")
@click.option("--user", help="Namespace to write into (default: the config's user).")
@click.option("--dry-run", is_flag=True, help="Show what would be written, write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@pass_ctx
def extract(ctx, files, fmt, llm, user, dry_run, as_json):
    """Turn transcripts into session notes and typed memory notes."""
    # The daemon's working folder is the vault: hand it absolute paths.
    args = dict(paths=[os.path.abspath(f) for f in files], format=fmt, llm=llm, user=user, dry_run=dry_run)
    report = ask(ctx, "extract", args)
    for error in report["errors"]:
        click.echo(f"Error: {error}", err=True)
    for warning in report["warnings"]:
        click.echo(f"Warning: {warning}", err=True)
    if as_json:
        emit_json(report)
    else:
        verb = "would write" if dry_run else "wrote"
        click.echo(f"run {report['run']}: {report['sessions']} session(s); {report['created']} created, "
                   f"{report['updated']} updated, {report['superseded']} superseded, "
                   f"{report['rejected']} rejected, {report['unchanged']} unchanged")
        for d in report["decisions"]:
            where = f" -> {d['path']}" if d.get("path") else ""
            click.echo(f"  {d['action']:<10} {d['type']:<10} {d['content'][:70]}{where}")
            if d["action"] != "created":
                click.echo(f"             why: {d['reason']}")
        click.echo(f"{verb} {len(report['notes'])} note(s)")
    if report["errors"] and not report["sessions"]:
        raise SystemExit(1)
