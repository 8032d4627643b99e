"""`extract`: transcripts -> session notes and memory notes."""

import os
import signal
from contextlib import contextmanager

import click

from vaultmem.cli.app import cli, emit_json, pass_ctx, via_daemon, warn

# As `extract.importers.FORMATS` (not imported here: `vaultmem --help` stays fast).
FORMATS = ["jsonl", "chatgpt", "claude", "markdown", "claude-code", "codex"]
LISTED = 200  # decisions printed one by one; the counts cover all of them
MODEL_HINT = ("The offline rules {verb} these memories; to let your own model write them, "
              "see `vaultmem init` or README 'Setting up a model'.")


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Transcript format (default: sniffed).")
@click.option("--llm/--no-llm", default=None,
              help="Ask the model of config.toml [llm] for this run, or keep to the offline rules "
                   "(default: as [llm] enabled says).")
@click.option("--user", help="Namespace to write into (default: the config's user).")
@click.option("--dry-run", is_flag=True, help="Show what would be written, write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@pass_ctx
def extract(ctx, files, fmt, llm, user, dry_run, as_json):
    """Turn transcripts into session notes and typed memory notes. Sessions are committed
    as they are done: an interrupted run keeps them, and running it again resumes."""
    # The daemon's working folder is the vault: hand it absolute paths.
    args = dict(paths=[os.path.abspath(f) for f in files], format=fmt, user=user, dry_run=dry_run)
    if llm is not None:  # left out, whoever runs it does as its [llm] enabled says
        args["llm"] = llm
    report = via_daemon(ctx, "extract", args)
    if report is None:
        from vaultmem.cli.progress import ProgressLine

        line = ProgressLine(enabled=not as_json)
        try:
            with sigterm_interrupts():
                report = ctx.memory().extract(**args, progress=lambda *done: line.show(_status(line, *done)))
        finally:
            line.close()
    warn(report)
    if report.get("embedding_model"):
        switched = report["embedding_model"]
        click.echo(f"Embedding model: {switched['model']} from now on ({switched['why']}).", err=True)
    for error in report["errors"]:
        click.echo(f"Error: {error}", err=True)
    for warning in report["warnings"]:
        if warning != report.get("warning"):
            click.echo(f"Warning: {warning}", err=True)
    # A file that failed fails the command, though the good ones were imported: a script
    # (or the agent hook) must not take a half-done batch for success.
    bad_files = report.get("failed") or []
    nothing = bool(report["errors"]) and not report["sessions"]
    if as_json:
        emit_json(report)
    elif nothing:
        click.echo("Nothing was extracted.", err=True)
    else:
        _print_summary(report, dry_run)
    if bad_files and not nothing and not as_json:
        click.echo(f"{len(bad_files)} of {len(files)} file(s) failed and nothing of them was imported: "
                   + ", ".join(os.path.basename(f["path"]) for f in bad_files)
                   + " — fix them and run extract on them again", err=True)
    if llm is None and not as_json and not nothing and report.get("model", "") is None:
        click.echo(MODEL_HINT.format(verb="would write" if dry_run else "wrote"))
    if nothing or bad_files:
        raise SystemExit(1)


def _status(line, done, total, turns, turns_total) -> str:
    from vaultmem.cli.progress import rate_and_left

    rate = rate_and_left(turns, turns_total, line.elapsed(), "turns")
    return f"extract: session {done:,}/{total:,} · {turns:,} turns" + (f" · {rate}" if rate else "")


def _print_summary(report, dry_run):
    verb = "would write" if dry_run else "wrote"
    resumed = f"; {report['resumed']} already done, skipped" if report.get("resumed") else ""
    click.echo(f"run {report['run']}: {report['sessions']} session(s){resumed}; {report['created']} created, "
               f"{report['updated']} updated, {report['superseded']} superseded, "
               f"{report['rejected']} rejected, {report['unchanged']} unchanged")
    for d in report["decisions"][:LISTED]:
        where = f" -> {d['path']}" if d.get("path") else ""
        click.echo(f"  {d['action']:<10} {d['type']:<10} {d['content'][:70]}{where}")
        if d["action"] != "created":
            click.echo(f"             why: {d['reason']}")
    more = len(report["decisions"][LISTED:]) + report.get("decisions_left_out", 0)
    if more:
        click.echo(f"  ... and {more:,} more decision(s) (`--json` lists the first 1,000)")
    commits = report.get("commits") or []
    extra = (f" in {len(commits)} commits" if len(commits) > 1 else "")
    click.echo(f"{verb} {len(report['notes'])} note(s){extra}")


@contextmanager
def sigterm_interrupts():
    """SIGTERM stops the run like Ctrl-C: the step under way is undone, the finished ones
    stay committed (only the main thread may set a handler; elsewhere nothing changes)."""
    def interrupt(_signum, _frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
