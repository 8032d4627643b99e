"""Memory-quality harness (SPEC §7): are the memory notes true, clean, current and secret-free?

    python benchmarks/memquality.py ../shared/eval/memquality/*.json --json report.json

For each CASE file: a fresh temporary vault (`vaultmem init`), the clock at the case's `now`
(VAULTMEM_NOW), its transcripts through `vaultmem extract` (offline unless --llm), then its
probes: `memory` and `no_memory` read the notes with vaultmem's own parser, `current` reads
`vaultmem context QUESTION --budget 400 --json`, `as_of` reads `vaultmem search QUESTION
--as-of D --json`, and `secret` looks for its text in every file and file name of the vault,
in git's objects and history, in the index's rows and in the output of every command run.
Every step is the installed `vaultmem` command in a subprocess, exactly as a user runs it,
with no daemon. The last stdout line is SPEC §7's JSON object plus `type_ok` and `hygiene`;
tables come before it, progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from answers import NO_ANSWER, READER_TOKENS, ask_model, judge_reply, reader_messages  # noqa: E402
from blocks import BlockAudit  # noqa: E402
from llm_relay import add_relay_options, run_with_relay  # noqa: E402
from vault_audit import (  # noqa: E402
    HYGIENE_CHECKS,
    MEMORY_KINDS,
    READER_CHECKS,
    decoded_stores,
    find_text,
    hygiene,
    not_self_contained,
    read_notes,
)

KINDS = ("memory", "no_memory", "current", "as_of", "secret")
CONTEXT_BUDGET = 400
STARTUP_BUDGET = 600   # the start-up hook's budget (docs/agents.md)
# A context line that says its memory is no longer current (SPEC §7).
NOT_CURRENT = re.compile(r"\buntil \d{4}-\d{2}-\d{2}\b|\bsuperseded\b", re.IGNORECASE)


@dataclass
class Case:
    name: str
    now: str
    user: str
    transcripts: list[tuple[Path, str | None]]  # (path, format)
    probes: list[dict]
    path: Path
    lang: str | None = None  # "en", "zh" or "mixed" where the case says (blind corpora do)


@dataclass
class Outcome:
    case: str
    probe: dict
    passed: bool
    found: str  # what the harness saw, for a failure's line and the JSON report
    type_ok: bool | None = None  # memory probes with a `type` only
    # Issue 33: the context block's first line is a memory holding an `expect` string
    # (current probes; memory probes with a question under --lead). None: not measured.
    leads: bool | None = None

    def to_dict(self) -> dict:
        return {"case": self.case, "id": self.probe["id"], "kind": self.probe["kind"],
                "passed": self.passed, "type_ok": self.type_ok, "leads": self.leads,
                "found": self.found, "probe": self.probe}


@dataclass
class CaseRun:
    """One case's vault and everything its commands printed."""
    case: Case
    vault: Path
    env: dict
    outputs: dict[str, str] = field(default_factory=dict)
    extracts: list[dict] = field(default_factory=list)
    blocks: dict[str, str] = field(default_factory=dict)   # probe id -> its context block (issue 50)

    def vaultmem(self, *args: str) -> subprocess.CompletedProcess:
        """Run `vaultmem --vault VAULT ARGS...`; its stdout and stderr are kept for the
        secret check."""
        command = [vaultmem_command(), "--vault", str(self.vault), *args]
        done = subprocess.run(command, capture_output=True, text=True, env=self.env,
                              cwd=self.vault.parent)
        label = f"{len(self.outputs) + 1}: vaultmem " + " ".join(args)
        self.outputs[label] = done.stdout + done.stderr
        return done


