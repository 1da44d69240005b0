"""Evaluation of a judge head: per-dimension rating accuracy and human/machine accuracy.

Metrics (the Turing-test paper, "Human or Machine? A Preliminary Turing Test for Speech-to-Speech
Interaction"):
* per dimension, three ways (App. E.6, Table 21): exact agreement with the rating; grouped
  agreement with ratings grouped 1–2 (machine-like) / 3 (unclear) / 4–5 (human-like); within ±1.
  The predicted rating is the most likely level argmax_i P(Y_k = i); a gated dimension
  (not enough evidence) predicts 3, as the live judge shows it. Missing ratings are skipped.
* binary accuracy overall and per data kind (hh, hm, ph, ...; Tables 3, 4), predicting
  "human" when P(human) ≥ 0.5; ROC-AUC of P(human) against the labels (Table 4), computed
  rank-based (Mann–Whitney U / (n_pos · n_neg), ties given average ranks).
"""

from __future__ import annotations

import math

from typing import Any, Mapping, Sequence

import numpy as np
import torch

from livejudge.judge.model.dimensions import BY_ID, NEUTRAL_SCORE
from livejudge.judge.model.judge import gate_dimensions
from livejudge.judge.model.odl import READOUT_SOURCES, JudgeHead, most_likely_level

THRESHOLD = 0.5
"""P(human) at or above which a call is classified human."""


def rating_group(levels: np.ndarray) -> np.ndarray:
    """1–2 → 0 (machine-like), 3 → 1 (unclear), 4–5 → 2 (human-like) (the Turing-test paper, App. E.6)."""
    lv = np.asarray(levels)
    return np.where(lv <= 2, 0, np.where(lv == 3, 1, 2))


def dimension_accuracy(pred: np.ndarray, ratings: np.ndarray, dimensions: Sequence[str]) -> dict[str, dict]:
    """Per-dimension exact / grouped / within-±1 accuracy (the Turing-test paper, Table 21).

    Args:
        pred: predicted levels, int (N, K), 1..5.
        ratings: reference ratings, int (N, K), 1..5, 0 = missing (skipped).
    Returns:
        {dimension id: {"exact", "grouped", "within_one", "n"}}; accuracies are None when n = 0.
    """
    P, R = np.asarray(pred), np.asarray(ratings)
    if P.shape != R.shape or P.ndim != 2 or P.shape[1] != len(dimensions):
        raise ValueError(f"pred {P.shape} and ratings {R.shape} must both be (N, {len(dimensions)})")
    out = {}
    for k, d in enumerate(dimensions):
        m = R[:, k] > 0
        n = int(m.sum())
        if n == 0:
            out[d] = {"exact": None, "grouped": None, "within_one": None, "n": 0}
            continue
        p, r = P[m, k], R[m, k]
        out[d] = {
            "exact": float((p == r).mean()),
            "grouped": float((rating_group(p) == rating_group(r)).mean()),
            "within_one": float((np.abs(p - r) <= 1).mean()),
            "n": n,
        }
    return out


