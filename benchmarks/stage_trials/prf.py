"""Pseudo-relevance feedback (the top hits' centroid) and MMR diversity over each pool's top 50.
usage: prf.py POOL.pkl ENC.pkl MODEL"""
import pickle
import sys

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from score import report

rows = pickle.load(open(sys.argv[1], "rb")); enc = pickle.load(open(sys.argv[2], "rb"))
name = sys.argv[3]
tv, qv = enc[name]
report(rows, label="base")
for m in (3, 5):
    for g in (0.2, 0.4, 0.8):
        def order(r, m=m, g=g):
            top = r["hits"][:50]
            c = np.mean([tv[h["text"]] for h in top[:m]], axis=0); c /= np.linalg.norm(c)
            return sorted(top, key=lambda h: -(h["score"] + g * float(tv[h["text"]] @ c)))
        report(rows, order, label=f"prf m={m} g={g}")
# MMR-ish diversity
for lam in (0.1, 0.2, 0.3):
    def order(r, lam=lam):
        top = list(r["hits"][:50]); out = []
        while top:
            best = max(top, key=lambda h: h["score"] - lam * max([float(tv[h["text"]] @ tv[o["text"]]) for o in out] or [0]))
            out.append(best); top.remove(best)
        return out
    report(rows, order, label=f"mmr {lam}")