def vaultmem_command() -> str:
    """The `vaultmem` script installed beside this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "vaultmem"
    found = str(beside) if beside.exists() else shutil.which("vaultmem")
    if not found:
        raise SystemExit("no `vaultmem` command beside this Python nor on PATH — run `make install`")
    return found


def load_case(path: Path) -> Case:
    data = json.loads(path.read_text(encoding="utf-8"))
    transcripts = [((path.parent / t["path"]).resolve(), t.get("format")) for t in data["transcripts"]]
    unknown = {p.get("kind") for p in data["probes"]} - set(KINDS)
    if unknown:
        raise SystemExit(f"{path}: unknown probe kind(s) {sorted(unknown)}; known: {', '.join(KINDS)}")
    return Case(data["name"], data["now"], data.get("user", "default"), transcripts,
                data["probes"], path, data.get("lang"))


def build_vault(case: Case, workdir: Path, llm: bool | Path | str) -> CaseRun:
    """A fresh vault with the case's transcripts extracted, as a user would build it. `llm`:
    False extracts offline; True with the `[llm]` endpoint `init` writes; a TOML file's path
    or an `[llm]` table's text (the relay's), in place of init's table (as a user edits
    config.toml), `{case}` in its base_url replaced by the case's name."""
    env = dict(os.environ, VAULTMEM_NOW=case.now, VAULTMEM_NO_DAEMON="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("VAULTMEM_VAULT", None)
    run = CaseRun(case, workdir / case.name, env)
    done = run.vaultmem("init", str(run.vault))
    if done.returncode:
        raise SystemExit(f"{case.name}: vaultmem init failed: {done.stderr.strip()}")
    if isinstance(llm, (Path, str)):
        from llm_table import put_llm_table

        put_llm_table(run.vault, llm, case.name)
    for transcript, fmt in case.transcripts:
        args = ["extract", str(transcript), "--user", case.user, "--json"]
        args += ["--format", fmt] if fmt else []
        args += ["--llm"] if llm else []
        done = run.vaultmem(*args)
        if done.returncode:
            raise SystemExit(f"{case.name}: vaultmem extract {transcript.name} failed: {done.stderr.strip()}")
        report = json.loads(done.stdout)
        run.extracts.append({k: report.get(k) for k in ("run", "sessions", "created", "updated",
                                                        "superseded", "rejected", "unchanged",
                                                        "errors", "warnings")})
        for problem in report.get("errors", []) + report.get("warnings", []):
            print(f"  {case.name}: {transcript.name}: {problem}", file=sys.stderr)
    return run


def turn_rerank_on(vault: Path) -> None:
    """`[search] rerank = "llm"` in `vault`'s config.toml, as a person turns the stage on."""
    config = vault / ".vaultmem" / "config.toml"
    text, found = re.subn(r'(?m)^(\[search\]\n(?:(?!\[).*\n)*?)rerank = ""$', r'\1rerank = "llm"',
                          config.read_text(encoding="utf-8"))
    if not found or tomllib.loads(text).get("search", {}).get("rerank") != "llm":
        raise SystemExit(f"{config}: no `rerank = \"\"` under [search] to turn on")
    config.write_text(text, encoding="utf-8")


# --- probes ------------------------------------------------------------------------------

def _holds(text: str, strings) -> list[str]:
    low = text.lower()
    return [s for s in strings if s.lower() in low]


def check_memory(probe: dict, notes) -> tuple[bool, str, bool | None]:
    expect = probe["expect"]
    active = [n for n in notes if n.is_active_memory]
    holders = [n for n in active if len(_holds(n.body, expect)) == len(expect)]
    wanted = probe.get("type")
    # Scored apart: is a memory that was found of the right type (None when not found).
    type_ok = any(n.type == wanted for n in holders) if wanted and holders else None
    if holders:
        types = ", ".join(sorted({n.type for n in holders}))
        found = f"{holders[0].rel} [{types}]" + (f"; type {wanted} wanted" if type_ok is False else "")
        return True, found, type_ok
    best = max(active, key=lambda n: len(_holds(n.body, expect)), default=None)
    parts = [f"no active memory note holds all of {expect}"]
    if best is not None and _holds(best.body, expect):
        parts.append(f"closest {best.rel} holds {_holds(best.body, expect)}")
    elsewhere = [f"{n.rel} ({n.type}, {n.status})" for n in notes
                 if not n.is_active_memory and len(_holds(n.body, expect)) == len(expect)]
    if elsewhere:
        parts.append("all held by " + ", ".join(elsewhere[:3]))
    return False, "; ".join(parts), type_ok


def check_no_memory(probe: dict, notes) -> tuple[bool, str]:
    holders = [n for n in notes if n.is_active_memory and _holds(n.body, [probe["text"]])]
    if not holders:
        return True, "in no active memory note"
    return False, "held by " + ", ".join(f"{n.rel} [{n.type}]" for n in holders[:4]) + \
        (f" and {len(holders) - 4} more" if len(holders) > 4 else "")


def memory_entries(block: str) -> list[str]:
    """The memory lines of a context block: bullets `- [meta] text` whose meta names a memory
    type (session excerpts' meta is a date and a link), each with its continuation lines."""
    entries: list[tuple[bool, str]] = []
    for line in block.splitlines():
        if line.startswith("- ["):
            meta = line[3:].split("]", 1)[0]
            is_memory = any(part.strip() in MEMORY_KINDS for part in meta.split("·"))
            entries.append((is_memory, line))
        elif line.startswith("#") or not line.strip():
            entries.append((False, ""))  # a heading or blank line ends the entry
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + "\n" + line)
    return [text for is_memory, text in entries if is_memory]


