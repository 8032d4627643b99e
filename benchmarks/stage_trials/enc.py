"""Encode every pool hit text and question with extra models; cache in a pickle. usage: enc.py POOL.pkl OUT.pkl models..."""
import pickle
import sys
import time

sys.path[:0] = [str(__import__("pathlib").Path(__file__).resolve().parents[2])]
import numpy as np

from vaultmem.index.embed import Embedder

rows = pickle.load(open(sys.argv[1], "rb"))
texts = sorted({h["text"] for r in rows for h in r["hits"]})
qs = sorted({r["q"] for r in rows})
out = {}
for name in sys.argv[3:]:
    e = Embedder(name, threads=2)
    t = time.time()
    tv = e.encode(texts, batch_size=32)
    qv = np.stack([e.encode_query(q) for q in qs])
    out[name] = ({t: v for t, v in zip(texts, tv)}, {q: v for q, v in zip(qs, qv)})
    print(name, len(texts), time.time() - t, file=sys.stderr)
pickle.dump(out, open(sys.argv[2], "wb"))
