"""livejudge.judge.training.blend: a blend of heads is stored as one ordinary head whose P(human)
is exactly the weighted mean of its members' log-odds, gated dimensions included (issue 19)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from livejudge.judge.model.head import HeadError, new_config, save_head  # noqa: E402
from livejudge.judge.model.numpy_head import NumpyHead  # noqa: E402
from livejudge.judge.model.odl import JudgeHead  # noqa: E402
from livejudge.judge.training.blend import blend_heads, blend_log_odds, weights_digest  # noqa: E402

D = 12
BB = SimpleNamespace(name="test-backbone", embedding_dim=D, readouts=("features",))


def _member(path, seed: int, evidence_min=None, families=("a",)):
    """A random head of the general form (non-zero ODL bias, z normalisation, any classifier)."""
    rng = np.random.default_rng(seed)
    h = JudgeHead(D, readout="features", dropout=0.0)
    k = len(h.dimensions)
    with torch.no_grad():
        h.readout.set_normalisation("features", rng.normal(size=D), rng.uniform(0.5, 2.0, size=D))
        h.odl.proj.weight.copy_(torch.as_tensor(rng.normal(size=(k, D)), dtype=torch.float32))
        h.odl.proj.bias.copy_(torch.as_tensor(rng.normal(size=k), dtype=torch.float32))
        h.odl.log_scale.copy_(torch.as_tensor(rng.normal(0.7, 0.1, size=k), dtype=torch.float32))
        h.set_z_normalisation(rng.normal(size=k), rng.uniform(0.5, 2.0, size=k))
        h.classifier.weight.copy_(torch.as_tensor(rng.normal(size=(2, k)), dtype=torch.float32))
        h.classifier.bias.copy_(torch.as_tensor(rng.normal(size=2), dtype=torch.float32))
    cfg = new_config(BB, name=f"m{seed}", readout="features", dropout=0.0,
                     evidence_min=evidence_min or {"rhythm": 3.0},
                     training={"families": list(families), "human_groups": [f"g{seed}"]}, sources=(f"src{seed}",))
    save_head(path, h, cfg)
    return path


@pytest.mark.parametrize("w", [0.5, 0.25])
def test_the_blend_is_the_weighted_mean_of_its_members_log_odds_with_gating(tmp_path, w):
    a, b = _member(tmp_path / "a", 1), _member(tmp_path / "b", 2, families=("b", "c"))
    head, cfg = blend_heads([a, b], [1 - w, w], name="blend", version="0.2.0")
    save_head(tmp_path / "blend", head, cfg)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, D)).astype(np.float32)
    gated = rng.random((40, 18)) < 0.3
    ha, hb, hx = (NumpyHead.from_checkpoint(p) for p in (a, b, tmp_path / "blend"))
    from livejudge.judge.model.odl import HUMAN, MACHINE

    def lo(h):
        z = np.where(gated, h.z_mean[None, :], h.latent({"features": x}))
        lg = h.outputs(z).logits
        return lg[:, HUMAN] - lg[:, MACHINE]

    want = blend_log_odds([lo(ha), lo(hb)], [1 - w, w])
    np.testing.assert_allclose(lo(hx), want, atol=2e-3)  # float32 weights
    assert np.std(want) > 1.0  # the check is not on a constant
    p = hx.outputs(np.where(gated, 0.0, hx.latent({"features": x}))).p_human
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-want)), atol=1e-3)
    t = cfg.training
    assert t["families"] == ["a", "b", "c"] and t["human_groups"] == ["g1", "g2"]
    assert [m["weights_sha256_16"] for m in t["blend"]["members"]] == [weights_digest(a), weights_digest(b)]
    assert t["blend"]["weights"] == [1 - w, w] and set(cfg.sources) == {"src1", "src2"}


def test_members_that_gate_differently_or_bad_weights_are_refused(tmp_path):
    a = _member(tmp_path / "a", 1)
    b = _member(tmp_path / "b", 2, evidence_min={"rhythm": 5.0})
    with pytest.raises(HeadError, match="differ in evidence_min"):
        blend_heads([a, b], [0.5, 0.5], name="x", version="0.1.0")
    c = _member(tmp_path / "c", 3)
    for w, why in (([0.6, 0.6], "sum to 1"), ([1.0], "2 members, 1 weight"), ([-0.5, 1.5], "≥ 0"),
                   ([float("nan"), 0.5], "finite"), (0.5, "list of numbers"), (None, "list of numbers"),
                   (["0.5", "0.5"], "list of numbers")):
        with pytest.raises(ValueError, match=why):
            blend_heads([a, c], w, name="x", version="0.1.0")
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        blend_log_odds([np.zeros(3), np.zeros(4)], [0.5, 0.5])
