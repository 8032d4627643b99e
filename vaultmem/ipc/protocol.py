"""The daemon's protocol: every operation a client may send, with its arguments and result.

Wire: one JSON object per line each way, over the vault's Unix socket.

    request   {"op": "search", "args": {"query": "tea", "k": 5}, "clock": "<VAULTMEM_NOW>"?}
    answer    {"ok": true, "result": {...}}
    failure   {"ok": false, "error": "what went wrong — how to fix it", "code": "note_not_found"}

`code` is the `code` of a class in `vaultmem.errors`; the client raises that class with the
message. An operation not in `OPS` fails with `unknown_op`, an argument missing, unknown
or of the wrong JSON type with `bad_request`, both before anything runs.

`OPS` is the one list of what the daemon serves: the server validates and dispatches by it,
the client takes its timeouts from it, the CLI, the MCP server and `Memory` forward by it.
Operations flagged `memory` run the `Memory` method of the same name in the daemon; the
others are the daemon's own. Standard library only: the client imports this module.

    >>> check("search", {"query": "tea", "k": 5}).read_only
    True
    >>> check("search", {"query": "tea", "k": "5"})
    Traceback (most recent call last):
    vaultmem.errors.BadRequest: bad arguments for 'search': 'k' must be an integer, not a string
"""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.errors import BadRequest, UnknownOperation

REQUIRED = object()  # an argument without a default

# How a read answered before the daemon's startup scan ended says so (its `warning`, or the
# NotServed message that sends the caller to answer from the index built so far).
INDEXING_WARNING = "the daemon is still indexing the vault"

# JSON types an argument may take, and how an error message names them.
_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          list: "a list", dict: "an object", type(None): "null"}


@dataclass(frozen=True)
class Arg:
    name: str
    types: tuple  # of str, int, float, bool, list, dict, type(None)
    default: object = REQUIRED

    def accepts(self, value) -> bool:
        if isinstance(value, bool):  # JSON true is not an integer
            return bool in self.types
        if isinstance(value, int) and float in self.types:
            return True
        return isinstance(value, self.types)


@dataclass(frozen=True)
class Op:
    """One operation. `result`: the keys its (dict) result always has; `read_only`: changes
    neither vault nor index; `long`: may rightly run for minutes (the client waits without
    limit: once sent, it cannot be redone in-process); `index_writer`: writes the index, so
    it must run in the daemon whenever one runs (the index has one writer); `clocked`: its
    result depends on the clock, so a caller faking another one (VAULTMEM_NOW) is sent back
    to work in-process; `memory`: runs `Memory.<name>` (False: the daemon's own, `status`)."""

    name: str
    args: tuple
    result: tuple
    read_only: bool = False
    long: bool = False
    index_writer: bool = False
    clocked: bool = True
    memory: bool = True

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)


def _str(name, default=REQUIRED):
    return Arg(name, (str,), default)


def _opt(name, types=(str,)):
    return Arg(name, (*types, type(None)), None)


def _flag(name, default=False):
    return Arg(name, (bool,), default)


_USER = _opt("user")
_STATUS = ("running", "pid", "vault", "version", "state", "started", "uptime_seconds",
           "notes_indexed", "queue", "queue_detail", "progress", "rebuilding", "scan", "last_error",
           "last_sync", "model_loaded", "model", "socket", "log")

