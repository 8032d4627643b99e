"""Foundation commands: init, add, show, list."""

import click

from vaultmem.cli.app import ask, cli, emit_json, pass_ctx
from vaultmem.store.layout import MEMORY_TYPES


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--model", help="Embedding model: use-multilingual-v3 (Chinese, English and more), "
              "all-MiniLM-L6-v2 (English), multilingual-e5-small, or a sentence-transformers "
              "folder (default: picked from the vault's language). On an existing vault it "
              "switches the model; `vaultmem reindex` then rebuilds the index.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def init(ctx, path, model, as_json):
    """Create vaultmem's layout, config and git repository in a vault (default: here)."""
    from vaultmem.api import init as init_api

    result = init_api(path or ctx.vault_opt or ".", model=model)
    if as_json:
        emit_json(result)
        return
    click.echo(f"Vault ready at {result['vault']}")
    for item in result["created"]:
        click.echo(f"  created {item}")
    if result.get("git"):
        click.echo(f"  git: {result['git']}")
    if result.get("merge_driver"):
        click.echo(f"  merge driver: {result['merge_driver']}")
    if result.get("model_reason"):
        click.echo(f"  embedding model: {result['model']} ({result['model_reason']})")
    notes = result.get("notes")
    if notes is not None:
        if notes["globs"]:
            click.echo(f"  your notes: {notes['count']} indexed read-only for search and context "
                       f"({', '.join(notes['globs'])}; never {', '.join(notes['left_out'])}); "
                       "vaultmem never edits, moves or commits them — [index] notes in "
                       ".vaultmem/config.toml changes this, [] turns it off")
        else:
            click.echo("  your notes: not indexed ([index] notes = [] in .vaultmem/config.toml)")
    _print_model_clis(result.get("model_clis") or [])


def _print_model_clis(found):
    """The model CLIs init found, each with the `[llm]` lines that turn it on; init turns none on."""
    import json

    if not found:
        click.echo("  model: the offline rules write the memory; for a model, set base_url, model and "
                   "api_key_env of an OpenAI-compatible endpoint under [llm] in .vaultmem/config.toml, "
                   "and enabled = true")
        return
    click.echo(f"  model CLIs on PATH: {', '.join(item['name'] for item in found)}. Nothing is sent to "
               "one until you turn it on: under [llm] in .vaultmem/config.toml, replace the lines "
               "`command = []` and `enabled = false` with those of the one you want:")
    for item in found:
        note = f" ({item['note']})" if item["note"] else ""
        click.echo(f"    {item['name']}{note}:")
        click.echo(f"      command = {json.dumps(item['command'])}")
        click.echo("      enabled = true")


@cli.command()
@click.argument("text")
@click.option("--type", "note_type", type=click.Choice(MEMORY_TYPES), default="fact", show_default=True)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--importance", type=click.FloatRange(0, 1), help="0 to 1 (default 0.5).")
@click.option("--title", help="File name for the note (default: from the text).")
@click.option("--user", help="Namespace to write into (default: the config's user).")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
@pass_ctx
def add(ctx, text, note_type, tags, importance, title, user, as_json):
    """Write one memory through the write policy (filters, dedup, supersede)."""
    if not text.strip():
        raise click.UsageError("TEXT is empty — give the memory as a sentence")
    args = dict(text=text, type=note_type, tags=list(tags), importance=importance, title=title, user=user)
    result = ask(ctx, "add", args)
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['action']}: {result.get('path') or '-'}")
    if result.get("reason"):
        click.echo(f"  why: {result['reason']}")
    if result.get("nearest"):
        click.echo("  nearest held memories:")
    for near in result.get("nearest") or ():
        text = " ".join(near["text"].split())
        click.echo(f"    {near['score']:.2f}  {near['path']}  {text[:80] + '…' if len(text) > 80 else text}")


@cli.command()
@click.argument("note")
@click.option("--at", "rev", help="Show the note as it was at this git revision.")
@click.option("--user", help="Only show the note if it belongs to this namespace.")
@click.option("--json", "as_json", is_flag=True, help="Print the note as JSON.")
@pass_ctx
def show(ctx, note, rev, user, as_json):
    """Show a memory note (NOTE is a path, a title or an id)."""
    result = ctx.memory().show(note, at=rev, user=user)
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['title']}  [{result['type']}, {result['status']}]  {result['path']}")
    for key, value in result["meta"].items():
        click.echo(f"  {key}: {value}")
    click.echo("")
    click.echo(result["body"].rstrip("\n"))


@cli.command(name="list")
@click.option("--type", "note_type", type=click.Choice(MEMORY_TYPES + ("session",)))
@click.option("--user", help="Only this namespace.")
@click.option("--status", type=click.Choice(["active", "superseded", "archived"]))
@click.option("--json", "as_json", is_flag=True, help="Print the notes as JSON.")
@pass_ctx
def list_(ctx, note_type, user, status, as_json):
    """List memory notes."""
    result = ctx.memory().list(type=note_type, user=user, status=status)
    if as_json:
        emit_json(result)
        return
    for note in result["notes"]:
        mark = "" if note["status"] == "active" else f" ({note['status']})"
        click.echo(f"{note['type']:<10} {note['title']}{mark}  — {note['path']}")
    click.echo(f"{len(result['notes'])} notes")
    for err in result["errors"]:
        click.echo(f"skipped {err['path']}: {err['reason']}", err=True)
