"""Compare embedding models on their own: dense recall over raw conversation turns, speed.

    python benchmarks/models.py ../shared/eval/locomo-zh/locomo-zh-dev.json
    python benchmarks/models.py ../shared/eval/locomo/locomo-dev.json --models all-MiniLM-L6-v2

No extraction, no keywords, no weights: each question's vector against every unit's, the
top 10 units scored by LoCoMo's evidence recall. Units: `single` (one turn, "Speaker:
text") and `pair` (a turn and the next one of its session, the shape of vaultmem's session
chunks). Then encode throughput (texts per second on the pair units) and the median time
of one query's vector, and the cosines of two wordings of one fact (lowest) and of two
different facts of one shape (highest): a dedup threshold must fall between them. It shows
what a model brings before vaultmem's ranking adds to it; `locomo.py --model M` measures
the whole product with that model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import Ranked, load_conversations, recall_at  # noqa: E402

MODELS = ("all-MiniLM-L6-v2", "use-multilingual-v3", "multilingual-e5-small")
# Two wordings of one fact, and two different facts of one shape: a dedup threshold on the
# cosine must fall between the lowest of the first and the highest of the second.
SAME = [("The user likes green tea.", "The user enjoys drinking green tea."),
        ("The user lives in Berlin.", "The user is living in Berlin now."),
        ("The user's daughter is called Mia.", "The user has a daughter named Mia."),
        ("The user is allergic to peanuts.", "The user has a peanut allergy."),
        ("用户喜欢喝绿茶。", "用户爱喝绿茶。"), ("用户住在北京。", "用户现在住在北京。"),
        ("The user runs every morning.", "Every morning the user goes for a run."),
        ("The user works as a nurse.", "The user is a nurse."),
        ("The user's cat is named Pistachio.", "The user has a cat called Pistachio.")]
DIFFERENT = [("The user likes green tea.", "The user likes spicy food."),
             ("The user lives in Berlin.", "The user works in Berlin."),
             ("The user's daughter is called Mia.", "The user's son is called Leo."),
             ("The user is allergic to peanuts.", "The user is allergic to penicillin."),
             ("用户喜欢喝绿茶。", "用户喜欢吃辣。"), ("用户住在北京。", "用户在北京工作。"),
             ("The user runs every morning.", "The user swims every Sunday."),
             ("The user works as a nurse.", "The user's wife works as a teacher."),
             ("The user's cat is named Pistachio.", "The user's dog is named Rex."),
             ("The user moved to Shanghai.", "The user moved to Chengdu.")]


def units(conv) -> dict[str, list[tuple[list[str], str]]]:
    turns = conv.turns
    said = [f"{t.speaker}: {t.text}" for t in turns]
    session = [t.dia_id.split(":")[0] for t in turns]
    pairs = []
    for i, turn in enumerate(turns):
        if i + 1 < len(turns) and session[i + 1] == session[i]:
            pairs.append(([turn.dia_id, turns[i + 1].dia_id], said[i] + "\n" + said[i + 1]))
        else:
            pairs.append(([turn.dia_id], said[i]))
    return {"single": [([t.dia_id], s) for t, s in zip(turns, said)], "pair": pairs}


def ranked(scores, unit_list, k=10) -> Ranked:
    order, picked, covered = sorted(range(len(scores)), key=lambda i: -scores[i]), [], set()
    for i in order:
        ids = set(unit_list[i][0])
        if not ids <= covered:   # a unit whose turns are all shown adds nothing
            picked.append(unit_list[i][0])
            covered |= ids
        if len(picked) == k:
            break
    return Ranked(picked, [1] * len(picked))


def measure(model_name: str, conversations) -> dict:
    from vaultmem.index.embed import Embedder

    embedder = Embedder(model_name)
    recall = {"single": [], "pair": []}
    encoded = seconds = 0.0
    for conv in conversations:
        questions = embedder.encode([q.text for q in conv.questions])
        for shape, unit_list in units(conv).items():
            started = time.perf_counter()
            vectors = embedder.encode([text for _, text in unit_list])
            if shape == "pair":
                seconds += time.perf_counter() - started
                encoded += len(unit_list)
            sims = questions @ vectors.T
            recall[shape] += [recall_at(ranked(sims[n], unit_list), q.evidence, 10)
                              for n, q in enumerate(conv.questions)]
    question = conversations[0].questions[0].text
    embedder.encode_query(question)
    timings = []
    for _ in range(30):
        started = time.perf_counter()
        embedder.encode_query(question)
        timings.append(time.perf_counter() - started)
    def cosines(pairs):
        left, right = embedder.encode([a for a, _ in pairs]), embedder.encode([b for _, b in pairs])
        return (left * right).sum(axis=1)

    return {"model": model_name, "dim": embedder.dim,
            "same_fact_min_cosine": float(cosines(SAME).min()),
            "different_fact_max_cosine": float(cosines(DIFFERENT).max()),
            "single_recall@10": 100 * statistics.mean(recall["single"]),
            "pair_recall@10": 100 * statistics.mean(recall["pair"]),
            "pairs_per_second": encoded / seconds, "query_ms": 1000 * statistics.median(timings)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--max-sessions", type=int, help="only the first N sessions (a smoke run)")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data, None, args.max_sessions, None)
    rows = []
    for name in args.models.split(","):
        try:
            rows.append(measure(name.strip(), conversations))
        except Exception as exc:   # a model whose package is missing is reported, not fatal
            print(f"{name}: {exc}", file=sys.stderr)
    print(f"{'model':<24} {'dim':>4} {'single R@10':>11} {'pair R@10':>9} {'pairs/s':>8} {'query ms':>8} "
          f"{'same min':>8} {'diff max':>8}")
    for row in rows:
        print(f"{row['model']:<24} {row['dim']:>4} {row['single_recall@10']:11.1f} "
              f"{row['pair_recall@10']:9.1f} {row['pairs_per_second']:8.0f} {row['query_ms']:8.1f} "
              f"{row['same_fact_min_cosine']:8.2f} {row['different_fact_max_cosine']:8.2f}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