def check_current(probe: dict, run: CaseRun) -> tuple[bool, str, None, bool | None]:
    done = run.vaultmem("context", probe["question"], "--budget", str(CONTEXT_BUDGET),
                        "--user", run.case.user, "--json")
    if done.returncode:
        return False, f"context failed: {done.stderr.strip()[-300:]}", None, False
    result = json.loads(done.stdout)
    run.blocks[probe["id"]] = result["text"]
    passed, found = current_verdict(result["text"], probe["expect"], probe.get("stale", []))
    return (passed, found + (f" (warning: {result['warning']})" if result.get("warning") else ""),
            None, leads_with(result["text"], probe["expect"]))


def check_lead(probe: dict, run: CaseRun) -> bool:
    """Issue 33: asked the probe's question, the context block's first line is a memory
    line holding every `expect` string."""
    done = run.vaultmem("context", probe["question"], "--budget", str(CONTEXT_BUDGET),
                        "--user", run.case.user, "--json")
    if done.returncode:
        return False
    run.blocks[probe["id"]] = json.loads(done.stdout)["text"]
    return leads_with(run.blocks[probe["id"]], probe["expect"], every=True)


def block_figures(run: CaseRun, notes) -> dict:
    """Issue 50, what an agent reads: the audit of every context block the probes asked for
    (`blocks.BlockAudit`), whether the answering memory is in the block at all (memory probes
    with a question: a memory line holding every `expect` string; current probes: one holding
    an `expect` string), and whether every active standing instruction (procedure) is in the
    start-up brief at the budget of the documented hook."""
    audit = BlockAudit(run.vault)
    counts = Counter()
    for text in run.blocks.values():
        counts.update(audit.count(text))
    answered = []
    for probe in run.case.probes:
        if probe["id"] in run.blocks and probe["kind"] in ("memory", "current"):
            held = [len(_holds(e, probe["expect"])) for e in memory_entries(run.blocks[probe["id"]])]
            need = len(probe["expect"]) if probe["kind"] == "memory" else 1
            answered.append(any(h >= need for h in held))
    done = run.vaultmem("context", "--startup", "--budget", str(STARTUP_BUDGET), "--user", run.case.user, "--json")
    brief = " ".join(json.loads(done.stdout)["text"].split()) if not done.returncode else ""
    procedures = [" ".join(n.statement.split()) for n in notes if n.type == "procedure" and n.status == "active"]
    return {"blocks": len(run.blocks), **{k: counts[k] for k in ("hub_lines", "repeats", "overlaps")},
            "in_block": [sum(answered), len(answered)],
            "startup_procedures": [sum(p in brief for p in procedures), len(procedures)]}


def leads_with(block: str, expect: list[str], every: bool = False) -> bool:
    """The block's first entry (after its heading) is a memory line holding an `expect`
    string (all of them with `every`)."""
    entries = [line for line in block.splitlines() if line.startswith("- [")]
    memories = {e.split("\n", 1)[0]: e for e in memory_entries(block)}
    if not entries or entries[0] not in memories:
        return False
    held = _holds(memories[entries[0]], expect)
    return len(held) == len(expect) if every else bool(held)


