"""Read-path commands: search, context, reindex, doctor, stats."""

import click

from vaultmem.cli.app import ask, cli, emit_json, pass_ctx
from vaultmem.store.layout import NOTE_TYPES

SCOPE = click.Choice(["memories", "notes", "all", "both"])
SCOPE_HELP = ("memories (memory and session notes), notes (your own notes, read-only) "
              "or all (default; both is the same).")
PROJECT_HELP = ("A project's folder or name: leave out what was said only in other projects' agent "
                "sessions (facts and preferences about you stay).")
RERANK = click.Choice(["llm", "none"])
RERANK_HELP = ("llm: the [llm] model reorders the first 100 hits, each shown with its day and "
               "session (one request; slow on a small local model); none: the first stage's "
               "order. Default: [search] rerank.")


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 200), default=10, show_default=True, help="Hits to return.")
@click.option("--type", "note_type", type=click.Choice(NOTE_TYPES + ("note",)),
              help="Only this note type (note: your own notes).")
@click.option("--tag", help="Only notes with this tag (nested tags included).")
@click.option("--user", help="Namespace to search (default: the config's user).")
@click.option("--since", help="Only notes created on or after this date (YYYY-MM-DD).")
@click.option("--as-of", "as_of", help="What was valid on this date (YYYY-MM-DD).")
@click.option("--all", "all_", is_flag=True, help="Include superseded and archived memories.")
@click.option("--scope", type=SCOPE, default="all", show_default=True, help=SCOPE_HELP)
@click.option("--rerank", type=RERANK, help=RERANK_HELP)
@click.option("--project", help=PROJECT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print {query, hits} as JSON.")
@pass_ctx
def search(ctx, query, k, note_type, tag, user, since, as_of, all_, scope, rerank, project, as_json):
    """Ranked memories, session turns and passages of your own notes for QUERY."""
    args = dict(query=query, k=k, type=note_type, tag=tag, user=user, since=since, as_of=as_of, all=all_,
                scope=scope, project=_project_folder(project))
    args["rerank"] = "" if rerank == "none" else rerank or _configured_rerank(ctx)
    result = ask(ctx, "search", args)
    if as_json:
        emit_json(result)
        return
    if not result["hits"]:
        click.echo("No relevant memories.")
    for hit in result["hits"]:
        flag = "" if hit["status"] == "active" else f" [{hit['status']}]"
        click.echo(f"{hit['score']:.2f}  {hit['type']:<10} {hit['title']}{flag}")
        click.echo("      " + hit["text"].replace("\n", "\n      "))


def _project_folder(project: str | None) -> str | None:
    """--project as the daemon reads it: a folder given relative (".", "../app") or with "~" made
    whole here, where it was typed; a bare name ("acme-billing") as given."""
    import os

    if not project or not any(c in project for c in "/\\~") and project not in (".", ".."):
        return project
    return os.path.abspath(os.path.expanduser(project))


def _configured_rerank(ctx):
    """`[search] rerank` of the vault, said in the request: a search the LLM reranks may take
    as long as the endpoint does, and the client waits for it only when it knows (None when
    the vault or its config cannot be read: the search itself then says why)."""
    from vaultmem.errors import VaultmemError
    from vaultmem.store.config import load_config
    from vaultmem.store.vault import find_vault

    try:
        return load_config(find_vault(ctx.vault_opt)).search_rerank or None
    except VaultmemError:
        return None


@cli.command()
@click.argument("question", required=False, default="")
@click.option("--startup", is_flag=True, help="The start-up brief, no QUESTION: standing instructions "
              "and preferences, facts about you, then recent work (on --project), each dated.")
@click.option("--project", help=PROJECT_HELP)
@click.option("--budget", type=click.IntRange(1), default=800, show_default=True, help="Token budget.")
@click.option("--user", help="Namespace to use (default: the config's user).")
@click.option("--as-of", "as_of", help="What was valid on this date (YYYY-MM-DD).")
@click.option("--all", "all_", is_flag=True, help="Include superseded and archived memories.")
@click.option("--scope", type=SCOPE, default="all", show_default=True, help=SCOPE_HELP)
@click.option("--rerank", type=RERANK, help=RERANK_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the block and its counts as JSON.")
@pass_ctx
def context(ctx, question, startup, project, budget, user, as_of, all_, scope, rerank, as_json):
    """A prompt-ready block of the memories relevant to QUESTION, in score order (or the
    model's, with the rerank on), each line
    dated by when it was said; a line that is no longer current says so. Passages of your
    own notes follow under their own heading. With --startup, what an agent reads before
    the first prompt of a session (see docs/agents.md)."""
    if not startup and not question.strip():
        raise click.UsageError("give a QUESTION, or --startup for the start-up brief")
    if startup and (question.strip() or as_of or all_ or scope != "all" or rerank == "llm"):
        raise click.UsageError("--startup takes no QUESTION, --as-of, --all, --scope or --rerank "
                               "(it is the brief of what holds now, before any question)")
    project = _project_folder(project)
    args = dict(question=question, budget=budget, user=user, as_of=as_of, all=all_, scope=scope,
                project=project, startup=startup)
    args["rerank"] = "" if rerank == "none" else rerank or _configured_rerank(ctx)
    result = ask(ctx, "context", args)
    if as_json:
        emit_json(result)
    else:
        click.echo(result["text"])


@cli.command()
@click.option("--full", is_flag=True, help="Rebuild the whole index from the vault.")
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
@pass_ctx
def reindex(ctx, full, as_json):
    """Bring the search index up to date with the vault (a running daemon does it). Stopped
    halfway (Ctrl-C or SIGTERM), it keeps what it embedded: run it again to embed the rest."""
    from vaultmem.cli.extract import sigterm_interrupts
    from vaultmem.cli.progress import ProgressLine

    # Memory.reindex hands the work to the vault's daemon when one runs: it has the index
    # open and is its only writer, so it rebuilds it in place, even with --full.
    line = ProgressLine(enabled=not as_json)
    try:
        with sigterm_interrupts():   # SIGTERM stops it as Ctrl-C does, keeping what is written
            result = ctx.memory().reindex(full=full, progress=_embedding_status(line))
    except KeyboardInterrupt:
        line.close()
        click.echo("Stopped: the notes embedded so far stay indexed; run `vaultmem reindex` to embed the rest.",
                   err=True)
        raise SystemExit(130) from None
    finally:
        line.close()
    if as_json:
        emit_json(result)
        return
    if result["rebuilt"]:
        click.echo(f"Rebuilt the index ({result['rebuilt']}).")
    click.echo(f"{result['added']} added, {result['updated']} updated, {result['removed']} removed, "
               f"{result['unchanged']} unchanged ({result['chunks']} chunks, {result['seconds']:.1f} s)")
    for error in result["errors"]:
        click.echo(f"skipped {error['path']}: {error['reason']}", err=True)


def _embedding_status(line):
    """progress(done, total) for `Indexer.sync`: `embedding 12,288/42,000 chunks · 85
    chunks/s · ~6 min left`, timed from the first batch (not the model's load)."""
    import time

    from vaultmem.cli.progress import rate_and_left

    began = []

    def progress(done, total):
        if not began:
            began.append(time.monotonic())
        rate = rate_and_left(done, total, time.monotonic() - began[0], "chunks")
        line.show(f"embedding {done:,}/{total:,} chunks" + (f" · {rate}" if rate else ""), force=done >= total)

    return progress


@cli.command()
@click.option("--fix", is_flag=True, help="First repair what syncing from several devices left: "
              "register the merge driver, keep .vaultmem/ and Obsidian's .trash/ out of git, merge "
              "duplicate memories, settle crossing supersedes (one commit each).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@pass_ctx
def doctor(ctx, fix, as_json):
    """Check the index against the vault, notes, links and contradictions (exit 1 on drift)."""
    fixed = ask(ctx, "repair", {}) if fix else None
    result = ctx.memory().doctor()
    if fixed is not None:
        result["fixed"] = fixed
    if as_json:
        emit_json(result)
    else:
        _print_doctor(result)
    if not result["ok"]:
        raise SystemExit(1)


def _print_doctor(result):
    click.echo(f"{result['notes']} memory and session notes checked"
               + (f", and {result['user_notes']} of your own against the index." if result.get("user_notes")
                  else "."))
    if result["index_error"]:
        click.echo(f"index: {result['index_error']}")
    for kind, paths in result["drift"].items():
        for path in paths:
            click.echo(f"{kind}: {path}")
    for item in result["parse_errors"]:
        click.echo(f"unreadable: {item['path']}: {item['reason']}")
    for item in result["broken_links"]:
        click.echo(f"broken link: {item['path']}: {item['link']} ({item['reason']})")
    for item in result["contradictions"]:
        click.echo(f"contradiction: {' <-> '.join(item['paths'])} ({item['reason']})")
    if result.get("model_advice"):
        click.echo(f"model: {result['model_advice']}")
    if result.get("llm"):
        click.echo(_llm_line(result["llm"]))
    _print_sync(result.get("sync") or {}, result.get("fixed"))
    if result["ok"]:
        click.echo("Index matches the vault.")
    else:
        click.echo("Run `vaultmem reindex` to fix drift; fix or delete unreadable notes.")


def _llm_line(llm) -> str:
    """Which model writes the memory, and when it last answered or how its last call failed."""
    if not llm["model"]:
        return "llm: none named under [llm] in .vaultmem/config.toml; the offline rules write the memory"
    if llm["enabled"]:
        line = f"llm: {llm['model']} writes the memory ([llm] enabled)"
    else:
        line = (f"llm: off, the offline rules write the memory ([llm] names {llm['model']}: "
                "`extract --llm` asks it for one run, enabled = true turns it on)")
    if llm.get("rerank"):
        line += '; it orders what search and context find ([search] rerank = "llm")'
    answered = f"last answered {llm['answered'].replace('T', ' ')}" if llm.get("answered") else ""
    if llm.get("ok") is False:
        return (f"{line}; its last call failed at {llm['at'].replace('T', ' ')}: {llm['error']}"
                + (f" ({answered})" if answered else ""))
    return f"{line}; {answered or 'it has not answered yet'}"


def _print_sync(sync, fixed):
    for item in (fixed or {}).get("repairs", []):
        click.echo(f"fixed: {item['message']}")
    if (fixed or {}).get("merge_driver"):
        click.echo(f"fixed: merge driver {fixed['merge_driver']}")
    for written in (fixed or {}).get("ignores", []):
        click.echo(f"fixed: kept out of git: {written}")
    for problem in sync.get("merge_driver", []) + sync.get("ignores", []):
        click.echo(f"sync: {problem}")
    for item in sync.get("conflict_copies", []):
        click.echo(f"conflict copy: {item['path']}: {item['advice']}")
    for path in sync.get("merge_conflicts", []):
        click.echo(f"edited on two devices: {path}: both versions are in the note — keep one, "
                   "delete the other and the warning callout")
    for item in sync.get("repairs", []):
        click.echo(f"to repair: {item['message'][len('vaultmem: sync repair: '):]} "
                   "(`vaultmem doctor --fix`)")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@pass_ctx
def stats(ctx, as_json):
    """Notes by type and status, and the size of the index."""
    result = ctx.memory().stats()
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['notes']} memory and session notes, {result['user_notes']} of your own notes "
               "(indexed read-only)")
    for name in ("by_type", "by_status"):
        if result[name]:
            click.echo("  " + ", ".join(f"{k}: {v}" for k, v in result[name].items()))
    index = result["index"]
    if index["exists"]:
        click.echo(f"index: {index['chunks']} chunks of {index['notes']} notes, "
                   f"{index['bytes'] / 1e6:.1f} MB, model {index['model']} ({index['dim']}d)")
    else:
        click.echo("index: not built (run `vaultmem reindex`)")


@cli.command()
@click.option("--since", help="The day (YYYY-MM-DD) or time to look back to (default: 7 days ago).")
@click.option("--user", help="Namespace to review (default: the config's user).")
@click.option("--json", "as_json", is_flag=True, help="Print {since, count, sessions} as JSON.")
@pass_ctx
def review(ctx, since, user, as_json):
    """The memories written since a day, by the session they came from, each with its turn."""
    result = ask(ctx, "review", dict(since=since, user=user))
    if as_json:
        emit_json(result)
        return
    if not result["count"]:
        click.echo(f"No memories written since {result['since']}.")
    for group in result["sessions"]:
        runs = f"  (run {', '.join(group['runs'])})" if group["runs"] else ""
        click.echo(f"{group['title'] or 'Added directly'}{runs}")
        for memory in group["memories"]:
            click.echo(f"  {memory['type']:<10} {memory['text']}")
            if memory["turn"]:
                turn = memory["turn"]
                click.echo(f"             ← {turn['speaker']}: {turn['text'][:160]}  [[{turn['link']}]]")


@cli.command()
@click.argument("path")
@click.option("-k", "k", type=click.IntRange(1, 50), default=8, show_default=True, help="Hits to return.")
@click.option("--user", help="Namespace to read (default: the config's user).")
@click.option("--json", "as_json", is_flag=True, help="Print {path, hits} as JSON.")
@pass_ctx
def related(ctx, path, k, user, as_json):
    """Memories and notes nearest the note at PATH (vault-relative): those naming it first."""
    result = ask(ctx, "related", dict(path=path, k=k, user=user))
    if as_json:
        emit_json(result)
        return
    if not result["hits"]:
        click.echo("Nothing related.")
    for hit in result["hits"]:
        click.echo(f"{hit['score']:.2f}  {hit['type']:<10} {hit['title']}  ({hit['why']})")
