"""Smoke runs of the benchmark harnesses, so that they cannot rot: each runs as a user runs
it, exits 0 and ends with a well-formed JSON line. Timings are benchmarks' business, not
asserted here."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
LOCOMO_DEV = ROOT.parent / "shared" / "eval" / "locomo" / "locomo-dev.json"
SPEC_KEYS = {"questions", "recall@5", "recall@10", "words_per_hit", "sources_per_hit",
             "baseline_hybrid_recall@10"}

sys.path.insert(0, str(BENCH))


def run_harness(*args, timeout=900):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("VAULTMEM_VAULT", None)
    done = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last), done.stdout


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


def test_perf_harness_smoke(tmp_path):
    report_path = tmp_path / "perf.json"
    figures, _stdout = run_harness(BENCH / "perf.py", "--quick", "--notes", "200",
                                   "--idle-seconds", "2", "--json", report_path)
    skipped = figures.pop("skipped")
    # Parts that do not need the daemon must always be measured.
    for key in ("index_vs_encode", "search_p50_ms", "search_p95_ms", "nochange_scan_s",
                "large_search_p50_ms"):
        assert isinstance(figures.get(key), float) and math.isfinite(figures[key]), (key, skipped)
    assert figures["notes"] == 200 and figures["chunks"] >= 200
    daemon_figures = ("warm_search_s", "warm_speedup", "edit_to_searchable_p95_s",
                      "daemon_idle_cpu_percent", "daemon_rss_mb")
    for key in daemon_figures:
        # Measured, or reported missing with a reason.
        assert isinstance(figures.get(key), float) or skipped, key
    assert all(isinstance(reason, str) and reason for reason in skipped.values())
    assert json.loads(report_path.read_text())["figures"]["notes"] == 200
