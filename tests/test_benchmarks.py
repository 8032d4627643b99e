"""Smoke runs of the benchmark harnesses, so that they cannot rot: each runs as a user runs
it, exits 0 and ends with a well-formed JSON line. Timings are benchmarks' business, not
asserted here. The perf harness's smoke, the longest, is tests/test_perf_harness.py."""

import json
import re
import subprocess
import sys

import pytest

from tests.helpers.harness import BENCH, LOCOMO_DEV, ROOT, SHARED, run_harness

SPEC_KEYS = {"questions", "recall@5", "recall@10", "words_per_hit", "sources_per_hit",
             "baseline_hybrid_recall@10"}


def test_evidence_ids_are_normalised():
    from locomo import normalise_evidence

    assert normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D1:3"]) == [
        "D8:6", "D9:17", "D11:26", "D30:5", "D1:3"]
    assert normalise_evidence(["", "D4"]) == []


def test_session_dates_parse_to_naive_datetimes():
    from locomo import parse_session_date

    assert parse_session_date("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"
    assert parse_session_date("12:09 am on 13 September, 2023").isoformat() == "2023-09-13T00:09:00"
    assert parse_session_date("sometime") is None


def test_a_longmemeval_transcript_keeps_the_assistants_turns_the_assistants(tmp_path):
    """LoCoMo's two people are both users; LongMemEval's assistant is the assistant, whose long
    answers the extractor must not take for the person's words."""
    from locomo import Conversation, Turn, write_transcript

    turns = [Turn("D1:1", "user", "I got boots from Zara.", None, ""),
             Turn("D1:2", "assistant", "1 can black beans, drained and rinsed", None, ""),
             Turn("D2:1", "Caroline", "I went to a support group.", None, "")]
    path = tmp_path / "t.jsonl"
    write_transcript(Conversation("x", turns, [], 2), path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(line["speaker"], line["role"]) for line in lines] == [
        ("user", "user"), ("assistant", "assistant"), ("Caroline", "user")]
    assert [line["session"] for line in lines] == ["x-session_1", "x-session_1", "x-session_2"]


def test_rrf_rewards_agreement_between_retrievers():
    from baselines import rrf_rankings

    assert rrf_rankings([[0, 1, 2]], [[1, 2, 0]]) == [[1, 0, 2]]


@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="the LoCoMo dev split is not beside the repo")
def test_locomo_harness_smoke(tmp_path):
    report_path = tmp_path / "locomo.json"
    figures, stdout = run_harness(BENCH / "locomo.py", LOCOMO_DEV, "--conversations", "conv-30",
                                  "--max-sessions", "2", "--max-questions", "8",
                                  "--json", report_path)
    assert SPEC_KEYS <= set(figures)
    assert 0 < figures["questions"] <= 8
    for key in ("recall@5", "recall@10", "baseline_hybrid_recall@10"):
        assert 0.0 <= figures[key] <= 1.0, key
    assert figures["recall@5"] <= figures["recall@10"]
    assert figures["words_per_hit"] > 0 and figures["sources_per_hit"] >= 0
    for system in ("vaultmem", "bm25", "dense", "hybrid"):
        assert re.search(rf"^{system}\s+overall\s+\d+", stdout, re.MULTILINE), system
    report = json.loads(report_path.read_text())
    assert report["figures"] == figures
    assert set(report["systems"]) == {"vaultmem", "bm25", "dense", "hybrid"}
    assert report["extract"]["conv-30"]["sessions"] == 2


