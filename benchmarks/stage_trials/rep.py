"""Memories whose source turns higher hits already show, ranked down by a factor.
usage: rep.py POOL.pkl"""
import heapq
import pickle
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from score import report

rows = pickle.load(open(sys.argv[1], "rb"))
def demote(r, f=0.5, N=100):
    q = [(-h["score"], i, False, h) for i, h in enumerate(r["hits"][:N])]
    heapq.heapify(q); out, cov = [], set()
    while q:
        s, i, rep, h = heapq.heappop(q)
        src = set(h["source_messages"] or [])
        if not rep and src and src <= cov:
            heapq.heappush(q, (s * f, i, True, h)); continue
        out.append(h); cov |= src
    return out
report(rows, label="base")
for f in (0.8, 0.6, 0.5, 0.3):
    report(rows, lambda r, f=f: demote(r, f), label=f"demote {f}")