def current_verdict(block: str, expect: list[str], stale: list[str]) -> tuple[bool, str]:
    """SPEC §7 `current`: the first memory line naming any `expect` or `stale` string names an
    `expect` one, and no memory line shown as current names a `stale` one. The line that answers
    is itself shown as current: "Anand works at Copper Kettle (until 2026-10-06)" tells an agent
    the current value no longer holds (a stricter reading than SPEC's words, since issue 48's
    fourth session: a read-time rule that labels every older answer "until" passed it)."""
    entries = memory_entries(block)
    mentioning = [e for e in entries if _holds(e, expect + stale)]
    stale_current = [e for e in entries if _holds(e, stale) and not NOT_CURRENT.search(e)]
    if not mentioning:
        return False, f"no memory line (of {len(entries)}) mentions {expect + stale}"
    first_ok = bool(_holds(mentioning[0], expect)) and not NOT_CURRENT.search(mentioning[0])
    if first_ok and not stale_current:
        return True, _short(mentioning[0])
    problems = [] if first_ok else [
        f"first mention is {'stale' if not _holds(mentioning[0], expect) else 'shown as no longer current'}: "
        f"{_short(mentioning[0])}"]
    problems += [f"stale shown as current: {_short(e)}" for e in stale_current
                 if first_ok or e is not mentioning[0]]
    return False, "; ".join(problems)


def check_as_of(probe: dict, run: CaseRun, bodies: dict[str, str]) -> tuple[bool, str]:
    done = run.vaultmem("search", probe["question"], "--as-of", probe["as_of"],
                        "--user", run.case.user, "--json")
    if done.returncode:
        return False, f"search failed: {done.stderr.strip()[-300:]}"
    result = json.loads(done.stdout)
    passed, found = as_of_verdict(result["hits"], probe["expect"], bodies)
    return passed, found + (f" (warning: {result['warning']})" if result.get("warning") else "")


def as_of_verdict(hits: list[dict], expect: list[str], bodies: dict[str, str]) -> tuple[bool, str]:
    """SPEC §7 `as_of`: the top memory hit (session excerpts and entity hubs skipped) holds an
    `expect` string, in its passage or in its note's body (`bodies`: path -> body)."""
    top = next((h for h in hits if h.get("type") in MEMORY_KINDS), None)
    if top is None:
        return False, f"no memory hit among {len(hits)} hits"
    held = _holds(top.get("text", "") + "\n" + bodies.get(top.get("path", ""), ""), expect)
    return bool(held), f"top memory hit {top.get('path')}: {_short(top.get('text', ''))}"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def run_case(case: Case, workdir: Path, llm: bool | Path, lead: bool = False,
             rerank: bool = False) -> tuple[list[Outcome], dict]:
    """Build the case's vault and score every probe; returns the outcomes and the case's
    note counts, hygiene findings and extract reports. `rerank`: the probes' searches and
    blocks run the model's rerank (`[search] rerank = "llm"`), set once the vault is built."""
    print(f"{case.name}: extracting {len(case.transcripts)} transcript(s)", file=sys.stderr, flush=True)
    run = build_vault(case, workdir, llm)
    if rerank:
        turn_rerank_on(run.vault)
    outcomes = []
    notes, _ = read_notes(run.vault)
    bodies = {n.rel: n.body for n in notes}
    leads = {probe["id"]: check_lead(probe, run) for probe in case.probes
             if lead and probe["kind"] == "memory" and probe.get("question")}
    for probe in case.probes:  # the commands first: their output counts for the secret check
        if probe["kind"] == "current":
            outcomes.append(Outcome(case.name, probe, *check_current(probe, run)))
        elif probe["kind"] == "as_of":
            outcomes.append(Outcome(case.name, probe, *check_as_of(probe, run, bodies)))
    print(f"{case.name}: scanning the vault", file=sys.stderr, flush=True)
    notes, errors = read_notes(run.vault)
    stores = decoded_stores(run.vault)
    for probe in case.probes:
        if probe["kind"] == "memory":
            outcomes.append(Outcome(case.name, probe, *check_memory(probe, notes), leads.get(probe["id"])))
        elif probe["kind"] == "no_memory":
            outcomes.append(Outcome(case.name, probe, *check_no_memory(probe, notes)))
        elif probe["kind"] == "secret":
            places = find_text(probe["text"], run.vault, run.outputs, stores)
            outcomes.append(Outcome(case.name, probe, not places,
                                    "found in: " + "; ".join(places) if places else "nowhere"))
    order = {p["id"]: i for i, p in enumerate(case.probes)}
    outcomes.sort(key=lambda o: order[o.probe["id"]])
    counts = Counter((n.type, n.status) for n in notes)
    current_blocks = {probe["id"]: run.blocks[probe["id"]] for probe in case.probes
                      if probe["kind"] == "current" and probe["id"] in run.blocks}
    return outcomes, {"blocks": block_figures(run, notes), "current_blocks": current_blocks,
                      "notes": {f"{t}/{s}": c for (t, s), c in sorted(counts.items())},
                      "memory_notes": sum(c for (t, _s), c in counts.items() if t in MEMORY_KINDS),
                      "unparseable": errors, "hygiene": hygiene(notes), "extract": run.extracts}


