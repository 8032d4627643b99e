"""Answer accuracy: a reader model answers each question from vaultmem's `context` block, and a
judge model grades the answer against the gold one, with the published judge prompts (issue 49).

    python benchmarks/answers.py ../shared/eval/longmemeval/lme-s-dev.json --record R.jsonl --relay-dir DIR
    python benchmarks/answers.py ../shared/eval/longmemeval/lme-s-dev.json --replay R.jsonl

The vaults are built offline as `locomo.py` builds them (the transcript imported and
extracted by the rules; `--vaults DIR` takes ones `locomo.py --keep-vaults DIR` kept). For
each question, asked on its own day (LongMemEval's `question_date`), `vaultmem context
QUESTION --budget B` gives the block; the reader sees the block, the day and the question,
never the gold answer (`READER_SYSTEM`, `reader_messages`). When every reader has answered,
the judge sees only the question, the gold answer and the reply: LongMemEval's own prompt
for the question's type (`src/evaluation/evaluate_qa.py` of xiaowu0162/LongMemEval), or for
LoCoMo the prompt Mem0's evaluation uses (`evaluation/metrics/llm_judge.py` of mem0ai/mem0,
the "J" score later papers report). Both go through the relay (`llm_relay.py`), each
conversation under its own tag, the judges' only after every reader's, so that no wave holds a
reader's request beside a judge's. `--whole N` adds the same reader given the whole
conversation instead of the block, for N questions spread over the set, so the figure can be
read against it. `--rerank llm` has the model rerank the context's first stage as well
(`context --rerank llm`, through the relay too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_relay import add_relay_options, run_with_relay  # noqa: E402
from llm_table import put_llm_table  # noqa: E402
from locomo import Conversation, asked_on, load_conversations, set_model, write_transcript  # noqa: E402

BUDGET = 2000   # tokens of context block a reader sees
READER_TOKENS = 300
JUDGE_TOKENS = 200

READER_SYSTEM = (
    "You answer a question about a person's past conversations, using only the memory "
    "excerpts you are given: notes drawn from those conversations and passages of them, each "
    "dated by the day it was said. Where they disagree, the later one holds. Work out dates "
    "from the day each line was said and the day the question is asked. Answer in one or two "
    "short sentences; if the excerpts do not hold the answer, say that you do not know.")

WHOLE_SYSTEM = READER_SYSTEM.replace("the memory excerpts you are given: notes drawn from those "
                                     "conversations and passages of them, each dated by the day "
                                     "it was said", "the conversations you are given, each "
                                     "session dated")

# LongMemEval's judge prompts (src/evaluation/evaluate_qa.py, get_anscheck_prompt), by type.
_LME_INTRO = ("I will give you a question, a correct answer, and a response from a model. Please "
              "answer yes if the response contains the correct answer. Otherwise, answer no. ")
_LME_STEPS = ("If the response is equivalent to the correct answer or contains all the intermediate "
              "steps to get the correct answer, you should also answer yes. If the response only "
              "contains a subset of the information required by the answer, answer no. ")
_LME_TAIL = ("\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response "
             "correct? Answer yes or no only.")
LME_JUDGE = {
    "default": _LME_INTRO + _LME_STEPS + _LME_TAIL,
    "temporal-reasoning": _LME_INTRO + _LME_STEPS + (
        "In addition, do not penalize off-by-one errors for the number of days. If the question "
        "asks for the number of days/weeks/months, etc., and the model makes off-by-one errors "
        "(e.g., predicting 19 days when the answer is 18), the model's response is still correct. ")
    + _LME_TAIL,
    "knowledge-update": _LME_INTRO + (
        "If the response contains some previous information along with an updated answer, the "
        "response should be considered as correct as long as the updated answer is the required "
        "answer.") + _LME_TAIL,
    "single-session-preference": (
        "I will give you a question, a rubric for desired personalized response, and a response "
        "from a model. Please answer yes if the response satisfies the desired response. "
        "Otherwise, answer no. The model does not need to reflect all the points in the rubric. "
        "The response is correct as long as it recalls and utilizes the user's personal "
        "information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel Response: {}\n\nIs the "
        "model response correct? Answer yes or no only."),
}

# The LoCoMo judge of Mem0's evaluation (evaluation/metrics/llm_judge.py, ACCURACY_PROMPT).
LOCOMO_JUDGE = """
Your task is to label an answer to a question as ’CORRECT’ or ’WRONG’. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a ’gold’ (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""


def reader_messages(context: str, question: str, asked: str) -> list[dict]:
    """The reader's request: the block, the day asked and the question (no gold answer)."""
    return [{"role": "system", "content": READER_SYSTEM},
            {"role": "user", "content": f"Memory:\n{context}\n\nToday is {asked}.\nQuestion: {question}\nAnswer:"}]


def whole_messages(conv: Conversation, question: str, asked: str) -> list[dict]:
    """The same reader given the whole conversation, session by session, in place of the block."""
    sessions, lines = [], []
    for turn in conv.turns:
        header = f"## Session of {turn.session_date or (turn.time.date().isoformat() if turn.time else '?')}"
        if not sessions or sessions[-1] != header:
            sessions.append(header)
            lines.append(header)
        lines.append(f"{turn.speaker}: {turn.text}")
    history = "\n".join(lines)
    return [{"role": "system", "content": WHOLE_SYSTEM},
            {"role": "user", "content": f"Conversations:\n{history}\n\nToday is {asked}.\nQuestion: {question}\nAnswer:"}]


def judge_messages(kind: str, question: str, gold: str, reply: str) -> list[dict]:
    """The judge's request: the published prompt, filled in with question, gold and reply."""
    if kind:   # LongMemEval names a type for each question
        template = LME_JUDGE.get(kind, LME_JUDGE["default"])
        prompt = template.format(question, gold, reply)
    else:
        prompt = LOCOMO_JUDGE.format(question=question, gold_answer=gold, generated_answer=reply)
    return [{"role": "user", "content": prompt}]


# What `ask_model` gives in place of a reply when the request failed: never a model's words, so
# never a verdict ("yes" in its error text, a case named "eyes", is not a judge's yes).
NO_ANSWER = "[no answer: "


def ask_model(table: str, tag: str, messages: list[dict], tokens: int) -> str:
    """One request to the `[llm]` table's endpoint, `{case}` in its base_url set to `tag` (the
    relay's conversation); a model that fails costs that answer, said in its place."""
    from vaultmem.extract.llm_endpoint import LLMSettings, chat

    settings = LLMSettings.coerce(tomllib.loads(table.replace("{case}", tag))["llm"])
    try:
        return chat(settings, messages, max_tokens=tokens)
    except Exception as exc:
        return f"{NO_ANSWER}{exc}]"


def judge_reply(table: str, tag: str, kind: str, question: str, gold: str, reply: str) -> tuple[str, bool]:
    """(verdict, correct) for a reader's `reply`: no judge is asked when the reader gave no
    answer (wrong), and a judge's failed request is no verdict (wrong, whatever its error says)."""
    if reply.startswith(NO_ANSWER):
        return "", False
    verdict = ask_model(table, tag, judge_messages(kind, question, gold, reply), JUDGE_TOKENS)
    return verdict, not verdict.startswith(NO_ANSWER) and judged_correct(kind, verdict)


def judged_correct(kind: str, reply: str) -> bool:
    """The judge's verdict as each published script reads it: LongMemEval's "yes" anywhere in the
    reply; Mem0's `label` of the JSON, CORRECT (falling back on the last label word written)."""
    if kind:
        return "yes" in reply.lower()
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if match:
        try:
            return str(json.loads(match.group(0)).get("label", "")).upper() == "CORRECT"
        except (json.JSONDecodeError, AttributeError):
            pass
    words = re.findall(r"\b(CORRECT|WRONG)\b", reply)
    return bool(words) and words[-1] == "CORRECT"


def gold_answers(path: Path) -> dict[tuple[str, str], list]:
    """(sample id, question) -> the gold answers of questions worded so (usually one)."""
    gold = defaultdict(list)
    for sample in json.loads(path.read_text(encoding="utf-8")):
        for qa in sample.get("qa", []):
            gold[(sample["sample_id"], qa["question"])].append(qa.get("answer", qa.get("adversarial_answer", "")))
    return gold


def spread(questions: list, n: int | None) -> list:
    """`n` of `questions` spread evenly over them, in their order (all of them without `n`)."""
    if not n or n >= len(questions):
        return list(questions)
    return [questions[i * len(questions) // n] for i in range(n)]


def after_last_session(conv: Conversation):
    """The day a LoCoMo question is taken as asked (LoCoMo gives none): the day of the
    conversation's last turn, as one speaker would ask the other at its end, not the machine's
    clock years later ("how long ago" then means what it meant to them)."""
    times = [t.time for t in conv.turns if t.time]
    return max(times) + timedelta(minutes=1) if times else None


def build_vault(conv: Conversation, embedder, workdir: Path, model: str | None) -> Path:
    """The conversation imported and extracted offline into a fresh vault, as locomo.py builds it."""
    from vaultmem.api import Memory, init

    vault = workdir / conv.sample_id
    init(vault, model=embedder.name)
    if model:
        set_model(vault, model)
    transcript = workdir / f"{conv.sample_id}.jsonl"
    write_transcript(conv, transcript)
    summary = Memory(vault, embedder=embedder).extract([transcript], format="jsonl", user="default")
    if summary.get("errors"):
        raise SystemExit(f"extract failed on {conv.sample_id}: {summary['errors']}")
    return vault


def context_by_cli(vault: Path, question, budget: int) -> dict:
    """`vaultmem context QUESTION --budget B --rerank llm --json` as a person runs it, on the
    day the question was asked."""
    import os
    import subprocess

    env = dict(os.environ, VAULTMEM_NO_DAEMON="1")
    if question.asked:
        env["VAULTMEM_NOW"] = question.asked.isoformat(timespec="seconds")
    done = subprocess.run([sys.executable, "-m", "vaultmem", "--vault", str(vault), "context", question.text,
                           "--budget", str(budget), "--rerank", "llm", "--json"],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"context failed on {vault.name}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a LoCoMo-format file (LoCoMo, LongMemEval-S dev slice)")
    parser.add_argument("--budget", type=int, default=BUDGET, help="the context block's token budget")
    parser.add_argument("--vaults", type=Path, help="vaults locomo.py --keep-vaults built (DIR/<sample id>)")
    parser.add_argument("--keep-vaults", type=Path, help="build the vaults here and keep them")
    parser.add_argument("--model", help="embedding model of fresh vaults (e.g. use-multilingual-v3)")
    parser.add_argument("--conversations", help="comma-separated sample ids (default: all)")
    parser.add_argument("--max-sessions", type=int, help="keep only the first N sessions of each conversation")
    parser.add_argument("--max-questions", type=int, help="ask only the first N questions of each conversation")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="ask N questions of each conversation, spread evenly over its questions (a "
                             "reader sees one request of a conversation at a time: LoCoMo's 150-question "
                             "conversation is 150 waves in full)")
    parser.add_argument("--llm", type=Path, metavar="TOML",
                        help="an [llm] table (a file) for reader and judge in place of the relay; "
                             "{case} in its base_url becomes the request's tag")
    parser.add_argument("--whole", type=int, default=0, metavar="N",
                        help="also the reader given the whole conversation, for N questions spread over the set")
    parser.add_argument("--rerank", choices=["llm", "none"], default="none",
                        help="llm: the context's first stage reranked by the model too")
    parser.add_argument("--jobs", type=int, default=64, help="model calls in flight")
    parser.add_argument("--json", dest="json_out", type=Path, help="write every answer and verdict here")
    add_relay_options(parser, "reading and judging", "conversation")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not (args.record or args.replay or args.llm):
        raise SystemExit("answers.py needs a model: --record JSONL --relay-dir DIR, --replay JSONL, or --llm TOML")
    if args.llm and (args.record or args.replay):
        raise SystemExit("--llm and the relay (--record/--replay) each name the model: choose one")
    if args.sample is not None and args.sample < 1:
        raise SystemExit("--sample takes a number of questions a conversation, 1 or more")
    if args.record and not args.relay_dir:
        raise SystemExit("--record needs --relay-dir DIR")
    figures, code = run_with_relay(args, lambda table: run(args, table),
                                   args.llm.read_text(encoding="utf-8") if args.llm else None)
    print(json.dumps({k: v for k, v in figures.items() if k != "rows"}))
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, ensure_ascii=False, indent=1), encoding="utf-8")
    return code


