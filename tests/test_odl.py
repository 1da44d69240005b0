"""ODL maths against the formulas of seed 000 §6.2.1, computed by hand here."""

import math

import pytest
import torch

from livejudge.judge.model import dimensions as D
from livejudge.judge.model.odl import (
    HUMAN, MACHINE, JudgeHead, ODLError, OrdinalDiscretizationLayer, Readout, category_probs,
    classifier_loss, cumulative_probs, cut_points, expected_score, most_likely_level,
    ordinal_nll, symmetry_penalty, top_contributions,
)


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_dimensions_table():
    assert len(D.DIMENSIONS) == 18 and len(set(D.DIMENSION_IDS)) == 18
    assert D.DIMENSION_IDS[0] == "memory_consistency" and D.DIMENSION_IDS[-1] == "acoustic_emotion"
    assert [c for c, _ in D.CATEGORIES] == ["I", "II", "III", "IV", "V"]
    assert [len(D.dimensions_in(c)) for c, _ in D.CATEGORIES] == [7, 4, 3, 2, 2]
    with pytest.raises(KeyError, match="valid ids"):
        D.get_dimension("nope")


def test_cut_points_formula():
    s = torch.tensor([2.1, 6.0], dtype=torch.float64)
    c = cut_points(s, 5)
    # (i − r + 2) / (2(r − 2)) for r = 5, i = 1..4 → (−2, −1, 0, 1) / 6
    expect = torch.tensor([[-2, -1, 0, 1]], dtype=torch.float64) / 6.0 * s[:, None]
    assert torch.allclose(c, expect)
    assert c[0].tolist() == pytest.approx([-0.7, -0.35, 0.0, 0.35])
    # r = 3: (i − 1) / 2 for i = 1, 2 → (0, 0.5)
    assert cut_points(torch.tensor([4.0]), 3).tolist() == [[0.0, 2.0]]
    with pytest.raises(ODLError):
        cut_points(s, 2)


def test_probabilities_match_differencing_and_sum_to_one():
    s = torch.tensor([2.1, 3.0, 0.5], dtype=torch.float64)
    z = torch.tensor([[0.3, -1.2, 4.0], [-0.1, 0.0, -30.0]], dtype=torch.float64)
    p = category_probs(z, s)
    cum = cumulative_probs(z, s)
    for n in range(2):
        for k in range(3):
            c = [(i - 3) / 6.0 * float(s[k]) for i in range(1, 5)]
            F = [sig(ci - float(z[n, k])) for ci in c]
            assert cum[n, k].tolist() == pytest.approx(F, rel=1e-12)
            expect = [F[0], F[1] - F[0], F[2] - F[1], F[3] - F[2], 1 - F[3]]
            assert p[n, k].tolist() == pytest.approx(expect, rel=1e-9, abs=1e-15)
    assert torch.allclose(p.sum(-1), torch.ones(2, 3, dtype=torch.float64))
    assert (p >= 0).all()


def test_upper_tail_monotone_in_z():
    s = torch.tensor([2.1], dtype=torch.float64)
    z = torch.linspace(-5, 5, 101, dtype=torch.float64)[:, None]
    upper = 1 - cumulative_probs(z, s)  # P(Y ≥ i+1)
    assert (upper[1:] >= upper[:-1]).all()
    es = expected_score(category_probs(z, s))[:, 0]
    assert (es[1:] > es[:-1]).all() and float(es[0]) > 1 and float(es[-1]) < 5


def test_nll_hand_value_and_mask():
    s = torch.tensor([2.1, 2.1], dtype=torch.float64)
    z = torch.tensor([[0.2, -0.5], [1.0, 0.0]], dtype=torch.float64)
    ratings = torch.tensor([[3, 0], [5, 1]])
    c = [-0.7, -0.35, 0.0, 0.35]
    p_a = sig(c[2] - 0.2) - sig(c[1] - 0.2)   # sample 0, dim 0, rating 3
    p_b = 1 - sig(c[3] - 1.0)                  # sample 1, dim 0, rating 5
    p_c = sig(c[0] - 0.0)                      # sample 1, dim 1, rating 1
    expect = (-math.log(p_a) - math.log(p_b) - math.log(p_c)) / 2
    assert float(ordinal_nll(z, s, ratings)) == pytest.approx(expect, rel=1e-10)
    # the masked entry contributes exactly 0: changing its z changes nothing
    z2 = z.clone(); z2[0, 1] = 40.0
    assert float(ordinal_nll(z2, s, ratings)) == float(ordinal_nll(z, s, ratings))
    # and gets no gradient
    zg = z.clone().requires_grad_(True)
    ordinal_nll(zg, s, ratings).backward()
    assert float(zg.grad[0, 1]) == 0.0 and float(zg.grad[0, 0]) != 0.0
    # a sample without any rating does not count in the mean
    r3 = torch.tensor([[3, 0], [5, 1], [0, 0]])
    z3 = torch.cat([z, torch.tensor([[9.0, 9.0]], dtype=torch.float64)])
    assert float(ordinal_nll(z3, s, r3)) == pytest.approx(expect, rel=1e-10)
    assert float(ordinal_nll(z[:1], s, torch.zeros(1, 2, dtype=torch.long))) == 0.0
    with pytest.raises(ODLError, match="ratings must be"):
        ordinal_nll(z, s, torch.tensor([[6, 1], [1, 1]]))