# --- report ------------------------------------------------------------------------------

def rate(outcomes: list[Outcome]) -> float | None:
    return sum(o.passed for o in outcomes) / len(outcomes) if outcomes else None


def type_rate(outcomes: list[Outcome]) -> tuple[int, int]:
    typed = [o for o in outcomes if o.type_ok is not None]
    return sum(o.type_ok for o in typed), len(typed)


def print_report(outcomes: list[Outcome], details: dict[str, dict], failures: bool = True) -> None:
    names = list(details)
    width = max(len("all"), *map(len, names)) + 2

    def cell(rows):
        return f"{sum(o.passed for o in rows)}/{len(rows)}" if rows else "-"

    print(f"{'case':<{width}}" + "".join(f"{k:>11}" for k in KINDS) + f"{'all':>9}{'type_ok':>9}")
    for name in names + ["all"]:
        rows = [o for o in outcomes if name == "all" or o.case == name]
        ok, typed = type_rate(rows)
        print(f"{name:<{width}}" + "".join(f"{cell([o for o in rows if o.probe['kind'] == k]):>11}"
                                           for k in KINDS)
              + f"{cell(rows):>9}{f'{ok}/{typed}':>9}")
    print("\nfailures (what was found):" if failures else "\n(failures not shown: --summary-only)")
    for o in (outcomes if failures else []):
        if not o.passed or o.type_ok is False:
            tag = o.probe["kind"] if not o.passed else "type"
            print(f"  {o.case} {o.probe['id']} [{tag}]: {o.found}")
    print("\nnotes written (active, +superseded/archived):")
    kinds = MEMORY_KINDS + ("entity", "session")
    print(f"{'case':<{width}}" + "".join(f"{k:>12}" for k in kinds) + f"{'memory_notes':>14}")
    for name in names:
        notes = details[name]["notes"]

        def count(kind):
            other = sum(c for key, c in notes.items() if key.startswith(kind + "/") and not key.endswith("/active"))
            return f"{notes.get(kind + '/active', 0)}" + (f" +{other}" if other else "")
        print(f"{name:<{width}}" + "".join(f"{count(k):>12}" for k in kinds)
              + f"{details[name]['memory_notes']:>14}")
    print("\nhygiene (heuristics in benchmarks/vault_audit.py; not scored, goal 0 each (issue 16)):")
    print("  " + hygiene_line(details.values()))
    print("  " + reader_line(details.values()))
    print("  " + blocks_line(details.values()))
    for name in (names if failures else []):
        found = details[name]["hygiene"]
        print(f"  {name}: " + ", ".join(f"{check} {len(items)}" for check, items in found.items()))
        for check, items in found.items():
            for item in items[:4]:
                print(f"    {check}: {item}")
            if len(items) > 4:
                print(f"    {check}: ... {len(items) - 4} more")
        for error in details[name]["unparseable"]:
            print(f"    unparseable note: {error}")