def run(args, table: str) -> dict:
    from vaultmem import clock
    from vaultmem.api import Memory
    from vaultmem.index.embed import Embedder

    wanted = set(args.conversations.split(",")) if args.conversations else None
    conversations = load_conversations(args.data, wanted, args.max_sessions, args.max_questions)
    gold = gold_answers(args.data)
    embedder = Embedder(args.model) if args.model else Embedder()
    rows, started = [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vaultmem-answers-") as tmp:
        workdir = args.keep_vaults or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        asks = []
        for conv in conversations:
            vault = args.vaults / conv.sample_id if args.vaults else build_vault(conv, embedder, workdir, args.model)
            put_llm_table(vault, table, conv.sample_id)
            memory = Memory(vault, embedder=embedder)
            for question in spread(conv.questions, args.sample):
                question.asked = question.asked or after_last_session(conv)
                with asked_on(question.asked):
                    asked = clock.today().isoformat()
                    block = None if args.rerank == "llm" else memory.context(question.text, budget=args.budget,
                                                                              rerank="")
                answers = gold[(conv.sample_id, question.text)]
                rows.append({"conversation": conv.sample_id, "question": question.text, "kind": question.kind,
                             "category": question.category, "gold": str(answers[0]) if answers else "",
                             "asked": asked, "_block": block, "_conv": conv})
                asks.append((vault, question))
        if args.rerank == "llm":
            # The model reranks each first stage: all questions at once, each `vaultmem context
            # --rerank llm` a process of its own on its own day, so that waves fill.
            with ThreadPoolExecutor(max(1, min(args.jobs, 8))) as pool:
                for row, block in zip(rows, pool.map(lambda a: context_by_cli(*a, args.budget), asks)):
                    row["_block"] = block
        for row in rows:
            row.update(context_tokens=row["_block"]["tokens"], warning=row["_block"].get("warning"))
            row["_block"] = row["_block"]["text"]
    print(f"{len(rows)} questions, context built in {time.perf_counter() - started:.1f} s", file=sys.stderr,
          flush=True)
    whole = set(range(0, len(rows), max(1, len(rows) // args.whole))[:args.whole]) if args.whole else set()

    def read(i):
        row = rows[i]
        row["reply"] = ask_model(table, row["conversation"],
                                 reader_messages(row["_block"], row["question"], row["asked"]), READER_TOKENS)
        if i in whole:
            row["whole_reply"] = ask_model(table, row["conversation"],   # its conversation's tag: never in a reader's wave beside it
                                           whole_messages(row["_conv"], row["question"], row["asked"]), READER_TOKENS)

    def judge(i):
        row = rows[i]
        for key in ("reply", "whole_reply"):
            if key in row:
                row[key.replace("reply", "verdict")], row[key.replace("reply", "correct")] = judge_reply(
                    table, f"{row['conversation']}-judge", row["kind"], row["question"], row["gold"], row[key])

    # Readers first, all of them; judges after: no wave holds a reader's request beside a judge's.
    for stage in (read, judge):
        started = time.perf_counter()
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            list(pool.map(stage, range(len(rows))))
        print(f"{stage.__name__}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    for row in rows:
        row.pop("_block"), row.pop("_conv")
    return summarise(rows, args)


def summarise(rows: list[dict], args) -> dict:
    by = defaultdict(list)
    for row in rows:
        by[row["kind"] or f"category {row['category']}"].append(row["correct"])
    share = lambda xs: round(100 * sum(xs) / len(xs), 1) if xs else None  # noqa: E731
    figures = {"data": str(args.data), "budget": args.budget, "rerank": args.rerank, "sample": args.sample,
               "questions": len(rows),
               "accuracy": share([r["correct"] for r in rows]),
               "by_type": {k: {"n": len(v), "accuracy": share(v)} for k, v in sorted(by.items())},
               "context_tokens_mean": round(sum(r["context_tokens"] for r in rows) / max(1, len(rows)), 1)}
    sampled = [r for r in rows if "whole_correct" in r]
    if sampled:
        figures["whole_history"] = {"questions": len(sampled), "accuracy": share([r["whole_correct"] for r in sampled]),
                                    "vaultmem_on_same": share([r["correct"] for r in sampled])}
    print(f"answer accuracy {figures['accuracy']} % of {len(rows)} (context budget {args.budget})")
    for kind, v in figures["by_type"].items():
        print(f"  {kind:<28} {v['accuracy']:5.1f} % of {v['n']}")
    if sampled:
        w = figures["whole_history"]
        print(f"  whole history, {w['questions']} questions: {w['accuracy']} % (vaultmem on the same: "
              f"{w['vaultmem_on_same']} %)")
    figures["rows"] = rows
    return figures


if __name__ == "__main__":
    sys.exit(main())
