"""Re-score each pool's top 30 or 50 as score + a x the cosine of a second model (enc.py).
usage: fuse.py POOL.pkl ENC.pkl"""
import pickle
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from score import report

rows = pickle.load(open(sys.argv[1], "rb")); enc = pickle.load(open(sys.argv[2], "rb"))
def cos(name, r, h):
    tv, qv = enc[name]
    return float(tv[h["text"]] @ qv[r["q"]])
report(rows, label="base")
for name in enc:
    for N in (30, 50):
        for a in (0.3, 0.6, 1.0, 2.0, 100):
            def order(r, N=N, a=a, name=name):
                top = r["hits"][:N]
                return sorted(top, key=lambda h: -(h["score"] + a * cos(name, r, h))) + r["hits"][N:]
            report(rows, order, label=f"{name[:8]} N={N} a={a}")
names = list(enc)
if len(names) > 1:
    for a in (0.3, 0.6, 1.0):
        def order(r, a=a):
            top = r["hits"][:50]
            return sorted(top, key=lambda h: -(h["score"] + a * cos(names[0], r, h) + a * cos(names[1], r, h)))
        report(rows, order, label=f"both N=50 a={a}")