def hygiene_line(cases) -> str:
    """Issue 16's hygiene line, summed over the cases (`details` values)."""
    cases = list(cases)
    total = lambda check: sum(len(c["hygiene"][check]) for c in cases)  # noqa: E731
    return (f"memory notes with an unresolved reference or fewer than 4 content words "
            f"{sum(not_self_contained(c['hygiene']) for c in cases)}, junk hubs "
            f"{total('junk_entities')}, UUID-named session notes {total('uuid_sessions')}, "
            f"broken fences {total('broken_fences')} (goal 0 each)")


def reader_line(cases) -> str:
    """Issue 33's counts of what a reader sees (`vault_audit.READER_CHECKS`), over the cases."""
    cases = list(cases)
    total = lambda check: sum(len(c["hygiene"].get(check, [])) for c in cases)  # noqa: E731
    return ("what a reader sees (issue 33): " + ", ".join(f"{check.replace('_', ' ')} {total(check)}"
                                                          for check in READER_CHECKS) + " (goal 0 each)")


def block_totals(cases) -> dict:
    """`block_figures` summed over the cases (`details` values)."""
    total = Counter()
    for case in cases:
        for key, value in case["blocks"].items():
            if isinstance(value, list):
                total[key + "_ok"] += value[0]
                total[key + "_of"] += value[1]
            else:
                total[key] += value
    return dict(total)


def blocks_line(cases) -> str:
    t = block_totals(cases)
    return (f"what an agent reads (issue 50), in {t.get('blocks', 0)} context blocks: empty hub lines "
            f"{t.get('hub_lines', 0)}, excerpts repeating a memory's turn {t.get('repeats', 0)}, overlapping "
            f"excerpts {t.get('overlaps', 0)} (goal 0 each); answering memory in the block "
            f"{t.get('in_block_ok', 0)}/{t.get('in_block_of', 0)}; standing instructions in the start-up "
            f"brief {t.get('startup_procedures_ok', 0)}/{t.get('startup_procedures_of', 0)}")


def lead_rate(outcomes: list[Outcome]) -> float | None:
    measured = [o.leads for o in outcomes if o.leads is not None]
    return sum(measured) / len(measured) if measured else None


def kind_rates(outcomes: list[Outcome]) -> dict:
    return {k: rate([o for o in outcomes if o.probe["kind"] == k]) for k in KINDS}