def test_nll_stable_when_saturated():
    s = torch.tensor([2.1], dtype=torch.float64)
    z = torch.tensor([[60.0]], dtype=torch.float64, requires_grad=True)
    loss = ordinal_nll(z, s, torch.tensor([[3]]))
    assert math.isfinite(loss.item()) and loss.item() > 50
    loss.backward()
    assert float(z.grad) > 0.5  # still pushes z down toward level 3


def test_expected_and_most_likely():
    p = torch.tensor([[0.1, 0.2, 0.4, 0.2, 0.1], [0.0, 0.0, 0.0, 0.1, 0.9]])
    assert expected_score(p).tolist() == pytest.approx([3.0, 4.9])
    assert most_likely_level(p).tolist() == [3, 5]


def test_symmetry_regulariser_and_loss():
    w = torch.tensor([[1.0, -2.0, 0.5], [-1.0, 3.0, 1.5]])
    assert float(symmetry_penalty(w)) == pytest.approx(math.sqrt(0 + 1 + 4))
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    labels = torch.tensor([MACHINE, HUMAN])
    ce = -(math.log(math.exp(2) / (math.exp(2) + 1)) + math.log(math.e / (1 + math.e))) / 2
    assert float(classifier_loss(logits, labels, w)) == pytest.approx(ce + 0.1 * math.sqrt(5), rel=1e-6)


def test_fused_readout_is_softmax_weighted_sum():
    torch.manual_seed(0)
    ro = Readout("fused", 4)
    with torch.no_grad():
        ro.fusion_logits.copy_(torch.tensor([0.3, -1.1]))
    ro.set_normalisation("mean", [1, 2, 3, 4], [2, 2, 2, 2])
    mean, last = torch.randn(3, 4), torch.randn(3, 4)
    a = math.exp(0.3) / (math.exp(0.3) + math.exp(-1.1))
    expect = a * (mean - torch.tensor([1.0, 2, 3, 4])) / 2 + (1 - a) * last
    assert torch.allclose(ro({"mean": mean, "last": last}), expect, atol=1e-6)
    assert torch.allclose(Readout("last", 4)({"last": last, "mean": mean}), last)
    with pytest.raises(ODLError, match="needs the 'last' vector"):
        ro({"mean": mean})
    with pytest.raises(ODLError, match="unknown readout"):
        Readout("max", 4)


def test_odl_layer_init_and_dropout():
    odl = OrdinalDiscretizationLayer(8, 18)
    assert torch.allclose(odl.scale, torch.full((18,), 2.1))
    assert odl.dropout.p == 0.3
    odl.eval()
    h = torch.randn(2, 8)
    assert torch.equal(odl(h), odl(h))


def test_head_contributions_decompose_log_odds():
    torch.manual_seed(1)
    head = JudgeHead(6, readout="features", dropout=0.0)
    head.set_z_normalisation(torch.randn(18), torch.rand(18) + 0.5)
    head.eval()
    out = head({"features": torch.randn(5, 6)})
    b = head.classifier.bias
    log_odds_machine = out.logits[:, MACHINE] - out.logits[:, HUMAN]
    assert torch.allclose(out.contributions.sum(1) + (b[MACHINE] - b[HUMAN]), log_odds_machine, atol=1e-5)
    assert torch.allclose(out.p_human, torch.softmax(out.logits, -1)[:, 1])
    # at z = μ every contribution is exactly 0
    assert torch.equal(head.contributions(head.z_mean[None]), torch.zeros(1, 18))


def test_top_contributions():
    ids = ["a", "b", "c", "d"]
    assert top_contributions([0.1, -0.5, 0.3, 0.0], ids, k=2) == [("b", -0.5), ("c", 0.3)]
    with pytest.raises(ODLError):
        top_contributions([1.0], ids)
