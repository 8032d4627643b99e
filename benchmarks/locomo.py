"""LoCoMo evidence-recall harness (SPEC §6): vaultmem against raw-turn baselines, one run.

    python benchmarks/locomo.py ../shared/eval/locomo/locomo-dev.json --json report.json

For each conversation: a fresh temporary vault; its sessions go in as a `jsonl` transcript
(message id = `dia_id`, time = the session's date) through `Memory.extract`, the code
`vaultmem extract` runs; then every question of categories 1-4 is asked through
`Memory.search`, the code `vaultmem search` runs. Retrieval sees turn texts and question texts
only: answers, evidence, observations and summaries are read solely to score.
The last stdout line is SPEC §6's JSON object; tables and totals come before it, progress
goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SYSTEMS = ("vaultmem", "bm25", "dense", "hybrid")
FIRST_STAGE = "stage1"   # with the model's rerank on: vaultmem's first stage alone, same run


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str  # as imported: the turn text, plus " [shares <caption>]" for an image
    time: datetime | None
    session_date: str  # the session's date as LoCoMo writes it


@dataclass
class Question:
    text: str
    category: int
    evidence: frozenset[str]
    kind: str = ""   # LongMemEval's `question_type` (single-session-user, knowledge-update, ...)
    # When it was asked (LongMemEval's `question_date`): vaultmem's "now" for its search, as a
    # person asking that day would have it, so that "four weeks ago" means what it meant then.
    # LoCoMo gives none; its questions are asked with the machine's clock.
    asked: datetime | None = None


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    sessions: int


@dataclass
class Ranked:
    """One system's answer to one question: the source ids of each hit, best first."""
    sources: list[list[str]]
    words: list[int]
    chars: list[int] = field(default_factory=list)   # Chinese has no spaces: count these


