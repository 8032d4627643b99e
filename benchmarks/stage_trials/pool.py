"""Dump each question's top-100 pool from kept LoCoMo vaults (current search) for offline reranking trials.
usage: pool.py DATA.json VAULTS_DIR OUT.pkl [model]"""
import os
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from locomo import load_conversations

from vaultmem.api import Memory
from vaultmem.index.embed import Embedder

data, vaults, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
model = sys.argv[4] if len(sys.argv) > 4 else None
emb = Embedder(model) if model else Embedder()
rows = []
for conv in load_conversations(data):
    mem = Memory(vaults / conv.sample_id, embedder=emb)
    for q in conv.questions:
        hits = mem.searcher.search(q.text, k=100, user="default", min_score=0.0)
        if hits.warning:  # a keyword-scan fallback (an index of an older layout) is no pool
            raise SystemExit(f"{conv.sample_id}: {hits.warning}")
        res = {"hits": [h.to_dict() for h in hits]}
        rows.append({"conv": conv.sample_id, "q": q.text, "cat": q.category, "ev": set(q.evidence),
                     "hits": [{k: h.get(k) for k in ("text", "type", "score", "parts", "source_messages", "id", "path", "title", "valid_from")} for h in res["hits"]]})
    print(conv.sample_id, len(rows), file=sys.stderr)
pickle.dump(rows, open(out, "wb"))