def figures_of(outcomes: list[Outcome], details: dict[str, dict], langs: dict[str, str] | None = None) -> dict:
    """SPEC §7's object, plus type_ok, hygiene, leads (issue 33) and, when the cases say
    their language, the same rates by language (`by_lang`)."""
    ok, typed = type_rate(outcomes)
    by_lang = {}
    for lang in sorted(set((langs or {}).values()) - {None}):
        rows = [o for o in outcomes if langs.get(o.case) == lang]
        lang_ok, lang_typed = type_rate(rows)
        by_lang[lang] = {"cases": sum(1 for v in langs.values() if v == lang), "probes": len(rows),
                         "pass_rate": rate(rows), "by_kind": kind_rates(rows),
                         "type_ok": lang_ok / lang_typed if lang_typed else None, "leads": lead_rate(rows)}
    totals = Counter()
    for case in details.values():
        totals.update({check: len(items) for check, items in case["hygiene"].items()})
    return {"cases": len(details), "probes": len(outcomes), "pass_rate": rate(outcomes),
            "by_kind": kind_rates(outcomes),
            "type_ok": ok / typed if typed else None,
            "leads": lead_rate(outcomes),
            "memory_notes": sum(d["memory_notes"] for d in details.values()),
            "blocks": block_totals(details.values()),
            "secrets_leaked": sum(not o.passed for o in outcomes if o.probe["kind"] == "secret"),
            "hygiene": {"not_self_contained": sum(not_self_contained(d["hygiene"])
                                                  for d in details.values()),
                        **{check: totals[check] for check in HYGIENE_CHECKS}},
            **({"by_lang": by_lang} if by_lang else {})}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="+", type=Path, help="CASE.json files (SPEC §7)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write every probe's result here")
    parser.add_argument("--llm", action="store_true", help="extract with the LLM endpoint of config.toml")
    parser.add_argument("--llm-config", type=Path, metavar="TOML",
                        help="with --llm: a file holding an [llm] table (base_url, model, timeout) "
                             "that replaces the one `vaultmem init` writes in each case's vault")
    add_relay_options(parser, "extract (implies --llm)", "case")
    parser.add_argument("--keep-vaults", type=Path, help="build the vaults here and keep them")
    parser.add_argument("--jobs", type=int, default=1, help="cases built and probed at once (default 1)")
    parser.add_argument("--lead", action="store_true",
                        help="also ask each memory probe's `question` and score whether the context "
                             "block leads with that memory (issue 33)")
    parser.add_argument("--answers", action="store_true",
                        help="with the relay or --llm-config: also hand each current probe's block to a reader model "
                             "and have LongMemEval's knowledge-update judge grade its answer against "
                             "`expect` (`current_answered`: what an agent reading the block answers)")
    parser.add_argument("--rerank", action="store_true",
                        help="with the relay or --llm-config: the probes' `context` and `search` run the "
                             "model's rerank of the first stage's hits (`[search] rerank = \"llm\"` in each "
                             "vault once it is built, issue 49's stage), as for a person who turned it on")
    parser.add_argument("--summary-only", action="store_true",
                        help="print the tables and figures but no failure lines nor hygiene findings: "
                             "for a held-out corpus whose content must stay unread")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.llm_config and not args.llm:
        raise SystemExit("--llm-config needs --llm")
    if args.llm_config and (args.record or args.replay):
        raise SystemExit("--llm-config and the relay (--record/--replay) each set the [llm] table: choose one")
    if args.rerank and not (args.record or args.replay or args.llm_config):
        raise SystemExit("--rerank asks the model: give the relay (--record or --replay) or --llm-config")
    if args.answers and not (args.record or args.replay or args.llm_config):
        raise SystemExit("--answers asks a reader model: give the relay (--record or --replay) or --llm-config")
    cases = [load_case(p) for p in args.cases]
    args.llm = args.llm or bool(args.record or args.replay)
    figures, code = run_with_relay(args, lambda llm: run(args, cases, llm), args.llm_config or args.llm)
    if args.rerank:
        figures["rerank"] = "llm"
    print(json.dumps(figures))
    return code


def run(args, cases: list[Case], llm) -> dict:
    """Build and probe every case; print the tables; the figures."""
    if len({c.name for c in cases}) < len(cases):
        raise SystemExit("two cases share a name; each case gets a vault named after it")
    outcomes, details = [], {}
    with tempfile.TemporaryDirectory(prefix="vaultmem-memquality-") as tmp:
        workdir = args.keep_vaults or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for case in cases:
            if (workdir / case.name).exists():
                raise SystemExit(f"{workdir / case.name} exists; every case needs a fresh vault")
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:  # each case is its own subprocesses
            done = list(pool.map(lambda case: run_case(case, workdir, llm, args.lead, args.rerank), cases))
        for case, (case_outcomes, case_details) in zip(cases, done):
            details[case.name] = case_details
            outcomes += case_outcomes
    answered = answer_current(cases, details, llm) if args.answers else {}
    print_report(outcomes, details, failures=not args.summary_only)
    figures = figures_of(outcomes, details, {c.name: c.lang for c in cases})
    if args.answers:
        figures.update(answered_figures(outcomes, answered, {c.name: c.lang for c in cases}))
        print(answered_line(figures), file=sys.stdout)
        if not args.summary_only:
            for (case, pid), row in sorted(answered.items()):
                if not row["correct"]:
                    print(f"  answered wrong: {case} {pid}: {' '.join(row['reply'].split())[:200]}")
    if args.json_out:
        report = {"cases": {c.name: str(c.path) for c in cases}, "figures": figures,
                  "commit": _commit(), "llm": args.llm,
                  "probes": [o.to_dict() for o in outcomes], "details": details,
                  "answers": [{"case": case, "id": pid, **row} for (case, pid), row in sorted(answered.items())]}
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return figures


