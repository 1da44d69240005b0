"""benchmarks/judge_lofo.py end to end on a small corpus (espeak-ng voices as families, the
shipped human clips as groups): the sealed split is drawn once, never reaches the shipped head,
and only `--final` scores it, logging each run and writing the validity line (issue 19)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf

from livejudge.audio import load_audio, resample

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt-get install espeak-ng)")]
TEXTS = ["I can help you with that booking today.", "Your order will arrive on Tuesday morning.",
         "Let me check the account details for you."]


def _manifest(d: Path) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("ctranslate2")
    rows = []
    for v in ("en+f3", "en+m3", "en-us", "en-gb-x-rp"):
        for k, t in enumerate(TEXTS):
            f = d / f"{v.replace('+', '_')}_{k}.wav"
            subprocess.run(["espeak-ng", "-v", v, "-w", str(f), t], check=True)
            rows.append({"path": f.name, "label": "machine", "family": f"espeak-{v}", "speaker": v, "duration_s": 2.0})
    for f in sorted((ROOT / "livejudge" / "data" / "audio" / "human").glob("*.wav")):
        spk = f.stem.rsplit("_", 1)[0]
        rows.append({"path": str(f), "label": "human", "family": spk, "speaker": spk, "duration_s": 2.0})
        if spk == "cmu_cards":  # the same person through an 8 kHz line: a narrowband voice of that group
            x, rate = load_audio(str(f))
            nb = d / f"{f.stem}_8k.wav"
            sf.write(nb, resample(resample(x, rate, 8000), 8000, 16000), 16000)
            rows.append({"path": nb.name, "label": "human", "family": spk, "speaker": spk + "-8k", "duration_s": 2.0})
    m = d / "manifest.jsonl"
    m.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return m


def _run(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "judge_lofo.py"), *map(str, args)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_sealed_split_reaches_only_the_final_run(tmp_path):
    m = _manifest(tmp_path)
    common = [m, "--turns", 2, "--per-human", 2, "--per-voice", 2, "--per-family", 2,
              "--sealed", tmp_path / "sealed.json", "--cache", tmp_path / "cache"]
    p = _run(*common, "--seal-families", 1, "--seal-groups", 1, "--ship", tmp_path / "head", "--json", tmp_path / "lofo.json")
    assert p.returncode == 0, p.stderr[-3000:]
    sealed = json.loads((tmp_path / "sealed.json").read_text())
    cfg = json.loads((tmp_path / "head" / "config.json").read_text())["training"]
    assert not set(sealed["families"]) & set(cfg["families"])
    assert not set(sealed["groups"]) & set(cfg["human_groups"])
    assert cfg["sealed_never_used"] == {"families": sealed["families"], "groups": sealed["groups"]}
    assert json.loads((tmp_path / "head" / "config.json").read_text())["version"].endswith("-candidate")
    lofo = json.loads((tmp_path / "lofo.json").read_text())
    assert not set(sealed["families"]) & set(lofo["lofo"]) and "sealed split not yet evaluated" in cfg["validity"]["summary"]
    # the comparison with the shipped head is also read without narrowband people (a bandwidth cue)
    c = lofo["compare_head"]
    assert c["dir"].endswith("whisper-fitted") and c["version"]
    assert "cmu_cards" not in sealed["groups"]  # seed 0 seals another group; the 8 kHz voice stays open
    assert c["narrowband_voices"] == ["cmu_cards-8k"]
    assert 0 < c["fresh_wideband_people_test_rows"] < c["fresh_people_test_rows"]
    for fam in c["fresh_families"]:
        assert lofo["lofo"][fam]["people_neither_met_wideband"]["n_h"] < lofo["lofo"][fam]["people_neither_met"]["n_h"]
    # the blend candidate (fixed weight 0.5 with the shipped head) from the same cache: the saved blend is
    # exactly the mean of its refit member's and the shipped head's log-odds on the cached vectors
    p = _run(*common, "--blend-compare", 0.5, "--ship", tmp_path / "blend", "--json", tmp_path / "blend.json")
    assert p.returncode == 0, p.stderr[-3000:]
    b = json.loads((tmp_path / "blend.json").read_text())
    assert b["blend_compare"]["weight"] == 0.5 and set(b["lofo"]) == set(lofo["lofo"])
    assert b["lofo"] != lofo["lofo"]  # the fold figures are the blend's, not the refit's
    bcfg = json.loads((tmp_path / "blend" / "config.json").read_text())["training"]
    assert [m["dir"] for m in bcfg["blend"]["members"]] == [str(tmp_path / "blend-refit"), "livejudge/judge/heads/whisper-fitted"]
    assert set(bcfg["validity"]["lofo"]) == set(c["fresh_families"])  # held out only where the shipped head never met
    member = json.loads((tmp_path / "blend-refit" / "config.json").read_text())["training"]["validity"]
    assert member["summary"].startswith("member of a blend") and "lofo" not in member
    import numpy as np

    from livejudge.judge.model.numpy_head import NumpyHead
    from livejudge.judge.model.odl import HUMAN, MACHINE

    z = np.load(next((tmp_path / "cache").glob("*.npz")))

    def log_odds(d):  # the judge's path: gated dimensions at z_mean, then the classifier (unclipped)
        h = NumpyHead.from_checkpoint(d)
        lg = h.outputs(np.where(z["G"], h.z_mean[None, :], h.latent({"features": z["X"]}))).logits
        return lg[:, HUMAN] - lg[:, MACHINE]

    lo = [log_odds(d) for d in (tmp_path / "blend-refit", ROOT / "livejudge/judge/heads/whisper-fitted", tmp_path / "blend")]
    np.testing.assert_allclose(lo[2], 0.5 * lo[0] + 0.5 * lo[1], atol=2e-3)
    # a second run with another seed keeps the stored seal
    p = _run(*common, "--seed", 7, "--final", "--head", tmp_path / "head", "--final-log", tmp_path / "final.jsonl",
             "--write-validity")
    assert p.returncode == 0, p.stderr[-3000:]
    log = [json.loads(x) for x in (tmp_path / "final.jsonl").read_text().splitlines()]
    assert len(log) == 1 and log[0]["sealed"]["families"] == sealed["families"]
    fams = log[0]["figures"]["per_family"]
    assert set(fams) == set(sealed["families"]) | {"people"} and all(r["n"] >= 1 for r in fams.values())
    v = json.loads((tmp_path / "head" / "config.json").read_text())["training"]["validity"]
    assert v["summary"].startswith("sealed split: " + sealed["families"][0] + " acc") and "; fitted on 3 families (" in v["summary"]
    assert "(final run 1)" in v["summary"]
