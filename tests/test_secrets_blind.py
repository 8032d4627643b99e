"""Issue 32: secrets in phrasings written by a helper who never read the detector
(benchmarks/data/blind/secrets1/: 240 messages with a secret, 120 look-alikes, EN, ZH and
mixed, split by a hash of each into a half tuned on and a half never read). The figures are
floors at what the detector reached when these were written (tune 123 of 126, held-out 91 of
114; issue 32's note), so a change that loses ground fails here; the goal stays every secret
kept out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vaultmem.policy.redact import redact

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "blind" / "secrets1"
FLOORS = {"tune": 0.97, "heldout": 0.79}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("half", ["tune", "heldout"])
def test_secrets_written_blind_are_kept_out_at_least_as_well_as_when_measured(half):
    positives = rows(f"positives-{half}.jsonl")
    assert len(positives) >= 100 and {p["lang"] for p in positives} == {"en", "zh", "mixed"}
    kept_out = [p for p in positives if p["secret"] not in redact(p["text"])[0]]
    assert len(kept_out) / len(positives) >= FLOORS[half], (
        f"{len(kept_out)} of {len(positives)} kept out; floor {FLOORS[half]:.0%}")


@pytest.mark.parametrize("half", ["tune", "heldout"])
def test_look_alikes_written_blind_are_left_alone(half):
    negatives = rows(f"negatives-{half}.jsonl")
    changed = [n["text"] for n in negatives if redact(n["text"])[0] != n["text"]]
    assert len(changed) <= len(negatives) // 50, changed


def test_the_halves_share_no_message():
    for kind in ("positives", "negatives"):
        tune = {r["text"] for r in rows(f"{kind}-tune.jsonl")}
        assert not tune & {r["text"] for r in rows(f"{kind}-heldout.jsonl")}
