"""benchmarks/lofo_draws.py: several draws of the calibration split (``judge_lofo.py --calib-seed``)
read as one table, and refused when the runs are not draws of one table."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ld():
    spec = importlib.util.spec_from_file_location("lofo_draws", ROOT / "benchmarks" / "lofo_draws.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(seed, aucs, pooled, **over):
    doc = {"command": f"python benchmarks/judge_lofo.py m.jsonl --lang en --calib-seed {seed} --json r{seed}.json",
           "families": sorted(aucs), "human_groups": ["g1", "g2"], "sealed": {"families": ["x"], "groups": []},
           "calibration": "nested held-out-family Platt", "calibration_split": "family", "seed": 0,
           "calib_seed": seed, "pooled_auc": pooled,
           "lofo": {f: {"auc": a, "p_human_h": 0.7, "p_human_m": 0.3 + seed / 100} for f, a in aucs.items()}}
    doc.update(over)
    return doc


def test_draws_are_combined_per_family_and_pooled(ld):
    runs = [_run(0, {"piper": 0.9, "kokoro": 0.7}, 0.80), _run(1, {"piper": 0.6, "kokoro": 0.8}, 0.70),
            _run(2, {"piper": 0.75, "kokoro": 0.75}, 0.75)]
    doc = ld.combine(runs)
    assert doc["calib_seeds"] == [0, 1, 2]
    p = doc["families"]["piper"]["auc"]
    assert p["min"] == 0.6 and p["max"] == 0.9 and abs(p["mean"] - 0.75) < 1e-12 and p["n"] == 3
    assert abs(doc["families"]["kokoro"]["p_human_m"]["mean"] - 0.31) < 1e-12
    assert abs(doc["pooled_auc"]["mean"] - 0.75) < 1e-12 and doc["pooled_auc"]["min"] == 0.70
    # each draw's mean per-family AUC: 0.8, 0.7, 0.75
    m = doc["mean_family_auc"]
    assert abs(m["min"] - 0.7) < 1e-12 and abs(m["max"] - 0.8) < 1e-12 and abs(m["mean"] - 0.75) < 1e-12


@pytest.mark.parametrize("bad,msg", [
    (lambda r: [r[0]], "at least two runs"),
    (lambda r: [r[0], dict(r[1], calib_seed=0)], "calibration seeds repeat"),
    (lambda r: [r[0], dict(r[1], calibration_split="voice")], "'calibration_split'"),
    (lambda r: [r[0], dict(r[1], seed=3)], "'seed'"),
    (lambda r: [r[0], dict(r[1], command=r[1]["command"] + " --turns 6")], "their command"),
])
def test_runs_that_are_not_draws_of_one_table_are_refused(ld, bad, msg):
    runs = [_run(0, {"piper": 0.9}, 0.8), _run(1, {"piper": 0.6}, 0.7)]
    with pytest.raises(ValueError, match=msg):
        ld.combine(bad(runs))


def test_cli_prints_the_table_writes_json_and_exits_2_on_bad_input(tmp_path):
    paths = []
    for seed, a in ((0, 0.9), (1, 0.6)):
        p = tmp_path / f"r{seed}.json"
        p.write_text(json.dumps(_run(seed, {"piper": a}, a)))
        paths.append(str(p))
    out = tmp_path / "draws.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lofo_draws.py"), *paths, "--json", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "2 draws of the calibration split (seeds [0, 1])" in r.stdout
    assert "piper" in r.stdout and "0.750  0.600  0.900" in r.stdout
    assert json.loads(out.read_text())["families"]["piper"]["auc"]["n"] == 2
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lofo_draws.py"), paths[0], paths[0]],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("lofo_draws: calibration seeds repeat")
