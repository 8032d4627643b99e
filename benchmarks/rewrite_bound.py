"""How much a question rewrite could give the first stage (issue 49): evidence recall at several
depths for each question as asked, and for the question with its gold answer appended.

A rewrite before the first stage (a hypothetical answer, or the question broken into parts)
can only add words the model guesses the evidence holds; the gold answer's own words are the
best such guess. So the second row bounds what any rewrite can lift into the candidates the
model reranks (the first 100, `retrieve/rerank.py`): where that bound is small, the rewrite's
extra call a question is not worth it. Run on vaults `locomo.py --keep-vaults` built:

    python benchmarks/locomo.py ../shared/eval/locomo/locomo-dev.json --no-baselines --keep-vaults V
    python benchmarks/rewrite_bound.py ../shared/eval/locomo/locomo-dev.json V

Last line: one JSON object, `{"questions": n, "asked": {"10": r, ...}, "with_answer": {...}}`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answers import gold_answers  # noqa: E402
from locomo import CATEGORIES, asked_on, load_conversations, ranked_hits, recall_at  # noqa: E402


def query_forms(question: str, answer: str) -> dict[str, str]:
    """The question as asked, and with its gold answer appended (the best any rewrite could guess)."""
    return {"asked": question, "with_answer": f"{question} {answer}".strip()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("vaults", type=Path, help="the vaults locomo.py --keep-vaults built from it")
    parser.add_argument("--model", help="the vaults' embedding model (as given to locomo.py)")
    parser.add_argument("--k", default="10,50,100", help="depths (default 10,50,100)")
    parser.add_argument("--conversations", help="comma-separated sample ids (as given to locomo.py)")
    parser.add_argument("--max-sessions", type=int, help="as given to locomo.py")
    parser.add_argument("--max-questions", type=int, help="as given to locomo.py")
    args = parser.parse_args(argv)
    from vaultmem.api import Memory
    from vaultmem.index.embed import Embedder

    depths = [int(k) for k in args.k.split(",")]
    embedder = Embedder(args.model) if args.model else Embedder()
    gold = gold_answers(args.data)
    rows: dict[str, dict[str, dict[int, list[float]]]] = {
        form: defaultdict(lambda: defaultdict(list)) for form in ("asked", "with_answer")}
    wanted = set(args.conversations.split(",")) if args.conversations else None
    conversations = load_conversations(args.data, wanted, args.max_sessions, args.max_questions)
    if wanted and wanted - {c.sample_id for c in conversations}:
        raise SystemExit(f"no such conversation in {args.data}: {sorted(wanted - {c.sample_id for c in conversations})}")
    if not any(conv.questions for conv in conversations):
        raise SystemExit(f"{args.data}: no scorable question (categories 1-4 with evidence) in what was asked for")
    for conv in conversations:
        vault = args.vaults / conv.sample_id
        if not vault.is_dir():
            raise SystemExit(f"{vault}: no vault for {conv.sample_id}; build them with "
                             f"`locomo.py {args.data} --keep-vaults {args.vaults}`")
        mem = Memory(vault, embedder=embedder)
        for q in conv.questions:
            answer = next(iter(gold.get((conv.sample_id, q.text)) or []), "")
            for form, text in query_forms(q.text, str(answer)).items():
                with asked_on(q.asked):
                    result = mem.search(text, k=max(depths), rerank="")
                if result.get("warning"):   # a fallback search (a model the index was not built with) says nothing
                    raise SystemExit(f"search fell back on {conv.sample_id}: {result['warning']} — give the "
                                     f"--model the vaults were built with")
                ranked = ranked_hits(result["hits"])
                for k in depths:
                    value = recall_at(ranked, q.evidence, k)
                    rows[form][CATEGORIES.get(q.category, str(q.category))][k].append(value)
                    rows[form]["overall"][k].append(value)
    print(f"{'form':12} {'category':14} {'n':>4} " + " ".join(f"R@{k:<5}" for k in depths))
    for form, by_category in rows.items():
        for category, by_k in sorted(by_category.items(), key=lambda item: item[0] != "overall"):
            n = len(by_k[depths[0]])
            print(f"{form:12} {category:14} {n:>4} " + " ".join(f"{100 * sum(v) / len(v):<7.1f}" for v in by_k.values()))
    summary = {"questions": len(rows["asked"]["overall"][depths[0]]),
               **{form: {str(k): sum(v) / len(v) for k, v in rows[form]["overall"].items()} for form in rows}}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
