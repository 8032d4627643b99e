"""Prototype: listwise rerank of each pool's top N by the local LLM. usage: llmrank.py POOL.pkl OUT.pkl N [limit]"""
import json
import pickle
import sys
import time
import urllib.request

rows = pickle.load(open(sys.argv[1], "rb")); N = int(sys.argv[3]); limit = int(sys.argv[4]) if len(sys.argv) > 4 else None
SYSTEM = ("You rank passages from a person's memory by how well they help answer a question. "
          "Reply with JSON only: {\"ranking\": [passage numbers, most helpful first]}. "
          "Include every passage that helps; leave out the ones that do not.")
def prompt(q, hits):
    lines = [f"[{i + 1}] {' '.join(h['text'].split())[:300]}" for i, h in enumerate(hits)]
    return f"Question: {q}\n\nPassages:\n" + "\n".join(lines) + "\n\nJSON:"
def chat(messages):
    body = {"model": "qwen2.5-coder-1.5b-instruct-q4_k_m", "messages": messages, "temperature": 0, "max_tokens": 120,
            "response_format": {"type": "json_object"}}
    req = urllib.request.Request("http://127.0.0.1:8765/v1/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=600).read())["choices"][0]["message"]["content"]
out = []
for n, r in enumerate(rows[:limit] if limit else rows):
    top = r["hits"][:N]
    t = time.time()
    try:
        reply = chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(r["q"], top)}])
        ranking = [int(x) for x in json.loads(reply).get("ranking", []) if str(x).isdigit()]
    except Exception as exc:
        reply, ranking = repr(exc), []
    out.append({"i": n, "reply": reply, "ranking": ranking, "seconds": time.time() - t})
    print(n, round(time.time() - t, 1), reply[:100], file=sys.stderr, flush=True)
    pickle.dump(out, open(sys.argv[2], "wb"))