def test_rewrite_bound_reads_the_vaults_locomo_kept_with_and_without_the_answer(tmp_path):
    """The bound on a question rewrite (issue 49): recall at each depth for the question as
    asked and with its gold answer appended, on the vaults `locomo.py --keep-vaults` built (a
    tiny conversation of the repo's own, so the test needs no data beside it)."""
    data, vaults = ROOT / "tests" / "data" / "answers" / "tiny-locomo.json", tmp_path / "vaults"
    run_harness(BENCH / "locomo.py", data, "--no-baselines", "--keep-vaults", vaults)
    figures, stdout = run_harness(BENCH / "rewrite_bound.py", data, vaults, "--k", "1,5")
    assert figures["questions"] == 3
    for form in ("asked", "with_answer"):
        assert 0.0 <= figures[form]["1"] <= figures[form]["5"] <= 1.0, figures
        assert re.search(rf"^{form}\s+overall\s+3\s", stdout, re.MULTILINE), stdout
    from rewrite_bound import query_forms

    assert query_forms("When did Jon go to Paris?", "28 January 2023") == {
        "asked": "When did Jon go to Paris?", "with_answer": "When did Jon go to Paris? 28 January 2023"}
    # a conversation whose vault is not there is named, with the command that builds it
    done = subprocess.run([sys.executable, BENCH / "rewrite_bound.py", data, tmp_path / "none"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "--keep-vaults" in done.stderr and "tiny-1" in done.stderr
    done = subprocess.run([sys.executable, BENCH / "rewrite_bound.py", data, vaults, "--conversations", "conv-0"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "no such conversation" in done.stderr and "conv-0" in done.stderr


MEMQUALITY_TINY = ROOT / "tests" / "data" / "memquality" / "tiny.json"
MEMQUALITY_KEYS = {"cases", "probes", "pass_rate", "by_kind", "type_ok", "memory_notes",
                   "secrets_leaked", "hygiene"}


def test_memquality_reads_memory_lines_of_a_context_block():
    from memquality import NOT_CURRENT, memory_entries

    block = ("## Relevant memories\n"
             "- [fact · 2026-11-20 · score 0.80] The user lives in Lisbon. (source: [[S#^m-3]])\n"
             "- [procedure · 2026-11-02 · score 0.50] Backups:\n1. plug in the disk\n2. run it\n"
             "- [fact · 2026-09-01 · until 2026-10-12 · score 0.40] The user lives in Porto.\n"
             "## Conversation excerpts\n"
             "- [2026-11-20 · [[S#^m-3]]] user: I live in Lisbon\n  assistant: lovely")
    entries = memory_entries(block)
    assert [e.split("] ")[1][:20] for e in entries] == [
        "The user lives in Li", "Backups:\n1. plug in ", "The user lives in Po"]
    assert "2. run it" in entries[1]
    assert [bool(NOT_CURRENT.search(e)) for e in entries] == [False, False, True]


def test_memquality_current_and_as_of_verdicts():
    from memquality import as_of_verdict, current_verdict

    lisbon = "- [fact · 2026-11-20 · score 0.8] The user lives in Lisbon."
    porto = "- [fact · 2026-09-01 · score 0.9] The user lives in Porto."
    porto_until = "- [fact · 2026-09-01 · until 2026-11-20 · score 0.9] The user lives in Porto."
    excerpt = "## Conversation excerpts\n- [2026-09-01 · [[S#^m-1]]] user: I live in Porto"
    verdict = lambda *lines: current_verdict("\n".join(lines), ["Lisbon"], ["Porto"])[0]  # noqa: E731
    assert verdict(lisbon, porto_until, excerpt)      # old value labelled, excerpts ignored
    assert not verdict(lisbon, porto)                  # old value shown as current
    assert not verdict(porto_until, lisbon)            # the old value comes first
    lisbon_until = "- [fact · 2026-11-20 · until 2026-12-01 · score 0.8] The user lives in Lisbon."
    assert not verdict(lisbon_until, porto_until)      # the current value shown as ended
    assert not verdict(excerpt)                        # no memory line names either
    hits = [{"type": "session", "path": "S.md", "text": "user: I live in Lisbon"},
            {"type": "entity", "path": "E.md", "text": "Lisbon"},
            {"type": "fact", "path": "F.md", "text": "The user lives in Porto."}]
    assert not as_of_verdict(hits, ["Lisbon"], {})[0]
    assert as_of_verdict(hits, ["Porto"], {})[0]
    assert as_of_verdict(hits, ["Douro"], {"F.md": "The user lives in Porto, by the Douro."})[0]
    assert as_of_verdict(hits[:2], ["Lisbon"], {}) == (False, "no memory hit among 2 hits")


def test_a_secret_inside_a_content_hash_is_no_leak(tmp_path):
    """"5821" inside a chunk's sha-256 ("…a465821fa6…") is a hash's digits, not the locker
    code; the same digits said as a code, in a file or a store or an output, are a leak."""
    from vault_audit import find_text

    digest = "4f1bd7158422fc0cbb559c0f3f55d1ecb7add10d05a465821fa66e5c6237f958"
    (tmp_path / "index.bin").write_bytes(b"\x00chunk " + digest.encode() + b"\x00")
    (tmp_path / "62").mkdir()
    (tmp_path / "62" / "6bc31599a9bc2fecd7816174e0af3251b6a549").write_bytes(b"x")   # a git object's name
    assert find_text("5821", tmp_path, {"search": f"commit {digest}"}, {"lancedb table": repr([digest])}) == []
    assert find_text("3159", tmp_path, {}, {}) == []
    (tmp_path / "note.md").write_text("locker code 5821, don't tell", encoding="utf-8")
    assert find_text("5821", tmp_path, {"search": "code is 5821"}, {"git log": "+ 5821"}) == [
        "file note.md", "git log", "output of `search`"]
    key = "a3f9c2d1e4b5a6f7089a1b2c3d4e5f6a7b8c9d0e"   # a hex secret is found whole
    (tmp_path / "key.md").write_text(f"token {key}", encoding="utf-8")
    assert find_text(key, tmp_path, {}, {}) == ["file key.md"]
    (tmp_path / "logs").write_text("0000 1f8b Seed <m@x> 1796558214 +0000\tcommit: vaultmem: extract",
                                   encoding="utf-8")   # a commit's Unix time holds the digits
    card = "4111111111111111"                          # a long number said whole is a leak
    (tmp_path / "card.md").write_text(f"card {card}", encoding="utf-8")
    assert find_text("5821", tmp_path, {}, {}) == ["file note.md"]
    assert find_text(card, tmp_path, {}, {}) == ["file card.md"]
    txn = tmp_path / "_transactions"   # LanceDB names a transaction with a UUID, in its name and bytes
    txn.mkdir()
    (txn / "5-1355821a-bfce-4eb7-9fdb-00133ac9505e.txn").write_bytes(b"\x08\x051355821a-bfce-4eb7-9fdb-00133ac9505e")
    assert find_text("5821", tmp_path, {}, {"lancedb": "uuid 1355821a-bfce-4eb7-9fdb-00133ac9505e"}) == ["file note.md"]
    assert find_text("5821", tmp_path, {"search": "code 5821-bfce"}, {}) == ["file note.md", "output of `search`"]


def test_the_git_log_names_blobs_in_full(tmp_path):
    """The secret check reads `git log -p` with every blob id whole, so that a code's digits
    inside an id are a hash's (`HASH_RUN`), not a leak; the code in a committed note still is."""
    from vault_audit import HASH_RUN, decoded_stores, find_text

    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (tmp_path / "note.md").write_text("first\n", encoding="utf-8")
    subprocess.run([*git, "add", "note.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (tmp_path / "note.md").write_text("locker code 5821\n", encoding="utf-8")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    stores = decoded_stores(tmp_path)
    log = stores["git log -p --all"]
    ids = re.findall(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", log, re.MULTILINE)
    assert ids and all(len(i) >= HASH_RUN for pair in ids for i in pair), log
    assert "git log -p --all" in find_text("5821", tmp_path, {}, stores)


def test_memquality_hygiene_heuristics():
    from vault_audit import broken_fence_reason, content_words, junk_entity_reason

    assert content_words("The user is allergic to penicillin.") == 4
    assert content_words("The user and others will see.") == 3
    assert content_words("The wifi password is [REDACTED:password].") == 2
    assert content_words("用户对芒果过敏") == 4
    assert [junk_entity_reason(n) is not None for n in ("QA", "SELECT", "REDACTED", "2026",
                                                        "Noor", "Kestrel Freight", "NASA")] == [
        True, True, True, True, False, False, False]
    from vault_audit import fragment_hub

    assert [fragment_hub(n) for n in ("The Priory of the Orange Tree", "the Loop", "The Silent Patient",
                                      "Kestrel Freight", "the bakery", "The best one", "a coffee shop in",
                                      "beach", "my Mom and Dad at the", "go to the Loop with my friends"
                                      )] == [False, False, False, False, True, True, True, True, True, True]
    assert broken_fence_reason("text\n```python\nx = 1\n```\n") is None
    assert broken_fence_reason("text\n\\```python\nx = 1\n\\```") == "escaped fence \\```"
    assert broken_fence_reason("```python\nx = 1\n") == "odd number of ``` fences"


def test_memquality_harness_smoke(tmp_path):
    """A tiny case whose outcomes are known: strings never said are in no note and leak
    nowhere; a word said openly ("Pistachio", probed as a secret) is found in the notes, in
    git and in command output; a plainly stated fact is remembered and current. No `as_of`
    probe: each probe command loads the model (~10 s here), and the verdict is tested above."""
    report_path = tmp_path / "memquality.json"
    figures, stdout = run_harness(BENCH / "memquality.py", MEMQUALITY_TINY, "--json", report_path,
                                  timeout=300)
    assert MEMQUALITY_KEYS <= set(figures)
    assert set(figures["by_kind"]) == {"memory", "no_memory", "current", "as_of", "secret"}
    assert figures["cases"] == 1 and figures["probes"] == 6
    assert isinstance(figures["secrets_leaked"], int) and figures["secrets_leaked"] == 1
    assert figures["by_kind"]["secret"] == 0.5
    assert isinstance(figures["memory_notes"], int) and figures["memory_notes"] >= 1
    assert set(figures["hygiene"]) == {"not_self_contained", "unresolved_references",
                                       "short_memories", "junk_entities", "uuid_sessions",
                                       "broken_fences", "filler_openers", "bad_agreement", "requests",
                                       "correction_talk", "long_titles", "fragment_hubs"}
    assert "memory notes with an unresolved reference or fewer than 4 content words" in stdout
    assert "what a reader sees (issue 33): filler openers " in stdout
    assert re.search(r"^tiny\s+\d/2\s+1/1\s+\d/1\s+-\s+1/2\s", stdout, re.MULTILINE), stdout
    report = json.loads(report_path.read_text())
    assert report["figures"] == figures
    outcome = {p["id"]: p for p in report["probes"]}
    assert not outcome["never-said"]["passed"]
    assert outcome["never-said-noise"]["passed"]
    assert outcome["never-said-secret"]["passed"]
    leak = outcome["not-a-secret"]
    assert not leak["passed"]
    for place in ("file Memory/Sessions/", "git log -p --all", "git objects", "output of `"):
        assert place in leak["found"], place
    # What the product must get right on a trivial transcript.
    for probe in ("allergy", "city-now"):
        assert outcome[probe]["passed"], outcome[probe]
    assert outcome["allergy"]["type_ok"] is True


def test_memquality_answers_hands_each_current_block_to_a_reader_then_a_judge(tmp_path):
    """`--answers`: each current probe's block goes to a reader (the block, the case's day and the
    question; never the expected value), and only after every reader has answered, each reply goes
    to LongMemEval's knowledge-update judge with `expect` as the correct answer; the judge's yes or
    no is `current_answered`, over every current probe. A reader that fails is a wrong answer with
    no judge asked; a judge that fails is no "yes", whatever its error says. The model is a
    stand-in the test serves on loopback."""
    from tests.helpers.llm_endpoint import LoopbackLLM, completion

    case = json.loads(MEMQUALITY_TINY.read_text(encoding="utf-8"))
    case["name"] = "tiny-yes"   # a "yes" in every URL of the case, so in a failed request's error text
    case["transcripts"][0]["path"] = str(MEMQUALITY_TINY.parent / case["transcripts"][0]["path"])
    case["probes"] += [
        {"id": "allergy-now", "kind": "current", "question": "What is the user allergic to?",
         "expect": ["penicillin"], "stale": []},
        {"id": "reader-down", "kind": "current", "question": "What does the user drink?", "expect": ["tea"],
         "stale": []},
        {"id": "judge-down", "kind": "current", "question": "What is the user's name?", "expect": ["Ana"],
         "stale": []}]
    path = tmp_path / "tiny-yes.json"
    path.write_text(json.dumps(case), encoding="utf-8")

    class Model(LoopbackLLM):
        def answer(self, body):
            prompt = body["messages"][-1]["content"]
            if prompt.startswith("Memory:"):
                if prompt.endswith("What does the user drink?\nAnswer:"):
                    return 500, completion("down")
                where = prompt.endswith("Where does the user live?\nAnswer:")
                return 200, completion("The user lives in Lisbon." if where else "Reykjavik, I think.")
            if "Correct Answer:" in prompt:
                if "Correct Answer: Ana" in prompt:
                    return 500, completion("down")
                return 200, completion("no" if "Reykjavik" in prompt.split("Model Response:")[1] else "yes")
            return 200, completion('{"memory_items": [], "secrets": []}')   # the extraction: nothing

    with Model() as model:
        host, port = model.server.server_address
        table = tmp_path / "llm.toml"
        table.write_text(f'[llm]\nbase_url = "http://{host}:{port}/t/{{case}}/v1"\nmodel = "m"\n'
                         f'api_key_env = ""\ntimeout = 30\n', encoding="utf-8")
        figures, stdout = run_harness(BENCH / "memquality.py", path, "--llm", "--llm-config", table,
                                      "--answers", timeout=300)
    prompts = [(r["path"], r["body"]["messages"][-1]["content"]) for r in model.requests]
    readers = [i for i, (_, text) in enumerate(prompts) if text.startswith("Memory:")]
    judges = [i for i, (_, text) in enumerate(prompts) if "Correct Answer:" in text]
    assert len({prompts[i][1] for i in readers}) == 4 and max(readers) < min(judges)   # every reader, then judges
    assert all(prompts[i][0].startswith("/t/tiny-yes/") for i in readers)
    assert all(prompts[i][0].startswith("/t/tiny-yes-judge/") for i in judges)
    where = next(text for i in readers if (text := prompts[i][1]).endswith("Where does the user live?\nAnswer:"))
    assert "Today is 2026-11-30." in where
    assert not any("penicillin" in prompts[i][1].split("Question:")[1] for i in readers)   # no reader sees expect
    asked = {prompts[i][1].split("Correct Answer: ")[1].split("\n")[0] for i in judges}
    assert asked == {"Lisbon", "penicillin", "Ana"}   # no judge for the reader that failed
    lisbon = next(prompts[i][1] for i in judges if "Correct Answer: Lisbon" in prompts[i][1])
    assert "as long as the updated answer is the required answer" in lisbon   # the knowledge-update prompt
    # Lisbon right; penicillin answered wrong; the reader and the judge that failed count wrong
    assert figures["current_answered"] == 0.25 and figures["current_answered_n"] == 4
    assert figures["current_answered_failed"] == 2
    assert "25.0 % of 4 (2 with no block, reader or judge: counted wrong)" in stdout


def test_memquality_rerank_has_the_model_order_every_block_and_search(tmp_path):
    """`--rerank`: each vault, once built, has `[search] rerank = "llm"`, so every probe's
    `context` and `search --as-of` asks the model for its order (the as-of search told the
    day asked of); the extraction itself asks no rerank. The model is a stand-in the test
    serves on loopback, which ranks the first passage only."""
    from tests.helpers.llm_endpoint import LoopbackLLM, completion

    case = json.loads(MEMQUALITY_TINY.read_text(encoding="utf-8"))
    case["transcripts"][0]["path"] = str(MEMQUALITY_TINY.parent / case["transcripts"][0]["path"])
    case["probes"] += [{"id": "city-then", "kind": "as_of", "as_of": "2026-11-29",
                        "question": "Where does the user live?", "expect": ["Lisbon"]}]
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(case), encoding="utf-8")

    class Model(LoopbackLLM):
        def answer(self, body):
            if "Passages:" in body["messages"][-1]["content"]:
                return 200, completion('{"ranking": [1]}')
            return 200, completion('{"memory_items": [], "secrets": []}')   # the extraction: nothing

    table = tmp_path / "llm.toml"
    with Model() as model:
        host, port = model.server.server_address
        table.write_text(f'[llm]\nbase_url = "http://{host}:{port}/t/{{case}}/v1"\nmodel = "m"\n'
                         f'api_key_env = ""\ntimeout = 30\n', encoding="utf-8")
        figures, _ = run_harness(BENCH / "memquality.py", path, "--llm", "--llm-config", table, "--rerank",
                                 timeout=300)
    asked = [r["body"]["messages"][-1]["content"] for r in model.requests]
    reranks = [text for text in asked if "Passages:" in text]
    assert [text.split("\n")[:2] for text in reranks] == [
        ["Question: Where does the user live?", "Asked on: 2026-11-30"],    # the current probe's block
        ["Question: Where does the user live?", "Asked on: 2026-11-29"]]    # the as-of probe's search
    assert len(asked) > len(reranks) and figures["rerank"] == "llm"
    done = subprocess.run([sys.executable, str(BENCH / "memquality.py"), str(path), "--rerank"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode and "--rerank asks the model" in done.stderr


LOCOMO_ZH = SHARED / "eval" / "locomo-zh" / "locomo-zh-dev.json"


@pytest.mark.skipif(not LOCOMO_ZH.exists(), reason="the LoCoMo-zh dev split is not beside the repo")
def test_models_harness_smoke():
    rows, stdout = run_harness(BENCH / "models.py", LOCOMO_ZH, "--max-sessions", "2",
                               "--models", "use-multilingual-v3,all-MiniLM-L6-v2")
    assert [r["model"] for r in rows] == ["use-multilingual-v3", "all-MiniLM-L6-v2"]
    assert "pair R@10" in stdout
    for row in rows:
        assert 0 <= row["single_recall@10"] <= 100 and 0 <= row["pair_recall@10"] <= 100
        assert row["pairs_per_second"] > 0 and row["query_ms"] > 0
        assert -1 <= row["different_fact_max_cosine"] <= 1 and -1 <= row["same_fact_min_cosine"] <= 1
    # the multilingual model reads these Chinese turns; the English one barely does
    assert rows[0]["pair_recall@10"] > rows[1]["pair_recall@10"]


def test_review_notes_writes_each_memory_with_its_turn_and_scores_verdicts(tmp_path):
    case = sorted((ROOT / "benchmarks/data/blind/batch2/tune").glob("b2-a-00*-en-*.json"))[0]
    out = tmp_path / "notes.jsonl"
    done = subprocess.run([sys.executable, str(BENCH / "review_notes.py"), str(out), str(case)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert counts["notes"] == len(rows) > 0 and counts["without_source_turn"] == 0
    for row in rows:
        assert row["body"] and row["type"] in ("fact", "preference", "event", "procedure")
        assert any(turn.startswith("**user**") or "user" in turn for turn in row["source_turns"]), row
        assert not any(turn.startswith("---") for turn in row["source_turns"]), row   # no YAML header
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("".join(json.dumps({"i": i, "lang": "en", "verdict": v, "codes": c}) + "\n"
                                for i, (v, c) in enumerate([("keep", []), ("fix", ["title"]), ("drop", ["chat"])])))
    scored = subprocess.run([sys.executable, str(BENCH / "review_notes.py"), "--score", str(verdicts)],
                            capture_output=True, text=True, timeout=120)
    figures = json.loads(scored.stdout)
    assert (figures["keep"], figures["fix"], figures["drop"], figures["codes"]) == (1, 1, 1, {"title": 1, "chat": 1})
    assert figures["by_lang"]["en"]["keep_rate"] == round(1 / 3, 3)


def test_review_notes_reads_the_vaults_memquality_kept(tmp_path):
    """--vaults: the notes of a vault already built (through the model, by memquality.py
    --keep-vaults) are written for the reader as the offline ones are, with their turns."""
    from vaultmem import api

    case = sorted((ROOT / "benchmarks/data/blind/batch2/tune").glob("b2-a-00*-en-*.json"))[0]
    data = json.loads(case.read_text(encoding="utf-8"))
    vault = tmp_path / "kept" / case.stem
    api.init(vault, model="all-MiniLM-L6-v2")
    api.Memory(vault).add("The user keeps bees on the roof of their building.", type="fact")
    out = tmp_path / "notes.jsonl"
    done = subprocess.run([sys.executable, str(BENCH / "review_notes.py"), "--vaults", str(tmp_path / "kept"),
                           str(out), str(case)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["case"], row["lang"], row["type"]) == (case.stem, data.get("lang"), "fact")
    assert row["body"] == "The user keeps bees on the roof of their building."


def test_plugin_api_harness_smoke():
    figures, stdout = run_harness(BENCH / "plugin_api.py", "--notes", "100", "--user-notes", "20",
                                  "--runs", "3")
    assert figures["notes"] == 100 and figures["review_count"] > 0
    for name in ("status_http", "status_socket", "search_http", "search_socket", "review_http",
                 "related_note_http", "related_memory_http"):
        assert 0 < figures[name]["p50_ms"] <= figures[name]["p95_ms"], name


def test_the_agent_session_corpus_loads_with_every_question_scorable():
    """Issue 51's agent sessions (benchmarks/data/blind/agent51): each file loads as locomo.py
    reads it, the assistant's turns are the assistant's, and every question keeps its evidence
    and its day (a question whose evidence named no turn would silently leave the figure)."""
    import json

    from locomo import load_conversations

    for name in ("dev.json", "heldout.json"):
        path = ROOT / "benchmarks" / "data" / "blind" / "agent51" / name
        raw = json.loads(path.read_text(encoding="utf-8"))
        conversations = load_conversations(path)
        assert len(conversations) == 4
        assert sum(len(c.questions) for c in conversations) == sum(len(s["qa"]) for s in raw) == 24
        assert all(q.asked is not None and q.kind for c in conversations for q in c.questions)
        assert all({t.speaker for t in c.turns} == {"user", "assistant"} for c in conversations)


def test_answer_judges_read_as_the_published_scripts_read_them():
    from answers import LME_JUDGE, judge_messages, judged_correct

    assert judged_correct("multi-session", "Yes.") and not judged_correct("temporal-reasoning", "No")
    assert judged_correct("", 'The answer names the same date. {"label": "CORRECT"}')
    assert not judged_correct("", '{"label": "WRONG"}') and not judged_correct("", "I cannot tell")
    assert judged_correct("", "It refers to the same month, so: CORRECT")
    temporal = judge_messages("temporal-reasoning", "How many days?", "18 days", "19 days")[0]["content"]
    assert "off-by-one" in temporal and temporal.endswith("Answer yes or no only.") and "18 days" in temporal
    assert "Rubric: likes jazz" in judge_messages("single-session-preference", "Q?", "likes jazz", "R")[0]["content"]
    assert judge_messages("multi-session", "Q?", "3", "R")[0]["content"] == LME_JUDGE["default"].format("Q?", "3", "R")
    locomo = judge_messages("", "When did Jon go to Paris?", "28 January 2023", "Late January")[0]["content"]
    assert "Gold answer: 28 January 2023" in locomo and '"label"' in locomo


def test_answers_harness_smoke_readers_never_see_the_gold_and_judges_come_after(tmp_path):
    """answers.py against a stand-in endpoint the test serves on loopback (`--llm`): the reader
    gets the context block and the question, the judge only question, gold and reply, and no
    judge is asked before every reader has answered."""
    from tests.helpers.llm_endpoint import LoopbackLLM, completion

    class Model(LoopbackLLM):
        def answer(self, body):
            prompt = body["messages"][-1]["content"]
            if prompt.startswith("Memory:"):
                return 200, completion(prompt.split("\n")[2][:200])   # the block's first line
            return 200, completion('{"label": "CORRECT"}' if "Gold answer:" in prompt else "no")

    with Model() as model:
        host, port = model.server.server_address
        table = tmp_path / "llm.toml"
        table.write_text(f'[llm]\nbase_url = "http://{host}:{port}/t/{{case}}/v1"\nmodel = "m"\n'
                         f'api_key_env = ""\ntimeout = 30\n', encoding="utf-8")
        figures, stdout = run_harness(BENCH / "answers.py", ROOT / "tests" / "data" / "answers" / "tiny-locomo.json",
                                      "--llm", table, "--budget", "300", "--json", tmp_path / "answers.json")
    assert figures["questions"] == 3 and figures["accuracy"] == 100.0
    assert 0 < figures["context_tokens_mean"] <= 300
    tags = [r["path"].split("/")[2] for r in model.requests]
    assert tags == ["tiny-1"] * 3 + ["tiny-1-judge"] * 3
    readers, judges = model.requests[:3], model.requests[3:]
    rows = json.loads((tmp_path / "answers.json").read_text())["rows"]
    for request in readers:
        text = json.dumps(request["body"])
        assert "Gold answer" not in text and "Memory:" in text
        # LoCoMo dates no question: it is asked on the day of the conversation's last session
        assert "Today is 2023-01-29." in text
    judged = [request["body"]["messages"][0]["content"] for request in judges]
    assert all("Memory:" not in text for text in judged)
    for row in rows:   # each judge sees its question's gold answer (they run side by side)
        assert sum(f"Question: {row['question']}\nGold answer: {row['gold']}\n" in text for text in judged) == 1
    assert "answer accuracy 100.0 % of 3" in stdout


def test_a_sample_of_questions_is_spread_over_each_conversation():
    from answers import spread

    questions = list(range(150))
    assert spread(questions, 4) == [0, 37, 75, 112]
    assert spread(questions, None) == questions and spread(questions[:3], 5) == [0, 1, 2]


def test_the_block_audit_counts_hubs_repeats_and_overlaps_from_the_text_alone(tmp_path, embedder, monkeypatch):
    """benchmarks/blocks.py (issue 50) reads a block's excerpts back to their turns through the
    session note: the block before issue 50 (an empty hub, a turn shown twice, two windows
    sharing a turn) counts 1 each; the block context gives now counts none."""
    sys.path.insert(0, str(BENCH))
    from blocks import BlockAudit
    from test_brief import ACME, PRIYA, QUESTION, claude_code_log

    from vaultmem import api

    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-06T09:00:00")
    root = tmp_path / "vault"
    api.init(root)
    memory = api.Memory(root, embedder=embedder)
    assert not memory.extract([claude_code_log(tmp_path / "5a1b2c3d.jsonl", ACME, PRIYA)]).get("errors")
    session = next((root / "Memory" / "Sessions").glob("*.md")).stem
    turn = lambda n: f"[[{session}#^d{n:07d}-0000-4000-8000-000000000001]]"   # noqa: E731
    before = "\n".join([
        "## Relevant memories (most relevant first)",
        f"- [fact · 2026-12-01 · score 0.75] The user is Priya. (source: [[Sessions/{session}#^d0000000-0000-4000-8000-000000000001]])",
        "- [entity · 2026-12-06 · score 0.45] Acme Hub note: memories that mention Acme link here (see backlinks).",
        f"- [2026-12-01 · {turn(0)} · score 0.31] user: {PRIYA[0][1]}", f"  assistant: {PRIYA[1][1]}",
        f"- [2026-12-01 · {turn(1)} · score 0.30] assistant: {PRIYA[1][1]}", f"  user: {PRIYA[2][1]}"])
    audit = BlockAudit(root)
    assert audit.count(before) == {"hub_lines": 1, "repeats": 1, "overlaps": 1}
    now = memory.context(QUESTION, budget=600)["text"]
    assert "we moved the CI" in now and audit.count(now) == {"hub_lines": 0, "repeats": 0, "overlaps": 0}
