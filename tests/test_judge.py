"""Judge: evidence gating, P(human) and contributions from a fake backbone."""

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

from livejudge.judge.backbones.base import Embedding, Evidence
from livejudge.judge.dimensions import DIMENSION_IDS
from livejudge.judge.head import BackboneInfo, HeadConfig, HeadError
from livejudge.judge.judge import Judge, JudgeError, load_judge, top_contributors
from livejudge.judge.odl import JudgeHead
from livejudge.window import WindowSnapshot


@dataclass
class FakeBackbone:
    """Returns a fixed vector per window (the window's first user sample seeds it)."""

    name: str = "fake-bb"
    embedding_dim: int = 8
    readouts: tuple = ("features",)
    evidence: dict = field(default_factory=dict)

    def embed(self, windows):
        out = []
        for w in windows:
            rng = np.random.default_rng(int(w.start_s * 10))
            out.append(Embedding({"features": rng.normal(size=self.embedding_dim).astype(np.float32)},
                                 evidence=dict(self.evidence)))
        return out


def window(start_s=0.0, end_s=2.0):
    n = int((end_s - start_s) * 16000)
    return WindowSnapshot(start_s, end_s, np.zeros(n, np.float32), np.zeros(n, np.float32))


def make_judge(evidence, evidence_min):
    torch.manual_seed(0)
    head = JudgeHead(8, readout="features", dropout=0.0)
    with torch.no_grad():
        head.odl.proj.weight.normal_(0, 1.0)
        head.classifier.weight.normal_(0, 1.0)
    head.set_z_normalisation(torch.full((18,), 0.2), torch.full((18,), 0.7))
    cfg = HeadConfig(name="t", version="0", provenance="prior",
                     backbone=BackboneInfo("fake-bb", 8, ("features",)), readout="features",
                     evidence_min=evidence_min)
    return Judge(FakeBackbone(evidence=evidence), head, cfg), head


def test_gating_scores_three_and_contributes_zero():
    ev = {d: Evidence(10.0, "s") for d in DIMENSION_IDS}
    ev["rhythm"] = Evidence(1.0, "s")                        # below its minimum of 3 s
    ev["accent"] = Evidence(0.0, "", "needs a trained head")  # no signal at all
    judge, head = make_judge(ev, {"rhythm": 3.0})
    (res,) = judge.judge([window(1.0, 3.0)])
    r = res.dimensions["rhythm"]
    assert r.gated and r.score == 3.0 and r.contribution == 0.0
    assert r.reason == "1 s < 3 s needed" and r.evidence == 1.0
    a = res.dimensions["accent"]
    assert a.gated and a.score == 3.0 and a.contribution == 0.0 and a.reason == "needs a trained head"
    assert r.z == pytest.approx(0.2) and a.z == pytest.approx(0.2)
    open_dims = [d for d in DIMENSION_IDS if d not in ("rhythm", "accent")]
    assert not any(res.dimensions[d].gated for d in open_dims)
    assert any(res.dimensions[d].score != 3.0 for d in open_dims)
    # P(human) is the classifier on z with the gated entries at their mean
    emb = judge.backbone.embed([window(1.0, 3.0)])[0]
    z = head.latent({"features": torch.from_numpy(emb.vectors["features"][None])}).detach()
    z[0, DIMENSION_IDS.index("rhythm")] = 0.2
    z[0, DIMENSION_IDS.index("accent")] = 0.2
    p = torch.softmax(head.logits(z), -1)[0, 1].detach()
    assert res.p_human == pytest.approx(float(p), abs=1e-6)
    assert res.window_start_s == 1.0 and res.t_s == 3.0
    top = top_contributors(res, 8)
    assert len(top) == 8 and all(abs(top[i][1]) >= abs(top[i + 1][1]) for i in range(7))
    assert "rhythm" not in dict(top)


def test_missing_evidence_gates_only_with_a_minimum():
    judge, _ = make_judge({}, {"stress": 1.0})
    (res,) = judge.judge([window()])
    assert res.dimensions["stress"].gated and "no evidence reported" in res.dimensions["stress"].reason
    assert not res.dimensions["intonation"].gated


def test_head_for_another_backbone():
    torch.manual_seed(0)
    head = JudgeHead(8, readout="features")
    cfg = HeadConfig(name="t", version="0", provenance="prior",
                     backbone=BackboneInfo("qwen2.5-omni-7b", 8, ("features",)), readout="features")
    with pytest.raises(HeadError, match="pass --head for fake-bb or --judge qwen2.5-omni-7b"):
        Judge(FakeBackbone(), head, cfg)


def test_load_judge_errors(tmp_path):
    with pytest.raises(JudgeError, match="unknown judge 'gpt'; valid: acoustic, qwen-omni"):
        load_judge("gpt")
    with pytest.raises(JudgeError, match="needs --head DIR"):
        load_judge("qwen-omni")
    with pytest.raises(HeadError, match="head directory not found"):
        load_judge("acoustic", head=tmp_path / "none")