# --- what a reader answers from the block (--answers) -------------------------------------

# Readers (then judges) asked at once: each request only waits on the model, and a relay wave
# takes one request of each case, so all of them wait together and the waves fill.
ANSWER_JOBS = 64


def answer_current(cases: list[Case], details: dict[str, dict], table) -> dict:
    """Each current probe's block to a reader (answers.py's prompt, asked on the case's day),
    then, once every reader has answered, each reply to LongMemEval's knowledge-update judge
    with the probe's `expect` as the correct answer: "a response that gives previous information
    along with the updated answer is correct as long as the updated answer is the required one".
    SPEC §7's `current` fails a block that shows an old value as current anywhere; this asks
    whether an agent reading that block answers with the value now. `{(case, id): row}`."""
    table = table.read_text(encoding="utf-8") if isinstance(table, Path) else table
    rows = {}
    for case in cases:
        for probe in case.probes:
            if probe["kind"] == "current":   # every one: a probe whose block failed is a wrong answer
                rows[(case.name, probe["id"])] = {
                    "question": probe["question"], "block": details[case.name]["current_blocks"].get(probe["id"]),
                    "gold": " / ".join(probe["expect"]), "asked": case.now[:10], "reply": NO_BLOCK,
                    "verdict": "", "correct": False}

    def read(key):
        row = rows[key]
        if row["block"] is not None:
            row["reply"] = ask_model(table, key[0], reader_messages(row["block"], row["question"], row["asked"]),
                                     READER_TOKENS)

    def judge(key):   # no block, or no reader's answer: wrong, and no judge is asked
        row = rows[key]
        row["verdict"], row["correct"] = judge_reply(table, f"{key[0]}-judge", "knowledge-update", row["question"],
                                                     row["gold"], row["reply"])

    for stage in (read, judge):   # readers first, all of them: no wave holds a reader beside a judge
        with ThreadPoolExecutor(max(1, min(len(rows), ANSWER_JOBS))) as pool:   # each one waits on the model
            list(pool.map(stage, list(rows)))
    for row in rows.values():
        row.pop("block")
    return rows


# A current probe whose `context` command failed has no block to read: no answer, so wrong.
NO_BLOCK = f"{NO_ANSWER}no block, the context command failed]"


def failed(text: str) -> bool:
    """A reply that is no model's answer: no block to read, or a request that failed
    (`answers.ask_model`'s "[no answer: ...]", whose error text must not be read as a verdict)."""
    return text.startswith(NO_ANSWER)


def answered_figures(outcomes: list[Outcome], answered: dict, langs: dict[str, str]) -> dict:
    """`current_answered` (and by language): the share of current probes whose reader answered
    with the value now, as the judge read it."""
    def share(keys):
        return sum(answered[k]["correct"] for k in keys) / len(keys) if keys else None

    keys = [(o.case, o.probe["id"]) for o in outcomes if o.probe["kind"] == "current"]
    by_lang = {lang: share([k for k in keys if langs.get(k[0]) == lang])
               for lang in sorted(set(langs.values()) - {None})}
    return {"current_answered": share(keys), "current_answered_n": len(keys),
            "current_answered_failed": sum(failed(answered[k]["reply"]) or failed(answered[k]["verdict"]) for k in keys),
            **({"current_answered_by_lang": by_lang} if by_lang else {})}


def answered_line(figures: dict) -> str:
    value = figures["current_answered"]
    shown = "-" if value is None else f"{100 * value:.1f} %"
    failures = figures["current_answered_failed"]
    return (f"current, answered by a reader from the block (LongMemEval's knowledge-update judge): "
            f"{shown} of {figures['current_answered_n']}"
            + (f" ({failures} with no block, reader or judge: counted wrong)" if failures else ""))


def _commit() -> str | None:
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                          capture_output=True, text=True)
    return done.stdout.strip() or None


if __name__ == "__main__":
    sys.exit(main())