OPS: dict[str, Op] = {op.name: op for op in (
    # Reads. search: {"query", "hits": [HIT]} (+ "warning" after a fallback, or when the
    # daemon answered before its startup scan had brought the index up to date), HIT as in SPEC.
    Op("search", (_str("query"), Arg("k", (int,), 10), _opt("type"), _opt("tag"), _USER,
                  _opt("since"), _opt("as_of"), _flag("all"), _str("scope", "all"), _opt("rerank"),
                  _opt("project")),
       result=("query", "hits"), read_only=True),
    # context: with startup, the start-up brief (no question; + "sections", "project").
    Op("context", (_str("question", ""), Arg("budget", (int,), 800), _USER, Arg("k", (int,), 20),
                   _opt("as_of"), _flag("all"), _str("scope", "all"), _opt("rerank"), _opt("project"),
                   _flag("startup")),
       result=("question", "budget", "text", "tokens", "memories", "snippets", "notes", "pinned",
               "ids"),
       read_only=True),
    # review: the memories written since a day, by session, each with the turn it came from:
    # {"since", "count", "sessions": [{"session", "title", "date", "runs", "memories": [{...,
    # "run", "sources", "turn": {"link", "speaker", "text", "time"}|null}]}]} (newest first).
    Op("review", (_opt("since"), _USER), result=("since", "count", "sessions"), read_only=True),
    # related: what lies nearest a note (path): {"path", "hits": [HIT + "why"]}, the memories
    # that name it first ("why": "links to this note"), then the nearest ones ("similar").
    Op("related", (_str("path"), Arg("k", (int,), 8), _USER), result=("path", "hits"),
       read_only=True),
    # Writes (each also updates the index). add: SPEC's `add --json`.
    Op("add", (_str("text"), _str("type", "fact"), Arg("tags", (list,), ()),
               _opt("importance", (float,)), _opt("title"), _USER, Arg("entities", (list,), ()),
               _flag("dry_run")),
       result=("action", "id", "path", "reason"), index_writer=True),
    # extract: SPEC's `extract --json` plus "unchanged", "redactions", "decisions", "errors",
    # "warnings", "model". llm: true, false, or null (as the daemon's [llm] enabled says).
    Op("extract", (Arg("paths", (list,)), _opt("format"), _opt("llm", (bool,)), _USER, _flag("dry_run")),
       result=("run", "sessions", "created", "updated", "superseded", "rejected", "unchanged",
               "notes", "decisions", "errors", "warnings"), long=True, index_writer=True),
    # reindex: what the sync did; "rebuilt" names why the whole index was rebuilt, or null.
    Op("reindex", (_flag("full"), _opt("paths", (list,))),
       result=("added", "updated", "removed", "unchanged", "chunks", "errors", "rebuilt",
               "seconds"), long=True, index_writer=True, clocked=False),
    Op("correct", (_str("ref"), _str("text"), _USER),
       result=("action", "id", "path", "reason"), long=True, index_writer=True),
    # forget: {"note", "from", "status", "commit"}; with purge, the purge's receipt
    # {"note", "paths", "rewritten", "refs", "warnings", ...}.
    Op("forget", (_str("ref"), _flag("purge"), _flag("force"), _USER),
       result=("note",), long=True, index_writer=True),
    # rollback: {"note", "rev", ...} for a note, {"run", "undone", "later_changes", ...} for a run.
    Op("rollback", (_opt("ref"), _opt("to"), _opt("run"), _USER),
       result=("commit", "restored", "removed"), long=True, index_writer=True),
    Op("gc", (_flag("dry_run"), _USER), result=("dry_run", "archived", "plan"),
       long=True, index_writer=True),
    # repair: `doctor --fix` for a vault synced from several devices (`vaultmem.sync.reconcile`):
    # {"repairs": [{"kind", "message", "notes"}], "commits": [sha], "merge_driver": str|null,
    #  "ignores": [what was written to keep .vaultmem/ and .trash/ out of git]}.
    Op("repair", (), result=("repairs", "commits", "merge_driver", "ignores"), long=True, index_writer=True),
    # The daemon's own. flush: status plus "idle" (every queued change indexed in time).
    # status "scan": {"phase", "checked", "total", "seconds"} of the startup scan.
    Op("status", (), result=_STATUS, read_only=True, clocked=False, memory=False),
    Op("flush", (Arg("timeout", (float,), 30.0),), result=_STATUS + ("idle",), read_only=True,
       clocked=False, memory=False),
    Op("shutdown", (), result=("stopping", "pid"), clocked=False, memory=False),
    # obsidian_api: serve the Obsidian plugin's HTTP API (`daemon/http_api.py`) now, if a
    # token for it exists: {"url"} (null, with "error", when it cannot).
    Op("obsidian_api", (), result=("url",), read_only=True, clocked=False, memory=False),
)}


def check(name: str, args: dict) -> Op:
    """The operation `name`, once `args` fit it; raises `UnknownOperation` or `BadRequest`."""
    op = OPS.get(name)
    if op is None:
        raise UnknownOperation(f"unknown operation {name!r}; the daemon serves "
                               f"{', '.join(OPS)}")
    for key, value in args.items():
        arg = op.arg(key)
        if arg is None:
            takes = ", ".join(a.name for a in op.args) or "no arguments"
            raise BadRequest(f"bad arguments for {name!r}: unknown argument {key!r} "
                             f"(it takes {takes})")
        if not arg.accepts(value):
            wanted = " or ".join(_NAMES[t] for t in arg.types)
            raise BadRequest(f"bad arguments for {name!r}: {key!r} must be {wanted}, not "
                             f"{_NAMES.get(type(value), type(value).__name__)}")
    missing = [a.name for a in op.args if a.default is REQUIRED and a.name not in args]
    if missing:
        raise BadRequest(f"bad arguments for {name!r}: missing {', '.join(map(repr, missing))}")
    return op
