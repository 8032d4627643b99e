"""Recall@k of saved pools (pool.py), overall and by LoCoMo category; `report` is shared by the other trials.
usage: score.py POOL.pkl"""
import collections
import pickle
import sys

CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
def recall(hits, ev, k):
    cov = set()
    for h in hits[:k]:
        cov |= set(h.get("source_messages") or [])
    return len(ev & cov) / len(ev)
def report(rows, order=lambda r: r["hits"], k=10, label=""):
    by = collections.defaultdict(list)
    for r in rows:
        hs = order(r)
        v = recall(hs, r["ev"], k)
        by["all"].append(v); by[CATS[r["cat"]]].append(v)
    out = " ".join(f"{n}={100*sum(v)/len(v):.1f}" for n, v in by.items())
    print(f"{label:<28} R@{k} {out}")
if __name__ == "__main__":
    rows = pickle.load(open(sys.argv[1], "rb"))
    for k in (5, 10, 20, 30, 50, 100):
        report(rows, k=k)