@dataclass
class Scores:
    ranked: dict[str, list[Ranked]] = field(default_factory=lambda: {s: [] for s in (*SYSTEMS, FIRST_STAGE)})
    questions: list[Question] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    rerank_failures: list[str] = field(default_factory=list)
    reranked: list[bool] = field(default_factory=list)   # per question: the model's order was used

    def add_seconds(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds


def parse_session_date(text: str) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as a naive datetime (None when unreadable)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %d %B %Y"):
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    return None


def parse_question_date(text: str) -> datetime | None:
    """LongMemEval's "2023/04/01 (Sat) 08:30" as a naive datetime (None when absent or unreadable)."""
    match = re.fullmatch(r"\s*(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))?(?: (\d{2}):(\d{2}))?\s*", text or "")
    if not match:
        return None
    year, month, day, hour, minute = (int(g) if g else 0 for g in match.groups())
    return datetime(year, month, day, hour, minute)


@contextmanager
def asked_on(when: datetime | None):
    """vaultmem's clock (`VAULTMEM_NOW`) set to `when` inside the block, when there is one."""
    if when is None:
        yield
        return
    before = os.environ.get("VAULTMEM_NOW")
    os.environ["VAULTMEM_NOW"] = when.isoformat(timespec="seconds")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("VAULTMEM_NOW", None)
        else:
            os.environ["VAULTMEM_NOW"] = before


def normalise_evidence(raw_ids) -> list[str]:
    """LoCoMo evidence ids as `D<session>:<turn>`: splits `D8:6; D9:17`, mends `D:11:26`
    and `D30:05`. Parts that do not hold exactly two numbers are dropped."""
    ids = []
    for raw in raw_ids:
        for part in re.split(r"[;,]", str(raw)):
            numbers = re.findall(r"\d+", part)
            if len(numbers) == 2:
                ids.append(f"D{int(numbers[0])}:{int(numbers[1])}")
    return ids


def load_conversations(path: Path, wanted: set[str] | None = None,
                       max_sessions: int | None = None,
                       max_questions: int | None = None) -> list[Conversation]:
    """Conversations of a LoCoMo-format file, with the scorable questions of each.

    A question is scorable when it is of category 1-4 and some normalised evidence id names
    a turn of the conversation; with `max_sessions`, all of those turns must be among the
    sessions kept."""
    data = json.loads(path.read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        if wanted and sample["sample_id"] not in wanted:
            continue
        conv = sample["conversation"]
        numbers = sorted(int(m.group(1)) for key in conv
                         if (m := re.fullmatch(r"session_(\d+)", key)) and conv[key])
        all_ids = {t["dia_id"] for n in numbers for t in conv[f"session_{n}"]}
        numbers = numbers[:max_sessions] if max_sessions else numbers
        turns = []
        for n in numbers:
            date_text = conv.get(f"session_{n}_date_time", "")
            start = parse_session_date(date_text)
            for i, raw in enumerate(conv[f"session_{n}"]):
                text = raw.get("text", "")
                if raw.get("blip_caption"):
                    text = f"{text} [shares {raw['blip_caption']}]"
                # Successive seconds keep the turns of a session in order.
                when = start + timedelta(seconds=i) if start else None
                turns.append(Turn(raw["dia_id"], raw.get("speaker", "user"), text, when, date_text))
        kept = {t.dia_id for t in turns}
        questions = []
        for qa in sample.get("qa", []):
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = frozenset(e for e in normalise_evidence(qa.get("evidence", [])) if e in all_ids)
            if evidence and evidence <= kept:
                questions.append(Question(qa["question"], qa["category"], evidence, qa.get("question_type", ""),
                                          parse_question_date(qa.get("question_date", ""))))
        conversations.append(Conversation(sample["sample_id"], turns,
                                          questions[:max_questions] if max_questions else questions,
                                          len(numbers)))
    return conversations


def write_transcript(conv: Conversation, path: Path) -> None:
    """The conversation as SPEC §4 `jsonl`: one line per turn, session `<sample>-session_<N>`.
    LoCoMo's speakers are two people, each a user; LongMemEval's are the user and the assistant,
    and the assistant's turns are the assistant's (`role`), as an agent's own transcript says:
    written as the user's, its long answers (recipes, lists, itineraries) became thousands of
    memories of the person."""
    with path.open("w", encoding="utf-8") as out:
        for turn in conv.turns:
            role = "assistant" if turn.speaker.strip().lower() == "assistant" else "user"
            line = {"session": f"{conv.sample_id}-session_{turn.dia_id[1:].split(':')[0]}",
                    "id": turn.dia_id, "speaker": turn.speaker, "role": role, "text": turn.text}
            if turn.time:
                line["time"] = turn.time.isoformat(timespec="seconds")
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def baseline_unit(turn: Turn) -> str:
    """What the raw-turn baselines index for a turn: speaker, session date and text.

    With this unit BM25 reproduces eval/locomo/README.md's 47.1 / 52.8 exactly; the dense
    figures move with where speaker and date sit in the unit (see benchmarks/README.md)."""
    return f"{turn.speaker} ({turn.session_date}): {turn.text}"


def recall_at(ranked: Ranked, evidence: frozenset[str], k: int) -> float:
    covered = set().union(*ranked.sources[:k]) if ranked.sources[:k] else set()
    return len(evidence & covered) / len(evidence)


def word_count(text: str) -> int:
    return len(text.split())


def run_vaultmem(conv: Conversation, embedder, workdir: Path, depth: int, scores: Scores,
                 rerank_llm: Path | str | None = None) -> tuple[dict, list]:
    """Import, extract and query one conversation in a fresh vault; returns the extract summary
    and, with `rerank_llm` (an `[llm]` table: a file, or the relay's text), the reranks to run
    (`rerank_all`): each question's first-stage hits, in the order `search --rerank llm` would
    hand them to the model. Without it the hits are the figures."""
    from vaultmem.api import Memory, init

    vault = workdir / conv.sample_id
    init(vault, model=embedder.name)   # the model measured, asked for: the transcript does not choose it
    if rerank_llm:
        from llm_table import put_llm_table

        put_llm_table(vault, rerank_llm, conv.sample_id)
    memory = Memory(vault, embedder=embedder)  # one warm model for the whole run
    indexing = _time_calls(memory.indexer, "sync")
    transcript = workdir / f"{conv.sample_id}.jsonl"
    write_transcript(conv, transcript)
    started = time.perf_counter()
    summary = memory.extract([transcript], format="jsonl", user="default")
    elapsed = time.perf_counter() - started
    if summary.get("errors"):
        raise SystemExit(f"extract failed on {conv.sample_id}: {summary['errors']}")
    scores.add_seconds("index", indexing[0])
    scores.add_seconds("import+extract", elapsed - indexing[0])
    started = time.perf_counter()
    reranks = []
    if rerank_llm:
        from vaultmem import clock
        from vaultmem.extract.llm_endpoint import LLMSettings, chat
        from vaultmem.retrieve.rerank import RERANK_CANDIDATES

        settings = LLMSettings.coerce(memory.llm_settings())
        ask = lambda messages, max_tokens: chat(settings, messages, max_tokens=max_tokens)  # noqa: E731
        ask.context_tokens = settings.context_tokens
    for question in conv.questions:
        # With the rerank on, the first stage of `search --rerank llm` (its first
        # RERANK_CANDIDATES, current marked); the model's order is asked for afterwards, all
        # questions at once, each with the day the product would say it is asked on.
        with asked_on(question.asked):
            result = memory.search(question.text, k=max(depth, RERANK_CANDIDATES) if rerank_llm else depth,
                                   rerank="")
        if result.get("warning"):  # a fallback search would make the figures meaningless
            raise SystemExit(f"search fell back on {conv.sample_id}: {result['warning']}")
        hits = result["hits"]
        scores.ranked[FIRST_STAGE if rerank_llm else "vaultmem"].append(ranked_hits(hits[:depth]))
        if rerank_llm:
            with asked_on(question.asked):
                today = clock.today().isoformat()
            reranks.append((question.text, hits, ask, today))
    scores.add_seconds("query", time.perf_counter() - started)
    return summary, reranks


def ranked_hits(hits: list[dict]) -> Ranked:
    return Ranked([list(h.get("source_messages") or []) for h in hits],
                  [word_count(h.get("text", "")) for h in hits], [len(h.get("text", "")) for h in hits])


class _Shown:
    """A first-stage hit as the rerank stage reads it (its text, day, type, path and sources;
    `parts` gets its place)."""

    def __init__(self, hit: dict):
        self.hit, self.parts = hit, None
        self.text = hit.get("text", "")
        for name in ("valid_from", "created", "type", "path"):
            setattr(self, name, hit.get(name) or "")
        self.sources = hit.get("sources") or []


def rerank_all(reranks: list, depth: int, scores: Scores, jobs: int) -> None:
    """The product's rerank stage (`retrieve.rerank.llm_rerank`, what `search --rerank llm`
    runs after its first stage) over every question at once, `jobs` in flight: through the
    relay, a conversation's questions then wait together and fill its waves."""
    from concurrent.futures import ThreadPoolExecutor

    from vaultmem.retrieve.hits import Hits
    from vaultmem.retrieve.rerank import llm_rerank

    def one(item):
        question, hits, ask, today = item
        reordered = llm_rerank(question, Hits([_Shown(h) for h in hits]), ask,
                               context_tokens=ask.context_tokens, today=today)
        return reordered.warning, [shown.hit for shown in reordered[:depth]]

    started = time.perf_counter()
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for warning, hits in pool.map(one, reranks):
            if warning:
                scores.rerank_failures.append(warning)   # the first stage's order stands
            scores.reranked.append(not warning)
            scores.ranked["vaultmem"].append(ranked_hits(hits))
    scores.add_seconds("rerank", time.perf_counter() - started)


def set_model(vault: Path, model: str) -> None:
    """Point a fresh vault's `[embedding] model` at `model` (what `vaultmem init` would write)."""
    config = vault / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    line = re.compile(r'^model = ".*"$', re.MULTILINE)
    # The first `model = ` line is [embedding]'s ([llm] has one too, further down).
    config.write_text(line.sub(f"model = {json.dumps(model)}", text, count=1), encoding="utf-8")


def _time_calls(obj, name: str) -> list[float]:
    """Accumulate the seconds spent in `obj.name(...)` (how long extraction spends indexing)."""
    spent = [0.0]
    original = getattr(obj, name)

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    setattr(obj, name, timed)
    return spent


def run_baselines(conv: Conversation, embedder, depth: int, scores: Scores) -> None:
    from baselines import all_baselines

    started = time.perf_counter()
    rankings = all_baselines(embedder, [baseline_unit(t) for t in conv.turns],
                             [q.text for q in conv.questions])
    for system, per_question in rankings.items():
        for ranking in per_question:
            top = [conv.turns[i] for i in ranking[:depth]]
            scores.ranked[system].append(Ranked([[t.dia_id] for t in top],
                                                [word_count(t.text) for t in top]))
    scores.add_seconds("baselines", time.perf_counter() - started)


def summarise(ranked: list[Ranked], questions: list[Question], ks: list[int], depth: int) -> dict:
    """Recall@k per category and overall, words and sources per hit over the top `depth`."""
    def block(pairs):
        hits = [(w, len(s)) for r, _q in pairs for w, s in zip(r.words[:depth], r.sources[:depth])]
        out = {"n": len(pairs)}
        for k in ks:
            out[f"recall@{k}"] = (sum(recall_at(r, q.evidence, k) for r, q in pairs) / len(pairs)
                                  if pairs else None)
        out["words_per_hit"] = sum(w for w, _ in hits) / len(hits) if hits else None
        out["sources_per_hit"] = sum(s for _, s in hits) / len(hits) if hits else None
        chars = [c for r, _q in pairs for c in r.chars[:depth]]
        out["chars_per_hit"] = sum(chars) / len(chars) if chars else None
        return out

    pairs = list(zip(ranked, questions))
    result = {"overall": block(pairs)}
    kinds = sorted({q.kind for q in questions if q.kind})
    if kinds:   # LongMemEval: its question types say more than LoCoMo's categories
        for kind in kinds:
            result[kind] = block([(r, q) for r, q in pairs if q.kind == kind])
        return result
    for category, name in CATEGORIES.items():
        result[f"{category} {name}"] = block([(r, q) for r, q in pairs if q.category == category])
    return result


def print_table(summaries: dict[str, dict], ks: list[int]) -> None:
    width = max([14] + [len(name) for summary in summaries.values() for name in summary])
    header = f"{'system':<9} {'category':<{width}} {'n':>4} " + " ".join(f"{'R@' + str(k):>6}" for k in ks)
    print(header + f" {'words/hit':>9} {'src/hit':>7}")
    for system, summary in summaries.items():
        for row_name, row in summary.items():
            cells = " ".join(f"{100 * row[f'recall@{k}']:6.1f}" if row[f"recall@{k}"] is not None
                             else f"{'-':>6}" for k in ks)
            words = f"{row['words_per_hit']:9.1f}" if row["words_per_hit"] is not None else f"{'-':>9}"
            sources = f"{row['sources_per_hit']:7.2f}" if row["sources_per_hit"] is not None else f"{'-':>7}"
            print(f"{system:<9} {row_name:<{width}} {row['n']:>4} {cells} {words} {sources}")
        print()


def parse_args(argv=None):
    from llm_relay import add_relay_options

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--conversations", help="comma-separated sample ids (default: all)")
    parser.add_argument("--k", default="5,10", help="recall cut-offs (default 5,10)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    parser.add_argument("--max-sessions", type=int, help="import only the first N sessions")
    parser.add_argument("--max-questions", type=int, help="ask at most N questions per conversation")
    parser.add_argument("--model", help="the vaults' embedding model (default: vaultmem's default)")
    parser.add_argument("--keep-vaults", type=Path, help="build the vaults here and keep them")
    parser.add_argument("--no-baselines", action="store_true",
                        help="vaultmem alone: skip the raw-turn baselines (a quicker loop while tuning)")
    parser.add_argument("--rerank-llm", type=Path, metavar="TOML",
                        help="a file holding an [llm] table: every search runs the LLM rerank stage on it "
                             "(`search --rerank llm`), beside the first stage alone (stage1); `{case}` in "
                             "its base_url becomes the conversation's id")
    add_relay_options(parser, "rerank", "conversation")
    parser.add_argument("--rerank-jobs", type=int, default=256,
                        help="reranks in flight at once (default 256: a conversation's questions wait together)")
    args = parser.parse_args(argv)
    asked = {int(k) for k in args.k.split(",") if k.strip()}
    if asked and min(asked) < 1:
        parser.error("--k takes positive integers, e.g. 5,10")
    args.ks = sorted(asked | {5, 10})  # the JSON line always carries recall@5 and @10
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.rerank_llm and (args.record or args.replay):
        raise SystemExit("--rerank-llm and the relay (--record/--replay) each set the [llm] table: choose one")
    from llm_relay import run_with_relay

    figures, code = run_with_relay(args, lambda table: run(args, table), args.rerank_llm)
    print(json.dumps(figures))
    return code


def run(args, rerank_llm) -> dict:
    """Every conversation built and asked; the tables printed; the figures."""
    wanted = set(args.conversations.split(",")) if args.conversations else None
    conversations = load_conversations(args.data, wanted, args.max_sessions, args.max_questions)
    if wanted and wanted - {c.sample_id for c in conversations}:
        raise SystemExit(f"no such conversation in {args.data}: {sorted(wanted - {c.sample_id for c in conversations})}")
    depth = max(args.ks)
    from vaultmem.index.embed import Embedder

    started = time.perf_counter()
    embedder = Embedder(args.model) if args.model else Embedder()
    scores = Scores()
    scores.add_seconds("model load", time.perf_counter() - started)
    extracts, reranks = {}, []
    systems = (*SYSTEMS, FIRST_STAGE) if rerank_llm else SYSTEMS
    with tempfile.TemporaryDirectory(prefix="vaultmem-locomo-") as tmp:
        workdir = args.keep_vaults or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for conv in conversations:
            print(f"{conv.sample_id}: {conv.sessions} sessions, {len(conv.turns)} turns, "
                  f"{len(conv.questions)} questions", file=sys.stderr, flush=True)
            summary, asked = run_vaultmem(conv, embedder, workdir, depth, scores, rerank_llm)
            reranks += asked
            extracts[conv.sample_id] = {k: summary.get(k) for k in
                                        ("sessions", "created", "updated", "superseded", "rejected")}
            if not args.no_baselines:
                run_baselines(conv, embedder, depth, scores)
            scores.questions.extend(conv.questions)
        if reranks:
            print(f"reranking {len(reranks)} questions with the model", file=sys.stderr, flush=True)
            rerank_all(reranks, depth, scores, args.rerank_jobs)
    systems = tuple(s for s in systems if scores.ranked[s])
    summaries = {system: summarise(scores.ranked[system], scores.questions, args.ks, 10)
                 for system in systems}
    print_table(summaries, args.ks)
    partial = rerank_llm and scores.rerank_failures and any(scores.reranked)
    if partial:   # e.g. a replay whose recordings hold some of the questions: score those apart
        kept = [i for i, done in enumerate(scores.reranked) if done]
        summaries["reranked questions"] = {
            system: summarise([scores.ranked[system][i] for i in kept], [scores.questions[i] for i in kept],
                              args.ks, 10) for system in ("vaultmem", FIRST_STAGE, "hybrid") if scores.ranked[system]}
        print(f"the {len(kept)} questions the model reranked (the others kept the first stage's order):")
        print_table(summaries["reranked questions"], args.ks)
    print("seconds: " + ", ".join(f"{stage} {s:.1f}" for stage, s in scores.seconds.items()))
    if rerank_llm:
        print(f"LLM rerank (vaultmem; {FIRST_STAGE}: the first stage alone, same run): "
              f"{len(scores.questions) - len(scores.rerank_failures)} of {len(scores.questions)} "
              f"searches reranked, {scores.seconds.get('rerank', 0):.1f} s for all"
              + (f"; first failure: {scores.rerank_failures[0]}" if scores.rerank_failures else ""))
    print("LoCoMo data: Maharana et al., arXiv 2402.17753 (snap-research/LoCoMo), CC BY-NC 4.0")
    overall = {system: summaries[system]["overall"] for system in systems}
    figures = {"questions": len(scores.questions),
               **{f"recall@{k}": overall["vaultmem"][f"recall@{k}"] for k in args.ks},
               "words_per_hit": overall["vaultmem"]["words_per_hit"],
               "sources_per_hit": overall["vaultmem"]["sources_per_hit"],
               "chars_per_hit": overall["vaultmem"]["chars_per_hit"],
               "model": embedder.name,
               **{f"baseline_{s}_recall@10": overall[s]["recall@10"] for s in ("hybrid", "bm25", "dense")
                  if s in overall}}
    if rerank_llm:
        figures.update({f"first_stage_recall@{k}": overall[FIRST_STAGE][f"recall@{k}"] for k in args.ks})
        figures["reranked"] = len(scores.questions) - len(scores.rerank_failures)
        if partial:
            only = summaries["reranked questions"]
            figures.update({f"reranked_only_recall@{k}": only["vaultmem"]["overall"][f"recall@{k}"]
                            for k in args.ks})
            figures.update({f"reranked_only_first_stage_recall@{k}": only[FIRST_STAGE]["overall"][f"recall@{k}"]
                            for k in args.ks})
    if args.json_out:
        report = {"data": str(args.data), "conversations": [c.sample_id for c in conversations],
                  "figures": figures, "systems": summaries, "extract": extracts,
                  "seconds": scores.seconds,
                  # each question: where its evidence turns are in vaultmem's hits (rank from 1; None past the depth)
                  "questions": [{"question": q.text, "type": q.kind or CATEGORIES[q.category],
                                 "evidence": sorted(q.evidence),
                                 "ranks": {e: next((n + 1 for n, src in enumerate(r.sources) if e in src), None)
                                           for e in sorted(q.evidence)}}
                                for q, r in zip(scores.questions, scores.ranked["vaultmem"])],
                  "attribution": "LoCoMo: Maharana et al., arXiv 2402.17753, CC BY-NC 4.0"}
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return figures


if __name__ == "__main__":
    sys.exit(main())