def pooled_dimension_accuracy(pred: np.ndarray, ratings: np.ndarray) -> dict:
    """Exact / grouped / ±1 over all rated (call, dimension) pairs (the Turing-test paper, Table 22)."""
    P, R = np.asarray(pred), np.asarray(ratings)
    m = R > 0
    n = int(m.sum())
    if n == 0:
        return {"exact": None, "grouped": None, "within_one": None, "n": 0}
    p, r = P[m], R[m]
    return {"exact": float((p == r).mean()), "grouped": float((rating_group(p) == rating_group(r)).mean()),
            "within_one": float((np.abs(p - r) <= 1).mean()), "n": n}


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve of ``scores`` for the positive class (label 1).

    Rank-based: AUC = (Σ ranks of positives − n_pos(n_pos + 1)/2) / (n_pos · n_neg), with tied
    scores given their average rank (Mann–Whitney U; Hanley & McNeil 1982).

    Returns:
        the AUC in [0, 1], or None when either class is absent.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    keep = (y == 0) | (y == 1)
    s, y = s[keep], y[keep]
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def wilson_ci95(correct: int, n: int) -> tuple[float, float] | None:
    """The 95 % Wilson score interval of a proportion ``correct``/``n`` (Wilson 1927, JASA 22:209;
    z = 1.96): (low, high) in [0, 1], None when n = 0. Pure."""
    if n <= 0:
        return None
    z, ph = 1.959964, correct / n
    mid = (ph + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def auc_ci95(auc: float | None, n_pos: int, n_neg: int) -> tuple[float, float] | None:
    """An approximate 95 % interval of a ROC-AUC from its standard error (Hanley & McNeil 1982,
    Radiology 143:29, eq. 1; ±1.96 SE, clipped to [0, 1]). None without an AUC, and at an AUC of 0
    or 1, where the formula's standard error is 0 whatever the sample size (no interval is better
    than a point "1.00–1.00"). Pure."""
    if auc is None or n_pos <= 0 or n_neg <= 0 or auc <= 0.0 or auc >= 1.0:
        return None
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    se = math.sqrt(max(var, 0.0))
    return max(0.0, auc - 1.959964 * se), min(1.0, auc + 1.959964 * se)


FEW_ROWS_PER_CLASS = 10
"""HEURISTIC: with fewer scored rows than this in either class, eval and train say the figure is
on too few calls to mean much (the 95 % interval of an accuracy on 10 calls spans about ±0.3)."""


def few_rows_note(b: Mapping[str, Any]) -> str:
    """'' or one line saying a binary figure (``binary_metrics``) rests on too few rows, with its
    95 % intervals (a new user's trial: "ROC-AUC: 0.000" on 2 rows, and a validity line "ROC-AUC 1.00,
    accuracy 1.00 on the 4 'test' rows", printed with no comment). Pure."""
    nh, nm = b.get("n_human"), b.get("n_machine")
    if not isinstance(nh, int) or not isinstance(nm, int) or min(nh, nm) >= FEW_ROWS_PER_CLASS:
        return ""
    parts = []
    if b.get("accuracy_ci95"):
        lo, hi = b["accuracy_ci95"]
        parts.append(f"accuracy 95 % CI {lo:.2f}–{hi:.2f}")
    if b.get("roc_auc_ci95"):
        lo, hi = b["roc_auc_ci95"]
        parts.append(f"ROC-AUC 95 % CI {lo:.2f}–{hi:.2f}")
    return (f"few rows ({nh} human, {nm} machine; under {FEW_ROWS_PER_CLASS} of a class): "
            + ("; ".join(parts) + ": " if parts else "") + "a figure on so few calls says little")


def binary_metrics(p_human: Sequence[float], labels: Sequence[int], kinds: Sequence[str] | None = None,
                   threshold: float = THRESHOLD) -> dict:
    """Human/machine accuracy overall and per kind, plus ROC-AUC (the Turing-test paper, Tables 3, 4).

    Args:
        p_human: P(human) per call. labels: 1 human, 0 machine, −1 unknown (skipped).
        kinds: data kind per call ("" → "unspecified").
    Returns:
        {"accuracy", "roc_auc", "n", "n_human", "n_machine", "accuracy_ci95" ([low, high], Wilson),
        "roc_auc_ci95" ([low, high], Hanley & McNeil), "threshold", "by_kind": {kind: {"accuracy",
        "n"}}}; accuracy None when n = 0, each interval None where its figure is.
    """
    p = np.asarray(p_human, dtype=np.float64)
    y = np.asarray(labels)
    k = np.asarray(kinds if kinds is not None else [""] * len(p)).astype(str)
    m = y >= 0
    pred = (p >= threshold).astype(int)
    correct = pred == y
    by_kind = {}
    for kind in sorted(set(k[m].tolist())):
        mk = m & (k == kind)
        by_kind[kind or "unspecified"] = {"accuracy": float(correct[mk].mean()), "n": int(mk.sum())}
    n = int(m.sum())
    auc = roc_auc(p[m], y[m])
    n_h, n_m = int((y == 1).sum()), int((y == 0).sum())
    acc_ci, auc_ci = wilson_ci95(int(correct[m].sum()), n), auc_ci95(auc, n_h, n_m)
    return {"accuracy": float(correct[m].mean()) if n else None, "roc_auc": auc,
            "n": n, "n_human": n_h, "n_machine": n_m,
            "accuracy_ci95": [round(v, 4) for v in acc_ci] if acc_ci else None,
            "roc_auc_ci95": [round(v, 4) for v in auc_ci] if auc_ci else None,
            "threshold": threshold, "by_kind": by_kind}


def predict(head: JudgeHead, embeddings: Mapping[str, np.ndarray], evidence: Sequence[Mapping[str, Any]] | None = None,
            evidence_min: Mapping[str, float] | None = None, backbone_name: str = "the backbone") -> dict:
    """Run the head on stacked embeddings, with the live judge's evidence gating.

    Args:
        embeddings: source → float (N, d). evidence: per call, dimension id → Evidence (None =
            no gating). evidence_min: dimension id → minimum.
    Returns:
        {"p_human": (N,), "levels": (N, K) most likely levels (3 where gated), "scores": (N, K)
        expected scores (3.0 where gated), "gated": (N, K) bool} as numpy arrays.
    """
    head.eval()
    sources = READOUT_SOURCES[head.readout_mode]
    x = {s: torch.as_tensor(np.asarray(embeddings[s]), dtype=torch.float32) for s in sources}
    n = next(iter(x.values())).shape[0]
    k = len(head.dimensions)
    gated = np.zeros((n, k), dtype=bool)
    if evidence is not None:
        for i, ev in enumerate(evidence):
            gated[i] = gate_dimensions(ev, head.dimensions, evidence_min or {}, backbone_name)[0]
    with torch.no_grad():
        z = head.latent(x)
        g = torch.as_tensor(gated)
        z = torch.where(g, head.z_mean.expand_as(z), z)
        out = head.outputs(z)
        levels = most_likely_level(out.probs).numpy()
        scores = out.scores.numpy().copy()
    levels = np.where(gated, int(NEUTRAL_SCORE), levels)
    scores = np.where(gated, NEUTRAL_SCORE, scores)
    return {"p_human": out.p_human.numpy().astype(np.float64), "levels": levels, "scores": scores, "gated": gated}


def evaluate_predictions(pred: Mapping[str, np.ndarray], ratings: np.ndarray, labels: np.ndarray,
                         kinds: Sequence[str] | None, dimensions: Sequence[str]) -> dict:
    """The evaluation document from predictions (see ``predict``) and references.

    Returns:
        {"binary": {...binary_metrics}, "dimensions": {id: {exact, grouped, within_one, n}},
         "dimensions_pooled": {exact, grouped, within_one, n}, "n_calls": N,
         "prediction_rule": str}
    """
    return {
        "n_calls": int(len(labels)),
        "binary": binary_metrics(pred["p_human"], labels, kinds),
        "dimensions": dimension_accuracy(pred["levels"], ratings, dimensions),
        "dimensions_pooled": pooled_dimension_accuracy(pred["levels"], ratings),
        "prediction_rule": "human if P(human) ≥ 0.5; rating = most likely level (3 when gated)",
    }


def evaluate_head(head: JudgeHead, embeddings: Mapping[str, np.ndarray], ratings: np.ndarray, labels: np.ndarray,
                  kinds: Sequence[str] | None = None, evidence: Sequence[Mapping[str, Any]] | None = None,
                  evidence_min: Mapping[str, float] | None = None, backbone_name: str = "the backbone") -> dict:
    """``predict`` then ``evaluate_predictions`` (see both)."""
    pred = predict(head, embeddings, evidence, evidence_min, backbone_name)
    return evaluate_predictions(pred, ratings, labels, kinds, head.dimensions)


SEEN_AS = {"fit": "fitted on", "calibration": "calibrated on", "validation": "used for early stopping"}
"""What a head's training did with a row, by its ``training["rows"]`` group, in the words eval prints."""


def _names(values: Any, split_plus: bool = False) -> set[str]:
    """A config list of families or groups as a set of names; with ``split_plus`` each
    '+'-joined entry (a leave-one-out fold's union of human groups) also gives its parts."""
    out: set[str] = set()
    for v in values if isinstance(values, (list, tuple)) else ():
        out.add(str(v))
        if split_plus:
            out.update(x for x in str(v).split("+") if x)
    return out


def family_overlap(training: Mapping[str, Any] | None, families: Sequence[str],
                   labels: Sequence[int] | None = None) -> dict | None:
    """Whether the scored rows' voices are of families the head was fitted on, by the names in
    its config (the shipped heads record them; ``livejudge train`` heads do not).

    Args:
        training: the head config's ``training`` mapping: ``families`` (TTS families fitted on),
            ``human_groups`` (human source groups fitted on; '+'-joined entries count by their
            parts) and ``sealed_never_used`` ({"families", "groups"}: never fitted on).
        families: each scored row's manifest ``family`` ("" when the row names none).
        labels: each row's label (1 human, 0 machine, −1 unknown): a human row is looked up in the
            human groups, a machine row in the TTS families, an unlabelled row in both.
    Returns:
        None when the head records no families or groups or no scored row names one; else
        {"named": rows naming a family, "seen": rows of a family or group the head was fitted on,
        "unseen": rows of one it was not (sealed or not listed), "seen_families",
        "unseen_families": {name: rows}, "note": one line}.
    """
    tr = training if isinstance(training, Mapping) else {}
    tts, people = _names(tr.get("families")), _names(tr.get("human_groups"), split_plus=True)
    if not tts and not people:
        return None
    sealed = tr.get("sealed_never_used") if isinstance(tr.get("sealed_never_used"), Mapping) else {}
    never = _names(sealed.get("families")) | _names(sealed.get("groups"))  # a blend's excluded_families may
    # have been fitted on through another member: only the lists above count
    labs = list(labels) if labels is not None else [-1] * len(families)
    seen: dict[str, int] = {}
    unseen: dict[str, int] = {}
    for fam, lab in zip(families, labs):
        if not fam:
            continue
        pool = people if lab == 1 else tts if lab == 0 else tts | people
        hit = fam in pool and fam not in never
        (seen if hit else unseen)[fam] = (seen if hit else unseen).get(fam, 0) + 1
    named = sum(seen.values()) + sum(unseen.values())
    if not named:
        return None
    n = len(families)
    k = sum(seen.values())

    def listing(d: dict[str, int]) -> str:
        return ", ".join(f"{f} {c}" for f, c in sorted(d.items()))

    parts = []
    if k:
        parts.append(f"{k} of {n} rows {'is' if k == 1 else 'are'} of families or groups the head's config names "
                     f"as fitted on ({listing(seen)}): a seen-family figure, not a held-out one (the head may not "
                     "have met these very clips)")
    if unseen:
        u = sum(unseen.values())
        parts.append(f"{u} of {n} {'is' if u == 1 else 'are'} of families or groups it was not fitted on "
                     f"({listing(unseen)})")
    if named < n:
        parts.append(f"{n - named} {'names' if n - named == 1 else 'name'} no 'family'")
    return {"named": named, "seen": k, "unseen": named - k, "seen_families": seen, "unseen_families": unseen,
            "note": "by family: " + "; ".join(parts)}


def training_overlap(training: Mapping[str, Any] | None, digests: Sequence[Any], splits: Sequence[str] | None = None,
                     manifest_sha256: str | None = None, hint: str = "", families: Sequence[str] | None = None,
                     labels: Sequence[int] | None = None) -> dict:
    """How many of the scored rows the head was fitted on or tuned on, so an in-sample figure never
    reads as validity.

    Args:
        training: the head config's ``training`` mapping. Its ``rows`` record (``livejudge train``:
            ``train.rows_record``) lists the digests of the rows in each group of ``SEEN_AS``.
        digests: each scored row's digest (``train.call_digest``) or digests (``train.row_digests``:
            its bytes' and its decoded samples'); a row counts as seen when any of them is recorded.
        splits: each scored row's manifest split; with ``manifest_sha256``, the fallback for heads
            trained before rows were recorded: when the head's ``training["manifest"]["sha256"]``
            is this manifest's, its 'train' rows count as fitted on and its 'val' rows as calibrated
            on (whisper label-only heads, which record ``platt``) or used for early stopping.
        hint: how to get a held-out figure, appended to an in-sample note.
        families, labels: each scored row's manifest ``family`` and label, for ``family_overlap``
            (heads whose config names the families and groups they were fitted on).
    Returns:
        {"n_scored", "fit", "calibration", "validation": counts (None when unknown; a row counts in
        its first group only), "rows_seen": per scored row its group or None (not seen, or
        unknown), "known_from": "row digests" | "the manifest's splits" | None,
        "in_sample": True when any scored row was fitted or tuned on, None when unknown, "note":
        one line, e.g. "in-sample: 6 of 10 rows were fitted on, 2 calibrated on; for a held-out
        figure run --split test"}; with a ``family_overlap``, its dict under "family" and its note
        after the line's own.
    """
    fam = family_overlap(training, families, labels) if families is not None else None
    out = _row_overlap(training, digests, splits, manifest_sha256, hint)
    if fam is not None:
        out["family"] = fam
        if out["known_from"] is None:
            out["note"] = ("in-sample or held-out: unknown by row, this head records no fit rows; "
                           + fam["note"])
        else:
            out["note"] = f"{out['note']}; {fam['note']}"
    return out


def _row_overlap(training: Mapping[str, Any] | None, digests: Sequence[Any], splits: Sequence[str] | None,
                 manifest_sha256: str | None, hint: str) -> dict:
    tr = training if isinstance(training, Mapping) else {}
    n = len(digests)
    known_as = [{d} if isinstance(d, str) else set(d) for d in digests]
    rows, man = tr.get("rows"), tr.get("manifest")
    counts: dict[str, int | None] = {k: None for k in SEEN_AS}
    groups: tuple[str, ...] = ()
    known: str | None = None
    per_row: list[str | None] = [None] * n  # each row's group (its first), for eval's per-row output
    if isinstance(rows, Mapping) and isinstance(rows.get("fit"), list):
        groups = tuple(k for k in SEEN_AS if isinstance(rows.get(k), list))
        by_samples = rows.get("samples") if isinstance(rows.get("samples"), Mapping) else {}
        for k in groups:
            members = set(rows[k]) | set(by_samples.get(k) or ())
            per_row = [g if g is not None or not (ds & members) else k for g, ds in zip(per_row, known_as)]
        known = "row digests"
    elif (splits is not None and manifest_sha256 and isinstance(man, Mapping)
          and man.get("sha256") == manifest_sha256):
        tuned = "calibration" if "platt" in tr else "validation"
        groups = ("fit", tuned)
        per_row = [{"train": "fit", "val": tuned}.get(sp) for sp in splits]
        known = "the manifest's splits"
    if known is None:
        note = "in-sample or held-out: unknown, this head records no fit rows (livejudge train records them)"
        return {"n_scored": n, **counts, "known_from": None, "in_sample": None, "note": note, "rows_seen": per_row}
    for k in groups:
        counts[k] = per_row.count(k)
    seen_n = [(counts[k], SEEN_AS[k]) for k in groups if counts[k]]
    if seen_n:
        (c0, w0), rest = seen_n[0], seen_n[1:]
        note = (f"in-sample: {c0} of {n} rows {'was' if c0 == 1 else 'were'} {w0}"
                + "".join(f", {c} {w}" for c, w in rest) + (f"; {hint}" if hint else ""))
    else:
        words = " or ".join(SEEN_AS[k] for k in groups)
        # by content: a re-rendering of a fitted call (other noise, the same clips) counts as held-out (a trial)
        # a lossless re-encoding (WAV → FLAC) of a fitted row counts as seen (``train.samples_digest``);
        # a copy at another gain or rate, or through a lossy codec, cannot be told apart: say so
        by = ("file bytes and decoded samples: a copy at another gain or sample rate, or through a lossy codec"
              if isinstance(rows, Mapping) and isinstance(rows.get("samples"), Mapping) else
              # a head trained before the sample digests: only the bytes were compared (a trial)
              "file bytes only, as this head records no sample digests: a re-encoded copy (WAV to FLAC)")
        note = f"held-out by audio content: none of the {n} rows was {words} (matched by {by} would read as held-out)"
    return {"n_scored": n, **counts, "known_from": known, "in_sample": bool(seen_n), "note": note, "rows_seen": per_row}


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def render(doc: Mapping[str, Any], console: Any = None, title: str = "livejudge eval") -> None:
    """Print the evaluation document as rich tables."""
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    b = doc["binary"]
    ov = doc.get("training_overlap")  # eval: which scored rows the head has seen (``training_overlap``)
    seen_family = bool(ov and not ov.get("in_sample") and (ov.get("family") or {}).get("seen"))
    tag = " (in-sample)" if ov and ov.get("in_sample") else " (seen families)" if seen_family else ""
    t = Table(title=f"{title}: human vs machine (P(human) ≥ {b.get('threshold', THRESHOLD)}){tag}")
    t.add_column("kind")
    t.add_column("accuracy", justify="right")
    t.add_column("n", justify="right")
    for kind, v in b["by_kind"].items():
        t.add_row(kind, _fmt(v["accuracy"]), str(v["n"]))
    t.add_row(f"[b]overall[/b]{tag}", _fmt(b["accuracy"]), str(b["n"]))
    con.print(t)
    con.print(f"ROC-AUC: {_fmt(b['roc_auc'])}" + ("" if b["roc_auc"] is not None else " (needs both classes)")
              + (f" ({ov['note']})" if ov else ""), markup=False)
    few = few_rows_note(b)
    if few:
        con.print(f"[yellow]{few}[/yellow]", highlight=False)
    p = doc.get("dimensions_pooled")
    if p is not None and p["n"] == 0:
        con.print("per-dimension accuracy: no ratings in these rows")
        return
    d = Table(title=f"per-dimension rating accuracy (the Turing-test paper, Table 21){tag}")
    for c, j in (("dimension", "left"), ("cat.", "left"), ("exact", "right"), ("grouped", "right"),
                 ("±1", "right"), ("n", "right")):
        d.add_column(c, justify=j)  # type: ignore[arg-type]
    for dim, v in doc["dimensions"].items():
        meta = BY_ID.get(dim)
        d.add_row(meta.name if meta else dim, meta.category if meta else "", _fmt(v["exact"]), _fmt(v["grouped"]),
                  _fmt(v["within_one"]), str(v["n"]))
    if p:
        d.add_row("[b]all rated pairs[/b]", "", _fmt(p["exact"]), _fmt(p["grouped"]), _fmt(p["within_one"]), str(p["n"]))
    con.print(d)
