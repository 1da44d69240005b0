#!/usr/bin/env python3
"""Write every figure in README.md and docs/ from its source, so that no doc can go stale.

A figure lives in a marked block::

    <!-- fig:NAME -->
    ...written by FIGURES[NAME]...
    <!-- /fig -->

and its text is produced here from a source that is itself the record: a shipped head's
``livejudge/judge/heads/*/config.json``, a constant of ``livejudge/timing/metrics.py``, or a stored
run in ``benchmarks/results/NAME.json`` (the benchmark's own JSON plus the command, commit, date and
load it ran under; written by ``--produce``). Nothing here measures or invents a number.

    python scripts/doc_figures.py                 # rewrite the blocks in place
    python scripts/doc_figures.py --check         # exit 1, listing stale blocks and unsourced figures
    python scripts/doc_figures.py --produce NAME  # run a recipe, store benchmarks/results/NAME.json
    python scripts/doc_figures.py --record-test-time MODE SECONDS --how TEXT   # store a test-suite time

The check also lints each doc outside its blocks (and outside code): a line holding a number next
to a word that marks a measured figure (AUC, accuracy, ms/µs timings, real time, memory,
percentiles, ...) fails, so a measured figure cannot be typed in by hand. Dated records of one
measurement (``RECORDS``) are not checked: they state their date and commit.

Errors: an unknown block name, a missing source file, or a block without its closing marker is a
one-line error naming the doc, the block and the fix.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
HEADS = ROOT / "livejudge" / "judge" / "heads"
RESULTS = ROOT / "benchmarks" / "results"
RECORDS = {"docs/vad-bounds-issue10.md", "docs/qwen-omni-offline.md", "docs/corpus-build-2026-12-01.md"}
"""Dated lab notes of one measurement (their date and commit are in the text); not linted."""

BLOCK = re.compile(r"^(<!-- fig:([A-Za-z0-9_]+) -->\n)(.*?)^(<!-- /fig -->)$", re.S | re.M)
OPEN = re.compile(r"^<!-- fig:([A-Za-z0-9_]+) -->$", re.M)


class FigureError(Exception):
    """A block or a source the generator cannot use; the message names it and the fix."""


# ---------------------------------------------------------------- sources


def _heads() -> list[tuple[str, dict]]:
    """(directory name, config) of every shipped head, sorted with validated heads first."""
    out = []
    for cfg_path in sorted(HEADS.glob("*/config.json")):
        out.append((cfg_path.parent.name, json.loads(cfg_path.read_text())))
    return sorted(out, key=lambda nc: (not _validity(nc[1]), nc[0]))


def _validity(cfg: dict) -> dict | None:
    training = cfg.get("training")
    v = training.get("validity") if isinstance(training, dict) else None
    return v if isinstance(v, dict) and v.get("summary") else None


def _summary(v: dict) -> str:
    """The validity summary with its caveat, in the words of the head's validity line
    (``livejudge.judge.model.head.validity_text``: the caveat first)."""
    from livejudge.judge.model.head import validity_text

    return str(validity_text(v))


def _result(name: str) -> dict | None:
    """A stored run (``benchmarks/results/NAME.json``) or None when there is none."""
    p = RESULTS / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def _src(name: str) -> str:
    r = _result(name)
    if r is None:
        return ""
    return (f"Source: `benchmarks/results/{name}.json` (commit {r.get('commit', '?')}, "
            f"{r.get('date_utc', '?')}, {r.get('machine', '?')}).")


# ---------------------------------------------------------------- figures


def fig_judge_validity_short() -> str:
    lines = []
    for name, cfg in _heads():
        v = _validity(cfg)
        bb = cfg.get("backbone", {}).get("name", "?")
        if v:
            lines.append(f"* `{name}` {cfg.get('version', '?')} (backbone `{bb}`): validity: {_summary(v)}")
        else:
            lines.append(f"* `{name}` {cfg.get('version', '?')} (backbone `{bb}`, {cfg.get('provenance', '?')}): no held-out validity "
                         f"recorded in its config")
    return "\n".join(lines) + f"\n\n(from `livejudge/judge/heads/*/config.json`)"


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def fig_heads_table() -> str:
    rows = ["| head | backbone | provenance | version | how it was made |", "|---|---|---|---|---|"]
    for name, cfg in _heads():
        training = cfg.get("training") if isinstance(cfg.get("training"), dict) else {}
        how = training.get("method") or cfg.get("notes") or ""
        rows.append(f"| `{name}` | `{cfg.get('backbone', {}).get('name', '?')}` | {cfg.get('provenance', '?')} "
                    f"| {cfg.get('version', '?')} | {_one_line(how, 400).replace('|', '/')} |")  # whole: 0.4.0's is 284
    return "\n".join(rows)


def _f(x, nd: int = 2) -> str:
    return "" if x is None else f"{float(x):.{nd}f}"


def fig_heads_validity() -> str:
    parts = []
    for name, cfg in _heads():
        v = _validity(cfg)
        if not v:
            parts.append(f"* `{name}`: no held-out validity recorded in its config.")
            continue
        training = cfg["training"]
        parts.append(f"`{name}` — validity: {_summary(v)}. Trained on: {_one_line(training.get('data', '?'), 2000)}.")  # whole: a cut mid-word read as an error
        lofo = v.get("lofo") or {}
        if lofo and training.get("blend"):  # a blend: its nested LOFO on what neither member met (held out)
            parts.append("")
            members = " and ".join(f"{m['name']} {m['version']}" for m in training["blend"]["members"])
            fr = cfg.get("frame_readout")
            lead = (f"Its linear part (0.2.0, weights digest {training.get('frame_readout', {}).get('linear_head_weights_sha256_16', '?')}) "
                    "is a blend" if fr else "A blend")
            parts.append(f"{lead} of {members} (log-odds weights {', '.join(f'{w:g}' for w in training['blend']['weights'])}). "
                         "Its nested leave-one-family-out table, on the held-out families neither member was fitted on, "
                         "against the people neither member met (held-out figures; the run that preceded shipping"
                         + (" 0.2.0" if fr else "") + "):")
            parts.append("")
            parts.append("| held-out TTS family | ROC-AUC | the previous head alone | people / machine test dialogues |")
            parts.append("|---|---|---|---|")
            for fam, r in sorted(lofo.items(), key=lambda kv: -float(kv[1].get("auc", 0))):
                d = _floor2()  # rounded DOWN, as every generated block that quotes these runs
                parts.append(f"| {fam} | {d(r.get('auc'))} | {d(r.get('compare_head_auc'))} | {r.get('n_h')} / {r.get('n_m')} |")
        elif lofo:
            parts.append("")
            if v.get("sealed"):  # the sealed line above is its validity; the stored table predates the protocol
                parts.append("The leave-one-family-out table stored when it was fitted, before the nested protocol: "
                             "NOT held-out figures (its second calibration step was fitted on these folds' people, "
                             "and choices were made with the kokoro row in view; see \"Validity protocol\" below). "
                             "Its validity is the sealed line above.")
                parts.append("")
            parts.append("| held-out TTS family | ROC-AUC | accuracy at 0.5 | mean P(human) human / machine "
                         "| worst fold AUC | acoustic-fitted AUC |")
            parts.append("|---|---|---|---|---|---|")
            for fam, r in sorted(lofo.items(), key=lambda kv: -float(kv[1].get("auc", 0))):
                parts.append(f"| {fam} | {_f(r.get('auc'))} | {_f(r.get('acc'))} | {_f(r.get('p_human_h'))} / "
                             f"{_f(r.get('p_human_m'))} | {_f(r.get('fold_auc_min'))} | {_f(r.get('acoustic_fitted_auc'))} |")
            u = v.get("unseen_family")
            if isinstance(u, dict):
                fams = ", ".join(u.get("families", []))
                parts.append(f"| {fams} (reserved, never used to fit or choose) | {_f(u.get('auc'))} | {_f(u.get('acc'))} "
                             f"| {_f(u.get('p_human_h'))} / {_f(u.get('p_human_m'))} | | {_f(u.get('acoustic_fitted_auc'))} |")
        fr = cfg.get("frame_readout") or {}
        if "whisper-base" in fr.get("encoders", []):  # 0.4.0 on: v21's S1 (tiny + base) is the nearest fold-level figure
            s1 = _result("judge_lofo_v21_s1")
            if s1 is None:
                raise FigureError("heads_validity: needs benchmarks/results/judge_lofo_v21_s1.json "
                                  "(benchmarks/experiments/refit_v6/README.md, v21)")
            d = _floor2()
            m, pl = s1["mean_family_auc"], s1["pooled_auc"]
            parts.append("")
            rule = (cfg.get("training", {}).get("frame_readout") or {}).get("rule", "benchmarks/experiments/refit_v6/README.md")
            n_tiny = sum(1 for e in fr["encoders"] if e != "whisper-base")
            parts.append(f"With its frame readout (temporal CNNs over tiny.en's block-2 and Whisper base's block-3 frames, "
                         f"{fr['members']} networks: {n_tiny} tiny, 1 base; log-odds weight {fr['weight']:g}): no fold-level "
                         f"table of this exact readout exists. The nearest, v21's S1 (one tiny and one base network, on round "
                         f"2's {len(s1['families'])} held-out families), reaches a mean per-family ROC-AUC of "
                         f"{d(m['candidate']['mean'])} against {d(m['base']['mean'])} with one tiny network (pooled "
                         f"{d(pl['candidate']['mean'])} against {d(pl['base']['mean'])}; means over {m['candidate']['n']} "
                         f"calibration draws). Those folds were read before this head's rule was written, so they are not "
                         f"its evidence: it shipped on measure-only yardsticks at the user's unit ({rule}).")
        elif fr:  # 0.3.0: its frame readout's LOFO evidence (v11's S1), from the stored run
            s1 = _result("judge_lofo_v11_s1")
            if s1 is None:
                raise FigureError("heads_validity: needs benchmarks/results/judge_lofo_v11_s1.json "
                                  "(benchmarks/experiments/refit_v6/README.md, v11)")
            d = _floor2()
            fr = cfg["frame_readout"]
            parts.append("")
            parts.append(f"With its frame readout (a temporal CNN over the encoder's block-{fr['stage']} frames, "
                         f"{fr['members']} networks, log-odds weight {fr['weight']:g}): on round 2's {len(s1['families'])} "
                         f"held-out families the blend's mean per-family ROC-AUC is {d(s1['mean']['v11'])} against "
                         f"{d(s1['mean']['v5'])} for the linear fold heads alone (pooled {d(s1['pooled']['v11'])} against "
                         f"{d(s1['pooled']['v5'])}; \"A frame readout beside the linear head\" below).")
        loso = v.get("loso") or {}
        if loso:
            worst = sorted(loso.items(), key=lambda kv: float(kv[1].get("p_human", 1)))[:3]
            txt = "; ".join(f"{g} {_f(r.get('p_human'))} (accuracy {_f(r.get('acc'))}, n {r.get('n')})" for g, r in worst)
            parts.append("")
            parts.append(f"Held-out human groups with the lowest mean P(human): {txt}.")
        if v.get("command"):
            parts.append("")
            parts.append(f"Measured by: `{v['command']}`.")
        parts.append("")
    return "\n".join(parts).rstrip()


def fig_human_references() -> str:
    sys.path.insert(0, str(ROOT))
    from livejudge.timing import metrics

    rows = ["| reference | band, seconds | source |", "|---|---|---|"]
    for band in (metrics.RESPONSE_LATENCY_HUMAN, metrics.S2S_LATENCY_RANGE):
        rows.append(f"| {band.label} | {band.low_s:g}–{band.high_s:g} | {band.source} |")
    rows.append(f"| typical human gap between turns | {metrics.TYPICAL_GAP_S:g} | Levinson & Torreira 2015, Front. Psychol. 6:731 |")
    return "\n".join(rows)


def fig_test_times() -> str:
    r = _result("test_times")
    if r is None:
        return "No test time stored yet (`python scripts/doc_figures.py --record-test-time`)."
    fast, full = r.get("fast"), r.get("full")
    bits = []
    if fast:
        bits.append(f"`bash scripts/test.sh` {fast['seconds'] / 60:.1f} min ({fast['how']})")
    if full:
        bits.append(f"`bash scripts/test.sh --all` {full['seconds'] / 60:.1f} min ({full['how']})")
    return ("Measured on " + r.get("machine", "?") + ": " + "; ".join(bits)
            + ". Source: `benchmarks/results/test_times.json`.")


def fig_meter_example() -> str:
    r = _result("meter_example")
    if r is None:
        return "No stored meter (`python scripts/doc_figures.py --produce meter_example`)."
    text = "\n".join(line.rstrip() for line in r["result"]["text"].rstrip().splitlines())
    return "```\n" + text + "\n```\n\n" + _src("meter_example")


def _render_pipeline_speed(res: dict) -> str:
    j = res["judge_ms_per_window"]
    return (f"{res['call_s'] / 60:.0f}-minute call on {res['cores']} core: without the judge "
            f"{res['no_judge']['realtime_factor']:g}× real time; with the acoustic judge (`load_judge(\"acoustic\")`) every "
            f"{res['with_judge']['interval_s']:g} s {res['with_judge']['realtime_factor']:g}×; judge "
            f"{j['p50']:g} ms p50 / {j['p95']:g} ms p95 per {res['with_judge']['window_s']:g} s window; "
            f"peak RSS {res['peak_rss_mb']:g} MB")


def _render_judge_whisper_speed(res: dict) -> str:
    enc = res.get("encoder", [])
    lo = min(r["ms_per_s"] for r in enc) if enc else None
    hi = max(r["ms_per_s"] for r in enc) if enc else None
    lc = res["long_call"]
    j = lc["judge_ms_per_window"]
    return (f"encoder {lo:g}–{hi:g} ms per second of speech (turns of "
            f"{'/'.join(str(r['turn_s']) for r in enc)} s, one core); {lc['call_s'] / 60:.0f}-minute call scored at "
            f"{lc['realtime_factor']:g}× real time on {lc['cores']} cores (load average {lc['load_average_1min']:g}; "
            f"{lc['realtime_factor_cpu']:g}× per busy core), {lc['encoder_calls']} encoder calls for "
            f"{lc['agent_turns']} agent turns; judge {j['p50']:g} ms p50 / {j['p95']:g} ms p95 per window; "
            f"peak RSS {lc['peak_rss_mb']:g} MB")


def _render_verdict_settle(res: dict) -> str:
    k = res["kinds"]
    lo = min(r["after_moment_s"]["median"] for r in k.values())
    hi = max(r["after_moment_s"]["median"] for r in k.values())
    return (f"live verdicts published {lo:g}–{hi:g} s (median per kind) after their moment, on "
            f"{res['calls']} built calls")


def _render_vad_bounds(r: dict) -> str:
    st = r["summary"]["adaptive"]
    return (f"target set: response-latency error median {st['latency_med_ms']:g} ms, p95 absolute error "
            f"{st['latency_p95_abs_ms']:g} ms over {st['n_latency']} latencies; yield p95 absolute error "
            f"{st['yield_p95_abs_ms']:g} ms over {st['n_yield']}; barge-in recall {st['barge_in_recall']:g}; "
            f"backchannels right {st['backchannels_right']:g}")


def fig_timing_tolerance() -> str:
    """compare's "same" tolerance for timing rows (``livejudge.timing.metrics.MEASURED_TIMING_ERROR``)."""
    r = _result("vad_bounds")
    if r is None:
        return "No stored run (`python scripts/doc_figures.py --produce vad_bounds`)."
    st = r["result"]["summary"]["adaptive"]
    return (f"The measured timing error: p95 |error| of one latency {st['latency_p95_abs_ms']:.0f} ms, of one "
            f"yield {st['yield_p95_abs_ms']:.0f} ms ({st['n_latency']} latencies and {st['n_yield']} yields of "
            f"`{r['command']}`: noise −55…−40 dBFS, room tails and breaths, 8/16/48 kHz). {_src('vad_bounds')}")


def fig_timing_tolerance_narrowband() -> str:
    """The timing error ``within_timing_error`` uses on a narrowband call
    (``livejudge.timing.metrics.MEASURED_TIMING_ERROR_NARROWBAND``)."""
    r = _result("vad_bounds_narrowband")
    if r is None:
        return "No stored run (`python scripts/doc_figures.py --produce vad_bounds_narrowband`)."
    st = r["result"]["telephone"]["adaptive"]
    return (f"On a narrowband call: p95 |error| of one latency {st['latency_p95_abs_ms']:.0f} ms (median error "
            f"{st['latency_med_ms']:+.0f} ms: latencies read long), of one yield {st['yield_p95_abs_ms']:.0f} ms "
            f"({st['n_latency']} latencies and {st['n_yield']} yields of `{r['command']}`: the same floors, kinds, "
            f"tails and breaths through 8 kHz G.711 μ-law, against the speech as recorded). {_src('vad_bounds_narrowband')}")


def fig_telephone_timing() -> str:
    """Response-latency error on 8 kHz and telephone lines, against the speech as the line carries
    it and as it was recorded (``benchmarks/vad_bounds.py --sets ulaw,ulaw-rec,8k-rec``)."""
    r = _result("vad_bounds_telephone")
    if r is None:
        return "No stored run (`python scripts/doc_figures.py --produce vad_bounds_telephone`)."
    rows = r["result"]["rows"]
    what = {"ulaw": "telephone (300–3400 Hz, μ-law)", "ulaw-rec": "telephone (300–3400 Hz, μ-law)",
            "8k-rec": "8 kHz, no band limit"}
    truth = {"ulaw": "as the line carries it", "ulaw-rec": "as recorded", "8k-rec": "as recorded"}
    f = lambda v: "–" if v is None else f"{v:+.0f}"  # noqa: E731
    g = lambda v: "–" if v is None else f"{v:.0f}"  # noqa: E731
    lines = ["| line | truth: the speech | noise (dBFS, white) | latency error median (ms) | p95 \\|error\\| (ms) "
             "| offset error median (ms) | latencies |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {what[row['set']]} | {truth[row['set']]} | {row['noise_dbfs']} | {f(row['latency_med_ms'])} | "
                     f"{g(row['latency_p95_abs_ms'])} | {f(row['offset_med_ms'])} | {row['n_latency']} |")
    return ("\n".join(lines) + f"\n\nFrom `{r['command']}` ({r['result'].get('calls_per_condition', '?')} random calls "
            f"per row, room tails and breaths; error = measured − truth). {_src('vad_bounds_telephone')}")


def fig_loud_timing() -> str:
    """Timing error on noise floors above the range the timing figures were measured on, beside
    what ``noisy_line`` says (``benchmarks/vad_bounds.py --sets loud``): the ground for
    ``livejudge.timing.health.NOISY_FLOOR_DBFS``."""
    r = _result("vad_bounds_loud")
    if r is None:
        return "No stored run (`python scripts/doc_figures.py --produce vad_bounds_loud`)."
    res = r["result"]
    f = lambda v: "–" if v is None else "±0" if round(v) == 0 else f"{v:+.0f}"  # noqa: E731
    g = lambda v: "–" if v is None else f"{v:.0f}"  # noqa: E731
    h = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    lines = ["| noise | level (dBFS RMS) | floor as measured (dBFS) | `noisy_line` warned (share of channels) "
             "| latency error median (ms) | p95 \\|error\\| (ms) | replies missed | barge-in recall "
             "| backchannels right |", "|---|---|---|---|---|---|---|---|---|"]
    for row in res["rows"]:
        lines.append(f"| {row['kind']} | {row['noise_dbfs']} | {g(row.get('floor_med_dbfs'))} | "
                     f"{h(row.get('noisy_line_share'))} | {f(row['latency_med_ms'])} | {g(row['latency_p95_abs_ms'])} | "
                     f"{row['latency_missed']} of {row['latency_missed'] + row['n_latency']} | "
                     f"{h(row['barge_in_recall'])} | {h(row['backchannels_right'])} |")
    return ("\n".join(lines) + f"\n\nFrom `{r['command']}` ({res.get('calls_per_condition', '?')} random calls "
            f"per row, 16 kHz, room tails and breaths; error = measured − truth; `noisy_line` warns above a "
            f"measured floor of −38 dBFS, or −44 dBFS when the floor is speech-like, over the call or in two 10 s "
            f"windows in a row). {_src('vad_bounds_loud')}")


def fig_judge_spread() -> str:
    """compare's "same" tolerance for the judge rows (``livejudge/data/judge_spread.json``), from
    ``benchmarks/results/judge_repeatability.json``."""
    path = RESULTS / "judge_repeatability.json"
    if not path.exists():
        return "No stored run (`python benchmarks/judge_repeatability.py --write-package`, its manifests in its docstring)."
    r = json.loads(path.read_text())
    m = r["metrics"]
    dims = sorted((v["tolerance"], k[4:].replace("_", " ")) for k, v in m.items() if k.startswith("dim_"))
    h = r["head"]
    fams = sorted({f"{v['family']}" for v in r["voices"]})
    cfg = dict(_heads()).get(h["head"]) or {}
    tr = cfg.get("training") or {}
    fitted = {f.split(":")[0] for f in tr.get("families") or []} | {g for c in tr.get("human_groups") or [] for g in c.split("+")}
    unmet = [f for f in fams if f not in fitted]
    return (f"The measured between-call spread of `{h['head']}` {h['head_version']}: two calls of one agent voice "
            f"differ in mean P(human) by up to {m['mean_p_human']['tolerance']:.3f}, and in a dimension's call mean "
            f"by up to {dims[0][0]:.3f} ({dims[0][1]}) to {dims[-1][0]:.3f} ({dims[-1][1]}) (95 %: 1.96·√2 times the "
            f"pooled within-voice SD; {len(r['voices'])} voices, one per family ({', '.join(fams)}), "
            f"{r['calls_per_voice']} calls of {r['turns_per_call']} agent turns each; the head's training holds "
            f"{len(fams) - len(unmet)} of these families, not {', '.join(unmet) or 'none'}). Source: "
            f"`benchmarks/results/judge_repeatability.json` (`{r['command']}`, commit {r['commit']}).")


RENDER: dict[str, Callable[[dict], str]] = {
    "vad_bounds": _render_vad_bounds,
    "pipeline_speed": _render_pipeline_speed,
    "judge_whisper_speed": _render_judge_whisper_speed,
    "verdict_settle": _render_verdict_settle,
}


def fig_verdict_settle() -> str:
    r = _result("verdict_settle")
    if r is None:
        return "No stored run (`python scripts/doc_figures.py --produce verdict_settle`)."
    res = r["result"]
    rows = ["| verdict | n | after the moment: median / p95 (s) | after its settle time: median / p95 (s) |",
            "|---|---|---|---|"]
    for kind, v in res["kinds"].items():
        m, st = v["after_moment_s"], v["after_settle_s"]
        rows.append(f"| {kind} | {v['n']} | {m['median']:.1f} / {m['p95']:.1f} | {st['median']:.1f} / {st['p95']:.1f} |")
    return ("\n".join(rows) + f"\n\nOn {res['calls']} built calls ({', '.join(res['lines'])} lines; "
            f"{res['published_at_close']} verdicts came only with the end of the call). " + _src("verdict_settle"))


def _stored(fig: str, *names: str, how: str) -> list[dict]:
    """The stored results ``benchmarks/results/NAME.json`` a figure is written from, or a
    FigureError naming the missing ones and ``how`` they are made."""
    got = [_result(n) for n in names]
    missing = [n for n, r in zip(names, got) if r is None]
    if missing:
        raise FigureError(f"{fig}: needs benchmarks/results/{', '.join(m + '.json' for m in missing)} ({how})")
    return got


def _floor2():
    """judge_lofo.floor2: the rounding-down every validity figure uses."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from judge_lofo import floor2

    return floor2


def fig_data_batch2() -> str:
    """The second data batch under the protocol (issue 19): the candidate recipe's fold heads vs
    the shipped head on the same held-out dialogues, and both heads on the measure-only sources.
    Figures rounded DOWN, as every validity figure."""
    d = _floor2()
    lofo, shipped, cand = _stored("data_batch2", "judge_lofo_protocol_v4", "judge_wild_measure_only_batch2_shipped",
                                  "judge_wild_measure_only_batch2_v4", how="benchmarks/experiments/data_batch2/README.md")

    c = lofo["compare_head"]
    fresh = c["fresh_families"]
    sw, st = shipped["conditions"]["wideband"], shipped["conditions"]["telephone"]
    cw, ct = cand["conditions"]["wideband"], cand["conditions"]["telephone"]
    scored = {k.split(":", 2)[2] for k, v in sw["by_system"].items() if k.startswith("machine:") and v.get("n_scored")}
    fams = sorted({k.split(":")[1] for k, v in sw["by_family"].items() if k.startswith("machine:") and v.get("n_scored")})
    fitted = sorted(set(fams) & set(lofo["families"]))
    return (f"On the {len(fresh)} families 0.1.0 never met ({', '.join(fresh)}), the fold heads "
            f"(each fitted on {len(lofo['families']) - 1} families) reach pooled ROC-AUC "
            f"{d(c['fold_heads_auc_on_fresh'])}, 0.1.0 {d(c['compare_head_auc_on_fresh'])} on the "
            f"same dialogues (some of its people were in its training); counting only people neither had met, "
            f"{d(c['fold_heads_auc_fresh_families_and_people'])} against "
            f"{d(c['compare_head_auc_fresh_families_and_people'])}. Pooled over all "
            f"{len(lofo['families'])} held-out families the fold heads reach {d(lofo['pooled_auc'])}.\n\n"
            f"On the measure-only sources (no head may be fitted on them: unseen sources and systems; "
            f"{len(fitted)} of their {len(fams)} machine families are among the candidate's training families) "
            f"with P(human) for {sw['people']['n_scored']} dialogues with a person and {sw['machines']['n_scored']} "
            f"with a machine of {len(scored)} systems, the candidate fitted on every open family reaches ROC-AUC "
            f"{d(cw['pooled_auc_machines_vs_people'])} wideband / {d(ct['pooled_auc_machines_vs_people'])} "
            f"telephone (wideband mean P(human): people {d(cw['people']['mean_p_human'])}, machines "
            f"{d(cw['machines']['mean_p_human'])}), 0.1.0 {d(sw['pooled_auc_machines_vs_people'])} / "
            f"{d(st['pooled_auc_machines_vs_people'])} (people {d(sw['people']['mean_p_human'])}, machines "
            f"{d(sw['machines']['mean_p_human'])}). Figures rounded down.\n\n"
            "(from `benchmarks/results/judge_lofo_protocol_v4.json` and "
            "`judge_wild_measure_only_batch2_{shipped,v4}.json`)")


def fig_frame_lofo() -> str:
    """The frame-level readouts of the Whisper encoder under the LOFO protocol (issue 19,
    benchmarks/experiments/frame_lofo): each model's mean per-family and pooled ROC-AUC, and the
    adoption rule fixed before the runs. Rounded DOWN."""
    d = _floor2()
    r, = _stored("frame_lofo", "judge_frame_lofo", how="benchmarks/experiments/frame_lofo/README.md")
    names = {"moments_lr": "the four moments of the last stage's frames (the shipped readout's encoder part)",
             "frame_cnn": "a light temporal CNN over the last stage's frames",
             "frame_cnn_s1": "the same CNN with another seed",
             "frame_k1": "the same network without temporal context",
             "frame_cnn_stage2": "the CNN over the second block's frames",
             "frame_cnn_stage2_s1": "that CNN with another seed",
             "moments_lr_allstages": "the moments of all six encoder stages side by side"}
    M = r["models"]
    parts = [f"{names[t]} {d(M[t]['family_mean_auc'])} (pooled {d(M[t]['pooled']['auc'])})" for t in names if t in M]
    single = [M[t]["family_mean_auc"] for t in M if t.startswith("moments_lr_stage")]
    if single:
        parts.append(f"the moments of one earlier stage (of {len(single)}) {d(min(single))} to {d(max(single))}")
    met = [t for t, v in r.get("rule", {}).items() if v["met"]]
    worst = sorted({M[t]["worst"] for t in names if t in M})
    w = worst[0]
    wl = "; ".join(f"{t}: ROC-AUC {d(M[t]['lofo'][w]['auc'])}, mean P(human) people {d(M[t]['lofo'][w]['p_human_h'])}, "
                   f"machines {d(M[t]['lofo'][w]['p_human_m'])}" for t in ("moments_lr", "frame_cnn") if t in M)
    return (f"On the same {len(M['moments_lr']['lofo'])} held-out families and folds, encoder features only, "
            f"split Platt, mean per-family ROC-AUC: " + "; ".join(parts) + ". The rule fixed before the runs "
            "(against the first: mean over families at least 0.05 higher, pooled higher, no family more than 0.05 "
            "lower) was met by " + (", ".join(met) if met else "none of them") + ". "
            + (f"The worst held-out family under every one of them is {w} ({wl})" if len(worst) == 1 else
               f"The worst held-out families: {', '.join(worst)}") + ". Figures rounded down.\n\n"
            "(from `benchmarks/results/judge_frame_lofo.json`)")


def fig_data_batch3() -> str:
    """The third data batch (conversational speech of both classes) under data_batch2's rule: the
    shipped recipe refitted on the grown corpus (v5) against the shipped head on the held-out
    families 0.1.0 never met, and on the measure-only sources. Rounded DOWN."""
    d = _floor2()
    lofo, shipped, cand = _stored("data_batch3", "judge_lofo_protocol_v5", "judge_wild_measure_only_batch2_shipped",
                                  "judge_wild_measure_only_batch3_v5",
                                  how="benchmarks/experiments/frame_lofo/README.md, round 2")
    c = lofo["compare_head"]
    sw, st = shipped["conditions"]["wideband"], shipped["conditions"]["telephone"]
    cw, ct = cand["conditions"]["wideband"], cand["conditions"]["telephone"]
    ok_fresh = c["fold_heads_auc_fresh_families_and_people"] >= c["compare_head_auc_fresh_families_and_people"]
    ok_fresh_all = c["fold_heads_auc_on_fresh"] >= c["compare_head_auc_on_fresh"]
    ok_wild = (cw["pooled_auc_machines_vs_people"] >= sw["pooled_auc_machines_vs_people"]
               and ct["pooled_auc_machines_vs_people"] >= st["pooled_auc_machines_vs_people"])
    return (f"The shipped recipe refitted with the third batch (v5, {len(lofo['families'])} held-out families): "
            f"pooled held-out ROC-AUC {d(lofo['pooled_auc'])}, commercial-neural-tts "
            f"{d(lofo['lofo']['commercial-neural-tts']['auc'])}. On the {len(c.get('fresh_families', []))} families the "
            f"shipped head never met, the fold heads {d(c['fold_heads_auc_on_fresh'])} against 0.1.0 "
            f"{d(c['compare_head_auc_on_fresh'])} (its people partly in its training); counting only people neither "
            f"had met, {d(c['fold_heads_auc_fresh_families_and_people'])} against "
            f"{d(c['compare_head_auc_fresh_families_and_people'])}. On the measure-only sources the v5 head reaches "
            f"ROC-AUC {d(cw['pooled_auc_machines_vs_people'])} wideband / {d(ct['pooled_auc_machines_vs_people'])} "
            f"telephone (mean P(human) people {d(cw['people']['mean_p_human'])}, machines "
            f"{d(cw['machines']['mean_p_human'])}), 0.1.0 {d(sw['pooled_auc_machines_vs_people'])} / "
            f"{d(st['pooled_auc_machines_vs_people'])}. data_batch2's rule (at least as good on both): on the measure-only "
            f"sources {'met' if ok_wild else 'not met'}; on the never-met families {'met' if ok_fresh else 'not met'} "
            f"counting only people neither head had met (held-out for both), {'met' if ok_fresh_all else 'not met'} "
            "counting every person (some were in 0.1.0's training, so for it those are not held-out)"
            + ". Figures rounded down.\n\n(from `benchmarks/results/judge_lofo_protocol_v5.json`, "
            "`judge_wild_measure_only_batch2_shipped.json` and `judge_wild_measure_only_batch3_v5.json`)")


def _fig_refit(cand_name: str, what: str) -> str:
    """A refit of the shipped recipe under the rule fixed before its runs
    (benchmarks/experiments/refit_v6/README.md): each part with its figures, as
    ``refit_v6/rule.py --candidate NAME`` reads them from the stored JSON (from v7 on with R1w and
    R2w). AUCs rounded DOWN in the summary; the parts' figures to three decimals as the rule
    compares them."""
    import importlib.util

    d = _floor2()
    spec = importlib.util.spec_from_file_location("refit_rule", ROOT / "benchmarks/experiments/refit_v6/rule.py")
    rule = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rule)
    lofo_name, wild_name, wideband_people, blend = rule.CANDIDATES[cand_name]
    lofo, shipped, cand = _stored(f"refit_{cand_name}", lofo_name, "judge_wild_measure_only_batch2_shipped", wild_name,
                                  how="benchmarks/experiments/refit_v6/README.md")
    bad = rule.same_inputs(lofo, shipped, cand, blend=blend)
    if bad:
        raise FigureError(f"refit_{cand_name}: the stored results cannot be compared: {'; '.join(bad)}")
    fifth = None
    if cand_name in rule.FIFTH_BATCH:  # R5, declared for this candidate before its runs
        fifth = tuple(_stored(f"refit_{cand_name}", rule.SHIPPED_FIFTH, rule.FIFTH_BATCH[cand_name],
                              how="benchmarks/experiments/refit_v6/README.md"))
        bad = rule.same_fifth_batch_inputs(lofo, *fifth)
        if bad:
            raise FigureError(f"refit_{cand_name}: the stored fifth-batch runs cannot be compared: {'; '.join(bad)}")
    parts = rule.evaluate(lofo, shipped, cand, wideband_people=wideband_people, fifth=fifth)
    against = cand_name in getattr(rule, "AGAINST_020", {})
    if against:  # R6 and R7, against the shipped 0.2.0, declared for this candidate before its runs
        ship4, ship5, cand7, ship7 = _stored(f"refit_{cand_name}", *rule.SHIPPED_020_RUNS, *rule.AGAINST_020[cand_name],
                                             how="benchmarks/experiments/refit_v6/README.md")
        bad = rule.against_shipped_inputs(lofo, cand, fifth[1], ship4, ship5, cand7, ship7)
        if bad:
            raise FigureError(f"refit_{cand_name}: the stored runs against 0.2.0 cannot be compared: {'; '.join(bad)}")
        parts += rule.against_shipped(cand, fifth[1], ship4, ship5, cand7, ship7)
    cw, ct = cand["conditions"]["wideband"], cand["conditions"]["telephone"]
    auc = {}
    if blend is None:
        worst = sorted(lofo["lofo"], key=lambda f: lofo["lofo"][f]["auc"])[:3]
        head = (f"The shipped recipe refitted {what} ({cand_name}, {len(lofo['families'])} held-out families, "
                f"{lofo['n_dialogues']} open dialogues): pooled held-out ROC-AUC {d(lofo['pooled_auc'])}; the weakest "
                "held-out families ")
    else:  # a blend with the shipped head is held out only where the shipped head never met the family
        c = lofo["compare_head"]
        fresh = c["fresh_families"]
        auc = {f: lofo["lofo"][f]["people_neither_met"]["auc"] for f in fresh}
        worst = sorted(fresh, key=lambda f: auc[f])[:3]
        head = (f"The blend of whisper-fitted 0.1.0 and the recipe refitted {what} ({cand_name}: log-odds "
                f"{1 - blend:g}·refit + {blend:g}·0.1.0, fixed in advance; {lofo['n_dialogues']} open dialogues): "
                f"on the {len(fresh)} held-out families 0.1.0 never met, against the people neither "
                f"member met, pooled ROC-AUC {d(c['fold_heads_auc_fresh_families_and_people'])} (0.1.0 alone "
                f"{d(c['compare_head_auc_fresh_families_and_people'])}); the weakest of them ")
    return (head + ", ".join(f"{f} {d(auc[f] if blend is not None else lofo['lofo'][f]['auc'])}" for f in worst)
            + f". On the measure-only sources the {cand_name} head reaches ROC-AUC "
            f"{d(cw['pooled_auc_machines_vs_people'])} wideband / {d(ct['pooled_auc_machines_vs_people'])} telephone "
            f"(wideband mean P(human) people {d(cw['people']['mean_p_human'])}, machines "
            f"{d(cw['machines']['mean_p_human'])}). The rule: "
            + "; ".join(f"{name}: {'met' if ok else 'NOT met'} ({figs})" for name, ok, figs in parts)
            + f". {'Every part met: ' + cand_name + ' ships' if all(ok for _, ok, _ in parts) else 'Not every part met: ' + ('0.2.0' if against else '0.1.0') + ' stayed the shipped head'}."
            + (" (\"shipped\" in R1-R5: whisper-fitted 0.1.0, the compare head and blend member; R6 and R7 compare "
               "with 0.2.0, the head shipped when the rule was written)." if against else
               " (\"shipped\" in the rule: whisper-fitted 0.1.0, the head shipped when the rule was written).")
            + f"\n\n(from `benchmarks/results/{lofo_name}.json`, `judge_wild_measure_only_batch2_shipped.json`, "
            f"`{wild_name}.json`"
            + (f", `{rule.SHIPPED_FIFTH}.json` and `{rule.FIFTH_BATCH[cand_name]}.json`" if fifth else "")
            + ("; against 0.2.0: " + ", ".join(f"`{n}.json`" for n in (*rule.SHIPPED_020_RUNS, *rule.AGAINST_020[cand_name]))
               if against else "")
            + ", read by `benchmarks/experiments/refit_v6/rule.py`)")


def fig_refit_v6() -> str:
    """The licence-clean refit with the third batch (v6) under its rule (``_fig_refit``)."""
    return _fig_refit("v6", "with the third batch, its doubtful sources never fitted on and JFK left out")


def fig_refit_v7() -> str:
    """v6 plus the fourth batch (v7) under the same rule with R1w and R2w (``_fig_refit``)."""
    return _fig_refit("v7", "with the third and fourth batches, the doubtful sources never fitted on and JFK left out")


def fig_refit_v7blend() -> str:
    """v7's refit blended with the shipped head, weight 0.5 fixed in advance (``_fig_refit``)."""
    return _fig_refit("v7blend", "as v7")


def fig_refit_v9blend() -> str:
    """v9blend: v7blend's recipe with the sixth batch, commercial voices held out by vendor group,
    and R5 on the fifth batch (``_fig_refit``)."""
    return _fig_refit("v9blend", "as v7 with the sixth batch (commercial voices that may be fitted on), commercial "
                                 "voices held out by vendor group")


def fig_refit_v10blend() -> str:
    """v10blend: 0.2.0's recipe with the seventh batch, R1-R5 against 0.1.0 and R6/R7 against the
    shipped 0.2.0 (``_fig_refit``)."""
    return _fig_refit("v10blend", "as v9blend with the seventh batch (Polly, OpenAI tts-1 and Watson voices that may "
                                  "be fitted on), commercial voices held out by vendor group")


def fig_refit_v8blend() -> str:
    """v8blend: the refit with wild rows through telephone lines and rooms, blended 0.5 with the
    shipped head (``_fig_refit``)."""
    return _fig_refit("v8blend", "as v7 with half of every wild agent's dialogues through a telephone line or a room")


def fig_commercial_measure_only() -> str:
    """The shipped head on the fifth batch's commercial voices (measure-only, never fitted on by any
    head), at the user's unit, beside the measure-only people of the earlier batches: per engine the
    dialogues, mean P(human) and the share called machine (P(human) < 0.5), and the ROC-AUC of
    these machines against those people per line condition. Rounded DOWN."""
    import csv

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from judge_lofo import roc_auc

    d = _floor2()
    (r,) = _stored("commercial_measure_only", "judge_wild_measure_only_batch5_shipped",
                   how="python benchmarks/judge_wild.py --measure-only --manifest /work/exp/wild/manifest.csv "
                       "/work/exp/wild/manifest_new.csv /work/exp/wild/manifest_comm5.csv --exclude-family resynthesis "
                       "--exclude-family other-neural --json benchmarks/results/judge_wild_measure_only_batch5_shipped.json")
    with (ROOT / "benchmarks" / "data" / "wild_manifest_5.csv").open() as f:
        b5 = {row["path"] for row in csv.DictReader(f) if row["label"] == "machine"}
    parts, rows = [], None
    for cond, c in r["conditions"].items():
        dl = [x for x in c["dialogues"] if x.get("p") is not None]
        ppl = [x["p"] for x in dl if x["label"] == "human"]
        mach = [x for x in dl if x["label"] == "machine" and set(x["clips"]) <= b5]
        auc = roc_auc([x["p"] for x in mach] + ppl, [0] * len(mach) + [1] * len(ppl))
        parts.append(f"{cond} ROC-AUC {d(auc)} ({len(mach)} dialogues of these engines against {len(ppl)} of people; "
                     f"people's mean P(human) {d(sum(ppl) / len(ppl))})")
        if rows is None:  # the per-engine table from the first condition
            by: dict = {}
            for x in mach:
                by.setdefault(x["system"], []).append(x["p"])
            rows = ["| engine (system) | dialogues | mean P(human) | called machine |", "|---|---|---|---|"]
            for sysname, ps in sorted(by.items(), key=lambda kv: -sum(kv[1]) / len(kv[1])):
                rows.append(f"| {sysname} | {len(ps)} | {d(sum(ps) / len(ps))} | {d(sum(p < 0.5 for p in ps) / len(ps))} |")
    return ("whisper-fitted 0.1.0 (the shipped head until 2026-12-05) on commercial voices no head was ever fitted on (fifth batch, measure-only; "
            f"{next(iter(r['conditions']))} condition in the table): " + "; ".join(parts) + ".\n\n"
            + "\n".join(rows) + "\n\n(from `benchmarks/results/judge_wild_measure_only_batch5_shipped.json` and "
            "`benchmarks/data/wild_manifest_5.csv`)")


def fig_codec_cue() -> str:
    """The MP3-cue diagnostic (benchmarks/experiments/codec_cue/README.md): the shipped head on the
    same dialogues of open (fit-OK) clips with the agent's clips clean and through an MP3 round trip,
    per class the mean paired change of P(human), and the pooled ROC-AUC per condition. Changes to
    three decimals (rounded to nearest), ROC-AUC rounded DOWN."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "experiments" / "codec_cue"))
    from paired import paired

    d = _floor2()
    (r,) = _stored("codec_cue", "judge_wild_codec_cue", how="benchmarks/experiments/codec_cue/README.md")
    conds = list(r["conditions"])
    base, others = conds[0], conds[1:]
    parts = []
    for c in others:
        deltas = paired(r, base, c)
        cls = [f"{'people' if lab == 'human' else 'machines'} {sum(v) / len(v):+.3f} ({len(v)} dialogues)"
               for lab in ("human", "machine") for (lab2, fam), v in deltas.items() if lab2 == lab and fam == "ALL"]
        parts.append(f"{c} (kbit/s): mean change of P(human) " + ", ".join(cls)
                     + f"; ROC-AUC {d(r['conditions'][c]['pooled_auc_machines_vs_people'])}")
    return (f"whisper-fitted 0.1.0 (the shipped head until 2026-12-05) on {len(r['conditions'][base]['dialogues'])} dialogues of open clips, agent's clips clean "
            f"({base}: ROC-AUC {d(r['conditions'][base]['pooled_auc_machines_vs_people'])}, mean P(human) people "
            f"{d(r['conditions'][base]['people']['mean_p_human'])}, machines {d(r['conditions'][base]['machines']['mean_p_human'])}) "
            "and through an MP3 round trip, the same dialogues otherwise: " + "; ".join(parts) + ".\n\n"
            "(from `benchmarks/results/judge_wild_codec_cue.json`, read by `benchmarks/experiments/codec_cue/paired.py`)")


def fig_commercial_transfer() -> str:
    """The transfer diagnostic (benchmarks/experiments/commercial_transfer/README.md): per commercial
    engine of the fifth batch (measure-only), the shipped head beside the v7 refit (fitted on two
    other commercial engines), and the pooled ROC-AUC per condition. Rounded DOWN."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "experiments" / "commercial_transfer"))
    from compare import table

    shipped, v7 = _stored("commercial_transfer", "judge_wild_measure_only_batch5_shipped", "judge_wild_measure_only_batch5_v7",
                          how="benchmarks/experiments/commercial_transfer/README.md")
    return ("The fifth batch's commercial engines (measure-only, never fitted on by any head), scored at the user's unit "
            "by whisper-fitted 0.1.0 (the shipped head until 2026-12-05; fitted on the package corpus, no commercial voice) and by the v7 refit (not shipped; "
            "fitted on the open rows, whose commercial voices are OpenAI tts-1-hd and Gemini TTS only), wideband:\n\n"
            + table(shipped, v7, "v7") + "\n\n(from `benchmarks/results/judge_wild_measure_only_batch5_shipped.json` and "
            "`judge_wild_measure_only_batch5_v7.json`, read by `benchmarks/experiments/commercial_transfer/compare.py`)")


def fig_commercial_shipped() -> str:
    """The fifth batch's commercial engines (measure-only) per engine: 0.1.0 beside 0.2.0 (the v9blend
    run R5 read), from the stored runs through ``commercial_transfer/compare.py``. Rounded DOWN."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "experiments" / "commercial_transfer"))
    from compare import table

    old, new = _stored("commercial_shipped", "judge_wild_measure_only_batch5_shipped", "judge_wild_measure_only_batch5_v9blend",
                       how="benchmarks/experiments/refit_v6/README.md (v9blend)")
    return ("The fifth batch's commercial engines (measure-only, never fitted on by either head), per engine, "
            "whisper-fitted 0.1.0 beside 0.2.0 (v9blend), wideband:\n\n" + table(old, new, "0.2.0")
            + "\n\n(from `benchmarks/results/judge_wild_measure_only_batch5_shipped.json` and "
            "`judge_wild_measure_only_batch5_v9blend.json`, read by `benchmarks/experiments/commercial_transfer/compare.py`)")


ENGINE_RUNS_020 = (  # (batch, stored run of 0.2.0's weights, manifest whose measure-only machine clips it reads)
    ("5", "judge_wild_measure_only_batch5_v9blend", "wild_manifest_5.csv"),
    ("7", "judge_wild_measure_only_batch7_shipped020", "wild_manifest_7.csv"),
    ("8", "judge_wild_measure_only_batch8_shipped020", "wild_manifest_8.csv"),
)
ENGINE_RUNS_030 = (  # the same for 0.3.0 (v11's runs, refit_v6/README.md, v11)
    ("5", "judge_wild_measure_only_batch5_v11", "wild_manifest_5.csv"),
    ("7", "judge_wild_measure_only_batch7_v11", "wild_manifest_7.csv"),
    ("8", "judge_wild_measure_only_batch8_v11", "wild_manifest_8.csv"),
)
ENGINE_RUNS_040 = (  # the same for 0.4.0 (v23's runs, refit_v6/README.md, v23)
    ("5", "judge_wild_measure_only_batch5_v23", "wild_manifest_5.csv"),
    ("7", "judge_wild_measure_only_batch7_v23", "wild_manifest_7.csv"),
    ("8", "judge_wild_measure_only_batch8_v23", "wild_manifest_8.csv"),
)


def _engine_table(fig: str, version: str, spec: tuple, before: tuple | None = None, note: str = "",
                  before_version: str = "0.2.0") -> str:
    """``version`` per commercial engine of the measure-only batches (5, 7, 8; sources no head is
    fitted on), one row per engine: dialogues, mean P(human), share called machine (P(human) < 0.5)
    and ROC-AUC against the run's people, wideband and telephone; with ``before`` (the previous
    head's runs on the same dialogues) also its wideband mean P(human) and share called machine.
    Rounded DOWN."""
    import csv

    sys.path.insert(0, str(ROOT / "benchmarks" / "experiments" / "commercial_transfer"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from compare import per_engine, pooled_auc
    from judge_lofo import FIT_OK, floor2

    how = "the commands in docs/judge.md and benchmarks/experiments/refit_v6/README.md"
    runs = _stored(fig, *(n for _, n, _ in spec), how=how)
    prev = _stored(fig, *(n for _, n, _ in before), how=how) if before else [None] * len(spec)
    conds = ("wideband", "telephone")
    met = fitted_vendors()
    rows, people = [], []
    for (batch, _, manifest), run, old in zip(spec, runs, prev):
        with (ROOT / "benchmarks" / "data" / manifest).open() as f:
            clips = {r["path"] for r in csv.DictReader(f) if r["label"] == "machine" and r["licence"] not in FIT_OK}
        eng = {c: per_engine(run, c, clips) for c in conds}
        old_w = per_engine(old, "wideband", clips) if old else {}
        people.append(run["conditions"]["wideband"]["people"]["mean_p_human"])
        for e, ps in eng["wideband"].items():
            cells = []
            for c in conds:
                q = eng[c].get(e, [])
                one = {"conditions": {c: {"dialogues": [x for x in run["conditions"][c]["dialogues"]
                                                         if x["label"] == "human" or x["system"] == e]}}}
                auc = pooled_auc(one, c, clips)
                cells.append((f"{floor2(sum(q) / len(q))} | {floor2(sum(p < 0.5 for p in q) / len(q))}" if q else "– | –")
                             + f" | {'–' if auc is None else floor2(auc)}")
            if old:
                q = old_w.get(e, [])
                cells.append(f"{floor2(sum(q) / len(q))} | {floor2(sum(p < 0.5 for p in q) / len(q))}" if q else "– | –")
            for c in conds:  # the HEURISTIC reading per condition, against that condition's people
                q = eng[c].get(e, [])
                one = {"conditions": {c: {"dialogues": [x for x in run["conditions"][c]["dialogues"]
                                                         if x["label"] == "human" or x["system"] == e]}}}
                cells.append(engine_reading(len(q), sum(q) / len(q), sum(p < 0.5 for p in q) / len(q),
                                            pooled_auc(one, c, clips), run["conditions"][c]["people"]["mean_p_human"])
                             if q else "–")
            cells.append("yes" if engine_vendor(e) in met else "no")
            rows.append((sum(ps) / len(ps), f"| {e} | {batch} | {len(ps)} | " + " | ".join(cells) + " |"))
    head = ["| engine (system) | batch | dialogues | " + " | ".join(
        f"{c}: mean P(human) | {c}: called machine | {c}: ROC-AUC vs people" for c in conds)
        + (f" | before ({before_version}), wideband: mean P(human) | called machine" if before else "")
        + " | reading (HEURISTIC), wideband | reading (HEURISTIC), telephone | vendor met in fitting (other clips) |",
        "|---|---|---|" + "---|---|---|" * len(conds) + ("---|---|" if before else "") + "---|---|---|"]
    return (f"whisper-fitted {version} per commercial engine, on measure-only clips (no head is fitted on these clips), "
            "highest mean P(human) first. Wideband: each dialogue as published (16 kHz); telephone: the same "
            "dialogues through an 8 kHz μ-law line. " + READING_NOTE + " " + VENDOR_NOTE.format(
                met=", ".join(f"{v} ({', '.join(sorted(ss))})" for v, ss in sorted(met.items())))
            + "\n\n" + "\n".join(head + [r for _, r in sorted(rows, key=lambda t: -t[0])])
            + f"\n\nPeople's mean P(human) in these runs (wideband): {', '.join(floor2(x) for x in people)} "
            "(batches 5, 7, 8). An engine with a few dialogues says little; an engine whose mean P(human) is at "
            f"the people's and whose share called machine is low is one {version} cannot tell from a person.{note}\n\n"
            "(from " + ", ".join(f"`benchmarks/results/{n}.json`" for _, n, _ in spec)
            + ("; before: " + ", ".join(f"`{n}.json`" for _, n, _ in before) if before else "") + ")")


READING_NOTE = ("The reading columns are a HEURISTIC summary of each condition's figures: fewer than "
                "5 dialogues: too few to say; mean P(human) at or above the people's (same condition): taken for people "
                "(P(human) says nothing about this engine); called machine in at least 0.8 of its dialogues "
                "with ROC-AUC at least 0.9: mostly called machine; otherwise: partly told apart.")
VENDOR_NOTE = ("\"Vendor met in fitting\": yes when the shipped head's sources (its config.json) hold clips of the "
               "same vendor from other, fit-allowed sources, so the engine's figures are not those of a vendor the "
               "head never met; the vendor is the system name's first word, with aliases (HEURISTIC: `VENDOR_ALIASES` in scripts/doc_figures.py). "
               "Vendors met: {met}.")
VENDOR_ALIASES = {"Gemini": "Google", "Amazon": "Polly", "podcastfy(openai": "OpenAI"}
"""A system name's first word -> the vendor it is (HEURISTIC): Gemini TTS is Google's, Amazon Polly is
Polly, the podcastfy corpus names OpenAI's tts-1-hd as its probable engine (its system column)."""


def engine_vendor(system: str) -> str:
    """The vendor of a commercial engine's system name (``VENDOR_ALIASES``; HEURISTIC)."""
    first = system.split("-")[0]
    return VENDOR_ALIASES.get(first, first)


def fitted_vendors() -> dict[str, set[str]]:
    """Vendor -> the commercial systems of the shipped whisper head's sources (its config.json's
    ``sources`` matched to the rows of ``benchmarks/data/wild_manifest*.csv`` by repo, commit, path
    and licence)."""
    import csv

    cfg = json.loads((HEADS / "whisper-fitted" / "config.json").read_text())
    src = {x.split(": ", 1)[1] for x in cfg.get("sources", []) if ": " in x}
    out: dict[str, set[str]] = {}
    for m in sorted((ROOT / "benchmarks" / "data").glob("wild_manifest*.csv")):
        with m.open() as f:
            for r in csv.DictReader(f):
                if r["label"] == "machine" and r["family"].startswith("commercial") and \
                        f"github:{r['repo']}@{r['commit'][:10]}:{r['source_path']} ({r['licence']})" in src:
                    out.setdefault(engine_vendor(r["system"]), set()).add(r["system"])
    return out


def engine_reading(n: int, mean_p: float, called_machine: float, auc: float | None, people: float) -> str:
    """HEURISTIC one-phrase reading of one engine's wideband figures (``READING_NOTE``)."""
    if n < 5:
        return "too few to say"
    if mean_p >= people:
        return "taken for people"
    if called_machine >= 0.8 and auc is not None and auc >= 0.9:
        return "mostly called machine"
    return "partly told apart"


def fig_commercial_engines() -> str:
    """whisper-fitted 0.2.0 per commercial engine (``_engine_table``); the batch-5 run is v9blend's,
    the same weights as 0.2.0 (sha256 4ae6423b0f8afc7d)."""
    return _engine_table("commercial_engines", "0.2.0", ENGINE_RUNS_020,
                         note=" The batch-5 run is v9blend's, whose weights are 0.2.0's.")


def fig_commercial_engines_030() -> str:
    """whisper-fitted 0.3.0 per commercial engine (``_engine_table``), with 0.2.0's wideband figures
    on the same dialogues beside it."""
    return _engine_table("commercial_engines_030", "0.3.0", ENGINE_RUNS_030, before=ENGINE_RUNS_020,
                         note=" The runs are v11's: the head shipped as 0.3.0 (the same weight files; its config differs in version and validity text).")


def fig_wild_batch10_040() -> str:
    """The shipped head (0.4.0) on the tenth wild batch: 7 systems no head has met, measure-only,
    as fixed before the run in ``benchmarks/experiments/batch10/README.md`` (M1 machines, M2 ROC-AUC
    against the stored people dialogues of the same head). Rounded DOWN (``_floor2``)."""
    d = _floor2()
    path = RESULTS / "judge_wild_measure_only_batch10_040.json"
    if not path.exists():
        return "No stored run (the command in `benchmarks/experiments/batch10/README.md`)."
    r = json.loads(path.read_text())
    conds = list(r["conditions"])
    from collections import defaultdict

    def machines(cond, keep=lambda x: True):
        return [x for x in r["conditions"][cond]["dialogues"] if x["label"] == "machine" and x["p"] is not None
                and keep(x)]

    def called_human(xs):
        return sum(x["p"] >= 0.5 for x in xs) / len(xs) if xs else None

    def f(v):
        return "–" if v is None else d(v)

    systems = defaultdict(dict)
    for c in conds:
        for x in machines(c):
            systems[(x["family"], x["system"])].setdefault(c, []).append(x)
    head = f"| system (family) | dialogues scored ({' / '.join(conds)}) | " + " | ".join(
        f"{c}: mean P(human) | {c}: called human" for c in conds) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(conds))]
    order = sorted(systems, key=lambda k: -sum(x["p"] for x in systems[k][conds[0]]) / len(systems[k][conds[0]]))
    for fam, sysn in order:
        cells = []
        for c in conds:
            xs = systems[(fam, sysn)].get(c, [])
            cells += [f(sum(x["p"] for x in xs) / len(xs) if xs else None), f(called_human(xs))]
        n = " / ".join(str(len(systems[(fam, sysn)].get(c, []))) for c in conds)
        lines.append(f"| {sysn} ({fam}) | {n} | " + " | ".join(cells) + " |")
    pooled = []
    for c in conds:
        cs = r["conditions"][c]
        ms = machines(c)
        no_zh = machines(c, lambda x: x.get("english", True))
        pooled.append(
            f"{c}: machines' mean P(human) {f(cs['machines']['mean_p_human'])} (bar ≤ 0.3: "
            f"{'met' if cs['machines']['mean_p_human'] <= 0.3 else 'not met'}), called human "
            f"{f(called_human(ms))} of {len(ms)} dialogues; without the Mandarin FireRedTTS "
            f"{f(sum(x['p'] for x in no_zh) / len(no_zh))}; ROC-AUC against the people {f(cs['pooled_auc_machines_vs_people'])} "
            f"(bar ≥ 0.9: {'met' if cs['pooled_auc_machines_vs_people'] >= 0.9 else 'not met'}), people's mean P(human) "
            f"{f(cs['people']['mean_p_human'])}")
    pf = r.get("people_from", {}).get("file", "?")
    return ("\n".join(lines) + "\n\n" + "; ".join(pooled) + ". The people are the "
            f"{r['conditions'][conds[0]]['people']['n']} people dialogues of the stored run of the same head "
            f"(`{pf}`, same weights, checked): a two-run figure. Head weights `{r.get('head_weights_sha256_16')}`, "
            f"frame readout `{r.get('frame_readout_sha256_16')}`.\n\n(from `benchmarks/results/{path.name}`, "
            f"written by `{r['command']}`, commit {str(r.get('commit'))[:10]})")


def fig_commercial_engines_040() -> str:
    """whisper-fitted 0.4.0 per commercial engine (``_engine_table``), with 0.3.0's wideband figures
    on the same dialogues beside it."""
    return _engine_table("commercial_engines_040", "0.4.0", ENGINE_RUNS_040, before=ENGINE_RUNS_030, before_version="0.3.0",
                         note=" The runs are v23's: the head shipped as 0.4.0 (the same weight files; its config differs in version and validity text).")


def fig_frame_lofo_r2() -> str:
    """Round 2 of the frame-level experiment (benchmarks/experiments/frame_lofo/README.md): the same
    readouts after the third wild batch (conversational people and conversational neural TTS) joined
    the open rows; the rule's result, and the family round 1 failed on, before and after. Rounded DOWN."""
    d = _floor2()
    r, r1 = _stored("frame_lofo_r2", "judge_frame_lofo_r2", "judge_frame_lofo",
                    how="benchmarks/experiments/frame_lofo/README.md")
    names = {"moments_lr": "the moments readout (baseline)",
             "frame_cnn_stage2": "the CNN over the second block's frames (primary), seed 0",
             "frame_cnn_stage2_s1": "seed 1",
             "frame_cnn": "the CNN over the last stage's frames",
             "moments_lr_wo5": "the baseline refitted on the same folds without the third batch (ablation)",
             "frame_cnn_stage2_wo5": "the primary (seed 0) refitted without the third batch (ablation)"}
    M, M1 = r["models"], r1["models"]
    fams = sorted(M["moments_lr"]["lofo"])
    parts = [f"{names[t]} {d(M[t]['family_mean_auc'])} (pooled {d(M[t]['pooled']['auc'])})" for t in names if t in M]
    w = "commercial-neural-tts"
    moved = "; ".join(f"{t}: {d(M1[t]['lofo'][w]['auc'])} in round 1, {d(M[t]['lofo'][w]['auc'])} in round 2 (mean P(human) "
                      f"people {d(M[t]['lofo'][w]['p_human_h'])}, machines {d(M[t]['lofo'][w]['p_human_m'])})"
                      for t in names if t in M and t in M1 and "wo" not in t)
    c = "conversational-neural-tts"
    conv = "; ".join(f"{t} {d(M[t]['lofo'][c]['auc'])}" for t in names if t in M and c in M[t]["lofo"])
    rule = r.get("rule", {})
    one_seed = " (one seed, for information: the rule reads the seed mean)"
    verdicts = "; ".join(f"{t}{one_seed if t.startswith('frame_cnn_stage2') and 'mean of' not in t else ''}: "
                         f"{'met' if v['met'] else 'not met'} (mean {v['d_family_mean']:+.3f}, pooled "
                         f"{v['d_pooled']:+.3f}, worst family change {v['worst_change']:+.3f} ({v['worst_family']})"
                         + (f", lowest family {d(v['lowest_family_auc'])} ({v['lowest_family']})" if "lowest_family" in v else "")
                         + ")" for t, v in rule.items() if "_wo" not in t)
    return (f"Round 2 ({r['n_dialogues']} open dialogues, {len(fams)} held-out families, the third wild batch "
            "added), encoder features only, split Platt, mean per-family ROC-AUC: " + "; ".join(parts)
            + f". The family round 1 failed on, {w}, ROC-AUC (not like-for-like across rounds: the folds and "
            f"held-out people differ): {moved}. The new held-out family {c}: {conv}. "
            "The round-2 rule (against the baseline, on the primary's mean over its seeds: mean over families "
            "at least 0.05 higher, pooled higher, no family more than 0.05 lower, no family below 0.5): "
            + verdicts + ". Figures rounded down; changes to three decimals (rounded to nearest).\n\n"
            "(from `benchmarks/results/judge_frame_lofo_r2.json` and `judge_frame_lofo.json`)")


def _rule_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("refit_rule", ROOT / "benchmarks/experiments/refit_v6/rule.py")
    rule = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rule)
    return rule


def fig_frame_wild_r3() -> str:
    """Round 3 of the frame-level experiment (benchmarks/experiments/frame_lofo/README.md): the stage-2
    CNN trained once on the open rows, and its log-odds mean with 0.2.0 (exploratory), against 0.2.0
    on the four measure-only yardsticks, per condition. ROC-AUC to three decimals as the rule reads them."""
    (r,) = _stored("frame_wild_r3", "judge_frame_wild_r3", how="benchmarks/experiments/frame_lofo/README.md, round 3")
    rows = ["| readout | 0.2.0 | stage-2 CNN (mean of 2 seeds) | log-odds mean of both (exploratory) |",
            "|---|---|---|---|"]
    for name, v in r["readouts"].items():
        rows.append(f"| {name} | {v['0.2.0']:.3f} | {v['cnn (seed mean)']:.3f} | {v['log-odds mean']:.3f} |")
    c, b = r["rule cnn (seed mean)"], r["rule log-odds mean"]
    return ("\n".join(rows) + f"\n\nThe rule (the CNN at least 0.2.0 on every readout, mean gain at least 0.03): "
            f"{'met' if c['met'] else 'not met'} (worst {c['worst']:+.3f}, mean {c['mean']:+.3f}). The log-odds mean, "
            f"chosen after this table was seen: worst {b['worst']:+.3f}, mean {b['mean']:+.3f}; this table is not "
            "evidence for it (its own rule: v11).\n\n(from `benchmarks/results/judge_frame_wild_r3.json`)")


def fig_lofo_split_caveat() -> str:
    """The CNN's LOFO figures under two draws of the calibration split (refit_v6/README.md, "v13 result";
    seed 0): round 2's split against v12's split without any extra row, alone and blended with the v5
    fold heads; v11's S1 part (c) read on both."""
    (r,) = _stored("lofo_split_caveat", "judge_lofo_split_control",
                   how="benchmarks/experiments/refit_v6/v12_lofo.py --split-control")
    m, w = r["mean"], r["worst_family_change_vs_v5"]
    rows = ["| seed 0, on round 2's folds | mean per-family ROC-AUC | pooled | people / machines P(human) | worst family vs v5 |",
            "|---|---|---|---|---|"]
    names = {"v5": "v5 fold heads", "cnn_v11_split": "CNN, round 2's split (v11's)",
             "cnn_v12_split_no_extra": "CNN, another split (v12's), no extra row", "cnn_v12": "CNN, v12 (its split, extra rows)",
             "blend_v11_split": "blend, round 2's split", "blend_v12_split_no_extra": "blend, the other split"}
    for k, label in names.items():
        rows.append(f"| {label} | {m[k]:.3f} | {r['pooled'][k]:.3f} | {r['people'][k]:.2f} / {r['machines'][k]:.2f} | {w[k]:+.3f} |")
    c_other = w["blend_v12_split_no_extra"] >= -0.05
    return ("\n".join(rows) + "\n\nv11's S1 part (c), no family down by more than 0.05 against v5: "
            f"{'met' if w['blend_v11_split'] >= -0.05 else 'not met'} on round 2's split, "
            f"{'met' if c_other else 'not met'} on the other.\n\n(from `benchmarks/results/judge_lofo_split_control.json`)")


def fig_lofo_draws_v5() -> str:
    """The v5 whisper readout's LOFO table over three draws of the calibration split, under each way
    of drawing it (``judge_lofo.py --calib-split voice|family|family-keep-small --calib-seed 0|1|2``,
    combined by ``benchmarks/lofo_draws.py``): per held-out family the mean ROC-AUC over the draws
    with its range, then the mean per-family and the pooled ROC-AUC. Three decimals, as the rules
    compare."""
    splits = [(k, f"lofo_draws_v5_{k}") for k in ("voice", "family", "family-keep-small")]
    got = _stored("lofo_draws_v5", *[n for _, n in splits],
                  how="benchmarks/lofo_draws.py over judge_lofo.py --calib-split SPLIT --calib-seed 0 1 2")
    for r in got:
        if len(r["calib_seeds"]) < 2:
            raise FigureError("lofo_draws_v5: a table needs at least two draws")

    def cell(s: dict) -> str:
        return f"{s['mean']:.3f} ({s['min']:.3f}–{s['max']:.3f})"

    head = [f"`{k}` split: ROC-AUC mean (min–max), {len(r['calib_seeds'])} draws" if i == 0 else
            f"`{k}` split, {len(r['calib_seeds'])} draws" for i, ((k, _), r) in enumerate(zip(splits, got))]
    rows = ["| held-out family | " + " | ".join(head) + " |", "|---|" + "---|" * len(got)]
    for f in sorted(set().union(*(r["families"] for r in got))):
        cells = [r["families"].get(f, {}).get("auc") for r in got]
        rows.append(f"| {f} | " + " | ".join(cell(c) if c else "–" for c in cells) + " |")
    rows.append("| **mean per-family** | " + " | ".join(cell(r["mean_family_auc"]) for r in got) + " |")
    rows.append("| **pooled** | " + " | ".join(cell(r["pooled_auc"]) for r in got) + " |")

    def means(r: dict, k: str) -> float:
        vals = [v[k]["mean"] for v in r["families"].values() if k in v]
        return sum(vals) / len(vals)

    rows.append("| people / machines mean P(human), averaged over families | "
                + " | ".join(f"{means(r, 'p_human_h'):.2f} / {means(r, 'p_human_m'):.2f}" for r in got) + " |")
    spread = "; ".join(
        f"`{k}` {w:.3f} ({f})" for (k, _), r in zip(splits, got)
        for f, w in [max(((f, v["auc"]["max"] - v["auc"]["min"]) for f, v in r["families"].items()), key=lambda t: t[1])])
    extra = f"\n\nThe widest range of one family's ROC-AUC over the draws of one split: {spread}."
    if len(got) > 2:
        base, new = got[0], got[2]
        d = {f: new["families"][f]["auc"]["mean"] - base["families"][f]["auc"]["mean"]
             for f in new["families"] if f in base["families"]}
        lo, hi = min(d.items(), key=lambda t: t[1]), max(d.items(), key=lambda t: t[1])
        extra += (f" Against the `voice` split, `{splits[2][0]}` moves the mean per-family ROC-AUC by "
                  f"{new['mean_family_auc']['mean'] - base['mean_family_auc']['mean']:+.3f} and the pooled by "
                  f"{new['pooled_auc']['mean'] - base['pooled_auc']['mean']:+.3f} (means over the draws); per family from "
                  f"{lo[1]:+.3f} ({lo[0]}) to {hi[1]:+.3f} ({hi[0]}).")
    stored, same = _stored("lofo_draws_v5", "judge_lofo_protocol_v5", "lofo_draws_v5/v5_voice_s0",
                           how="the stored v5 run, and this corpus's voice-split draw with calibration seed 0")
    files = ", ".join(f"`benchmarks/results/{n}.json`" for _, n in splits)
    return ("\n".join(rows) + extra + f"\n\nThe stored v5 run (`judge_lofo_protocol_v5.json`, the corpus build it was run on): "
            f"pooled ROC-AUC {stored['pooled_auc']:.3f}; the rebuilt corpus, the same command and draw (`voice`, "
            f"calibration seed 0): {same['pooled_auc']:.3f}.\n\n(from {files} and the "
            f"{3 * len(splits)} runs in `benchmarks/results/lofo_draws_v5/`)")


def _split_s1(fig: str, name: str, rule: str, diagnostic: bool = False) -> str:
    """A candidate's S1 read by ``v15_lofo.py`` (v15–v21: benchmarks/experiments/refit_v6/README.md): 0.3.0's
    blend recipe (v5 fold heads and stage-2 CNN fold networks, mean log-odds per row, round 2's folds)
    with both calibrated on the candidate split (v15, v16), or with the CNN trained by another recipe
    on the ``voice`` split (v17–v21: ``candidate_recipe``; v20 on another backbone's frames, v21 two
networks averaged), against the same recipe on the ``voice``
    split, each figure a mean over the calibration draws with its range, and the rule's parts as
    ``v15_lofo.py`` read them, from ``benchmarks/results/NAME.json``. Three decimals, as the rule compares."""
    (r,) = _stored(fig, name, how=f"benchmarks/experiments/refit_v6/v15_lofo.py, README.md {rule}")
    n, cand, recipe = len(r["seeds"]), r.get("candidate_split", "family-keep-small"), r.get("candidate_recipe", "")
    cand_label = f"CNN recipe `{recipe}`, `voice` split" if recipe else f"`{cand}` split"

    def cell(s: dict, nd: int = 3) -> str:
        return f"{s['mean']:.{nd}f} ({s['min']:.{nd}f}–{s['max']:.{nd}f})"

    rows = [f"| held-out family (round 2's folds) | blend, `voice` split: ROC-AUC mean (min–max), {n} draws "
            f"| blend, {cand_label}, {n} draws | change of the means |", "|---|---|---|---|"]
    for f, v in sorted(r["families"].items(), key=lambda kv: -(kv[1]["candidate"]["mean"] - kv[1]["base"]["mean"])):
        rows.append(f"| {f} | {cell(v['base'])} | {cell(v['candidate'])} | {v['candidate']['mean'] - v['base']['mean']:+.3f} |")
    for key, label in (("mean_family_auc", "**mean per-family**"), ("pooled_auc", "**pooled**")):
        b, c = r[key]["base"], r[key]["candidate"]
        rows.append(f"| {label} | {cell(b)} | {cell(c)} | {c['mean'] - b['mean']:+.3f} |")
    rows.append(f"| people / machines mean P(human) | {r['people']['base']['mean']:.2f} / {r['machines']['base']['mean']:.2f} "
                f"| {r['people']['candidate']['mean']:.2f} / {r['machines']['candidate']['mean']:.2f} | |")
    comp = r["components"]
    inputs = "; ".join(f"{label} {comp['base/' + k]['mean_family_auc']['mean']:.3f} → "
                       f"{comp['candidate/' + k]['mean_family_auc']['mean']:.3f}"
                       for k, label in (("readout", "the v5 readout"), ("cnn", "the frame network")))
    parts = "; ".join(f"{p['part']}: {'met' if p['met'] else 'NOT met'} ({p['figure']})" for p in r["parts"])
    verdict = ("Every S1 part met: S2 (the live unit) is next." if r["met"]
               else "Not every S1 part met: no S2 run, 0.3.0 stays the shipped head.")
    said = (f"A diagnostic with no rule attached (calibration seeds {r['seeds']}); it decides nothing."
            if diagnostic else f"The rule (means over the draws, calibration seeds {r['seeds']}): {parts}. {verdict}")
    return ("\n".join(rows) + f"\n\n{said}"
            f"\n\nDiagnostic, outside the rule (`components`): each input alone, mean per-family ROC-AUC, "
            f"{'the baseline' if recipe else '`voice`'} → {cand_label}: {inputs}; the blend on the `voice` split "
            f"{r['mean_family_auc']['base']['mean']:.3f}."
            f"\n\n(from `benchmarks/results/{name}.json`, written by `" + r["command"] + "`)")


def fig_refit_v15() -> str:
    """v15's S1: the ``family-keep-small`` split (``_split_s1``)."""
    return _split_s1("refit_v15", "judge_lofo_v15_s1", "v15")


def fig_refit_v16() -> str:
    """v16's S1: the ``family-out`` split (``_split_s1``)."""
    return _split_s1("refit_v16", "judge_lofo_v16_s1", "v16")


def fig_refit_v17() -> str:
    """v17's S1: the CNN on per-dialogue centred frames (``_split_s1``)."""
    return _split_s1("refit_v17", "judge_lofo_v17_s1", "v17")


def fig_refit_v18() -> str:
    """v18's S1: the CNN trained with SpecAugment-style masks (``_split_s1``)."""
    return _split_s1("refit_v18", "judge_lofo_v18_s1", "v18")


def fig_refit_v19() -> str:
    """v19's S1: the CNN trained 6 epochs, not 12 (``_split_s1``)."""
    return _split_s1("refit_v19", "judge_lofo_v19_s1", "v19")


def fig_refit_v20() -> str:
    """v20's S1: the CNN on Whisper base's stage-3 frames (``_split_s1``)."""
    return _split_s1("refit_v20", "judge_lofo_v20_s1", "v20")


def fig_refit_v21() -> str:
    """v21's S1: the tiny and the base networks averaged (``_split_s1``)."""
    return _split_s1("refit_v21", "judge_lofo_v21_s1", "v21")


def fig_refit_v21_control() -> str:
    """v21's control, a diagnostic: the tiny network and a second tiny network (seed 1) averaged."""
    return _split_s1("refit_v21_control", "judge_lofo_v21_control", "v21's control", diagnostic=True)


def fig_refit_v11() -> str:
    """v11 (0.2.0 ⊕ the stage-2 CNN) under its rule (benchmarks/experiments/refit_v6/README.md, v11): S1's
    LOFO table (v5 fold heads vs the blend with the CNN's fold networks, round 2's folds), S2's eight
    readouts against 0.2.0 at the user's unit, S3's speed; as ``rule.py --candidate v11`` reads them.
    AUCs to three decimals as the rule compares them."""
    rule = _rule_module()
    names = [rule.V11_S1] + [n for _, a, b, _ in rule.V11_RUNS for n in (a, b)] + [rule.V11_SPEED]
    got = dict(zip(names, _stored("refit_v11", *names, how="benchmarks/experiments/refit_v6/README.md, v11")))
    runs = [(name, got[a], got[b]) for name, a, b, _ in rule.V11_RUNS]
    bad = rule.v11_inputs(runs)
    if bad:
        raise FigureError(f"refit_v11: the stored runs cannot be compared: {'; '.join(bad)}")
    s1 = got[rule.V11_S1]
    fams = ["| held-out family (round 2's folds) | v5 fold heads | stage-2 CNN fold networks | both, log-odds mean |",
            "|---|---|---|---|"]
    for f, v in sorted(s1["families"].items(), key=lambda kv: -kv[1]["v11"]):
        fams.append(f"| {f} | {v['v5']:.3f} | {v['cnn']:.3f} | {v['v11']:.3f} |")
    fams.append(f"| **mean over families** | {s1['mean']['v5']:.3f} | {s1['mean']['cnn']:.3f} | {s1['mean']['v11']:.3f} |")
    fams.append(f"| pooled | {s1['pooled']['v5']:.3f} | {s1['pooled']['cnn']:.3f} | {s1['pooled']['v11']:.3f} |")
    fams.append(f"| people's / machines' mean P(human) | {s1['people']['v5']:.2f} / {s1['machines']['v5']:.2f} | "
                f"{s1['people']['cnn']:.2f} / {s1['machines']['cnn']:.2f} | {s1['people']['v11']:.2f} / {s1['machines']['v11']:.2f} |")
    parts = rule.v11_parts(s1, runs, got[rule.V11_SPEED])
    ok = all(p[1] for p in parts)
    return ("\n".join(fams) + "\n\nThe rule: " + "; ".join(f"{n}: {'met' if m else 'NOT met'} ({f})" for n, m, f in parts)
            + (". Every part met: v11 ships." if ok else ". Not every part met: 0.2.0 stays the shipped head.")
            + "\n\n(from " + ", ".join(f"`benchmarks/results/{n}.json`" for n in names)
            + ", read by `benchmarks/experiments/refit_v6/rule.py --candidate v11`)")


def _against_030_rows(rule, spec, runs, cand: str) -> list[str]:
    """Markdown rows of a candidate's yardstick readouts against 0.3.0 (``rule._readout`` with each
    yardstick's reading in ``spec``), with people's and machines' mean P(human)."""
    reading = {name: how for name, _, _, how in spec}
    rows = [f"| yardstick (measure-only), condition | 0.3.0 ROC-AUC | {cand} ROC-AUC | change | people's mean P(human) "
            f"0.3.0 → {cand} | machines' mean P(human) 0.3.0 → {cand} |", "|---|---|---|---|---|---|"]
    for name, ship, c in runs:
        for cond in ("wideband", "telephone"):
            x, y = rule._readout(c, cond, reading[name]), rule._readout(ship, cond, reading[name])
            cs, cc = ship["conditions"][cond], c["conditions"][cond]
            rows.append(f"| {name}, {cond} | {y:.3f} | {x:.3f} | {x - y:+.3f} | {cs['people']['mean_p_human']:.2f} → "
                        f"{cc['people']['mean_p_human']:.2f} | {cs['machines']['mean_p_human']:.2f} → {cc['machines']['mean_p_human']:.2f} |")
    return rows


def _against_030_read(cand: str, spec, speed: str, extra: tuple, inputs, parts_of):
    """A 0.3.0-baseline candidate's stored runs (``spec``: the rule's (yardstick, 0.3.0's run, the
    candidate's run, reading) tuples), its speed run and ``extra`` stored runs, checked by the rule's
    ``inputs`` and read by its ``parts_of``: (names, got, rows, parts, ok, rt)."""
    rule = _rule_module()
    names = [n for _, a, b, _ in spec for n in (a, b)] + [speed, *extra]
    got = dict(zip(names, _stored(f"refit_{cand}", *names, how=f"benchmarks/experiments/refit_v6/README.md, {cand}")))
    runs = [(name, got[a], got[b]) for name, a, b, _ in spec]
    bad = inputs(runs)
    if bad:
        raise FigureError(f"refit_{cand}: the stored runs cannot be compared: {'; '.join(bad)}")
    parts = parts_of(None, runs, got[speed])
    rt = lambda n: got[n].get("result", got[n])["long_call"]["realtime_factor"]  # noqa: E731
    return names, got, _against_030_rows(rule, spec, runs, cand), parts, all(p[1] for p in parts), rt


def fig_refit_v22() -> str:
    """v22 (0.3.0 with its second tiny network replaced by a Whisper base network) under its rule
    (benchmarks/experiments/refit_v6/README.md, v22): S2's eight readouts against 0.3.0 at the
    user's unit with people's and machines' mean P(human), S3's speed (the first measurement and
    the one after the output-preserving speed-ups, each with 0.3.0 just before it), as
    ``rule.py --candidate v22`` reads them. AUCs to three decimals as the rule compares them."""
    rule = _rule_module()
    first = ("judge_whisper_speed_030_before_v22_first", "judge_whisper_speed_v22_first",
             "judge_whisper_speed_030_before_v22")
    names, got, rows, parts, ok, rt = _against_030_read("v22", rule.V22_RUNS, rule.V22_SPEED, first,
                                                        rule.v22_inputs, rule.v22_parts)
    speed = (f"S3 was measured twice on one machine (10-minute call, 2 cores), each time with 0.3.0 just before: first "
             f"{rt(first[1]):g}× (0.3.0 {rt(first[0]):g}×), below the bar; then, after three speed-ups that leave the "
             f"scores as they were (a float32 erf in the encoder's GELU, windows queued ahead of the judge, turn readouts "
             f"on a second thread), {rt(rule.V22_SPEED):g}× (0.3.0 {rt(first[2]):g}×). The rule reads the second.")
    return ("\n".join(rows) + "\n\n" + speed + "\n\nThe rule: "
            + "; ".join(f"{n}: {'met' if m else 'NOT met'} ({f})" for n, m, f in parts)
            + (". Every part met: v22 ships." if ok else ". Not every part met: 0.3.0 stays the shipped head.")
            + "\n\n(from " + ", ".join(f"`benchmarks/results/{n}.json`" for n in names)
            + ", read by `benchmarks/experiments/refit_v6/rule.py --candidate v22`)")


def fig_refit_v23() -> str:
    """v23 (0.3.0's two tiny networks plus v22's base network, each member ⅓) under its rule
    (benchmarks/experiments/refit_v6/README.md, v23): Y5 (the ninth batch, gathered after the rule)
    and the guard's eight readouts of Y1-Y4 against 0.3.0 at the user's unit, with people's and
    machines' mean P(human), and S3 with 0.3.0 just before it, as ``rule.py --candidate v23`` reads
    them. AUCs to three decimals as the rule compares them."""
    rule = _rule_module()
    before = "judge_whisper_speed_030_before_v23"
    names, got, rows, parts, ok, rt = _against_030_read("v23", rule.V23_RUNS, rule.V23_SPEED, (before,),
                                                        rule.v23_inputs, rule.v23_parts)
    speed = (f"S3 (10-minute call, 2 cores): v23 {rt(rule.V23_SPEED):g}× real time, 0.3.0 {rt(before):g}× just before "
             f"it on the same machine.")
    return ("Y5 is the evidence (its machines were gathered after the rule); Y1–Y4 had been read by v22 and are a "
            "guard only.\n\n" + "\n".join(rows) + "\n\n" + speed + "\n\nThe rule: "
            + "; ".join(f"{n}: {'met' if m else 'NOT met'} ({f})" for n, m, f in parts)
            + (". Every part met: v23 ships." if ok else ". Not every part met: 0.3.0 stays the shipped head.")
            + "\n\n(from " + ", ".join(f"`benchmarks/results/{n}.json`" for n in names)
            + ", read by `benchmarks/experiments/refit_v6/rule.py --candidate v23`)")


def _wild_sources(manifest: str, gatherer: str) -> str:
    """A wild batch's sources table (docs/corpus.md), from its stored manifest
    ``benchmarks/data/MANIFEST`` by ``benchmarks/judge_wild.py``'s ``corpus_table``."""
    import csv
    import importlib.util

    path = ROOT / "benchmarks" / "data" / manifest
    if not path.exists():
        raise FigureError(f"wild sources: no {path.relative_to(ROOT)} (scripts/{gatherer} writes it)")
    spec = importlib.util.spec_from_file_location("judge_wild", ROOT / "benchmarks" / "judge_wild.py")
    jw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jw)
    with path.open() as f:
        rows = list(csv.DictReader(f))
    return jw.corpus_table(rows) + f"\n\n(from `benchmarks/data/{manifest}`)"


def fig_wild_sources_2() -> str:
    """The second batch's sources table (``_wild_sources``)."""
    return _wild_sources("wild_manifest_2.csv", "gather_wild_corpus_2.py")


def fig_wild_sources_3() -> str:
    """The third batch's sources table: conversational people and conversational neural TTS."""
    return _wild_sources("wild_manifest_3.csv", "gather_wild_corpus_3.py")


def fig_wild_sources_4() -> str:
    """The fourth batch's sources table: more conversational people, Gemini TTS."""
    return _wild_sources("wild_manifest_4.csv", "gather_wild_corpus_4.py")


def fig_wild_sources_5() -> str:
    """The fifth batch's sources table: commercial neural TTS, measure-only."""
    return _wild_sources("wild_manifest_5.csv", "gather_wild_corpus_5.py")


def fig_wild_sources_6() -> str:
    """The sixth batch's sources table: commercial TTS that may be fitted on (and one measure-only)."""
    return _wild_sources("wild_manifest_6.csv", "gather_wild_corpus_6.py")


def fig_wild_sources_7() -> str:
    """The seventh batch's sources table: more commercial TTS that may be fitted on (Azure measure-only)."""
    return _wild_sources("wild_manifest_7.csv", "gather_wild_corpus_7.py")


def fig_wild_sources_8() -> str:
    """The eighth batch's sources table: vendors' own output that may be fitted on; Inworld, ElevenLabs v3,
    Rime and LMNT measure-only."""
    return _wild_sources("wild_manifest_8.csv", "gather_wild_corpus_8.py")


def fig_wild_sources_9() -> str:
    """The ninth batch's sources table: neural TTS and speech-LM systems no batch had, all measure-only."""
    return _wild_sources("wild_manifest_9.csv", "gather_wild_corpus_9.py")


def fig_wild_sources_10() -> str:
    """The tenth batch's sources table: neural TTS, voice-conversion and speech-LM systems no batch had,
    all measure-only."""
    return _wild_sources("wild_manifest_10.csv", "gather_wild_corpus_10.py")


def _doc_first_line(path: Path) -> str:
    m = re.search(r'"""(.*?)(\n\n|""")', path.read_text(), re.S)
    return " ".join(m.group(1).replace("``", "`").split()) if m else ""


def fig_benchmarks_table() -> str:
    rows = ["| script | what it measures | stored result |", "|---|---|---|"]
    for p in sorted((ROOT / "benchmarks").glob("*.py")):
        name = p.stem
        r = _result(name)
        in_heads = [h for h, cfg in _heads() if any(f"benchmarks/{name}.py" in str((_validity(cfg) or {}).get(k, ""))
                                                    for k in ("command", "summary"))]
        files = sorted({f.name for f in RESULTS.glob(f"{name}.json")} | {f.name for f in RESULTS.glob(f"{name}_*.json")})
        if r is not None and name in RENDER:
            stored = RENDER[name](r["result"]) + f" (`results/{name}.json`: {r.get('date_utc', '?')[:10]}, commit {r.get('commit', '?')}, {r.get('machine', '?')})"
        elif in_heads:
            stored = f"in the config of {', '.join(f'`{h}`' for h in in_heads)}: [judge.md](judge.md)"
        elif files:  # stored runs, read where the docs quote them
            shown = ", ".join(f"`results/{f}`" for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            docs = [d for d in sorted((ROOT / "docs").glob("*.md")) if d.name != "benchmarks.md"
                    and any(f in d.read_text(encoding="utf-8") for f in files)]
            where = " and ".join(f"[{d.name}]({d.name})" for d in docs)
            stored = f"{shown} ({'quoted in ' + where if docs else 'not quoted in the docs'})"
        else:
            stored = "none stored"
        rows.append(f"| `benchmarks/{name}.py` | {_one_line(_doc_first_line(p), 200).replace('|', '/')} | {stored} |")
    return "\n".join(rows)


FIGURES: dict[str, Callable[[], str]] = {
    "judge_validity_short": fig_judge_validity_short,
    "heads_table": fig_heads_table,
    "heads_validity": fig_heads_validity,
    "human_references": fig_human_references,
    "test_times": fig_test_times,
    "meter_example": fig_meter_example,
    "benchmarks_table": fig_benchmarks_table,
    "timing_tolerance": fig_timing_tolerance,
    "timing_tolerance_narrowband": fig_timing_tolerance_narrowband,
    "telephone_timing": fig_telephone_timing,
    "loud_timing": fig_loud_timing,
    "wild_batch10_040": fig_wild_batch10_040,
    "judge_spread": fig_judge_spread,
    "verdict_settle": fig_verdict_settle,
    "data_batch2": fig_data_batch2,
    "frame_lofo": fig_frame_lofo,
    "frame_lofo_r2": fig_frame_lofo_r2,
    "data_batch3": fig_data_batch3,
    "refit_v6": fig_refit_v6,
    "refit_v7": fig_refit_v7,
    "refit_v7blend": fig_refit_v7blend,
    "refit_v8blend": fig_refit_v8blend,
    "commercial_measure_only": fig_commercial_measure_only,
    "codec_cue": fig_codec_cue,
    "refit_v9blend": fig_refit_v9blend,
    "refit_v10blend": fig_refit_v10blend,
    "frame_wild_r3": fig_frame_wild_r3,
    "refit_v11": fig_refit_v11,
    "refit_v22": fig_refit_v22,
    "refit_v23": fig_refit_v23,
    "commercial_engines_040": fig_commercial_engines_040,
    "refit_v15": fig_refit_v15,
    "refit_v16": fig_refit_v16,
    "refit_v17": fig_refit_v17,
    "refit_v18": fig_refit_v18,
    "refit_v19": fig_refit_v19,
    "refit_v20": fig_refit_v20,
    "refit_v21": fig_refit_v21,
    "refit_v21_control": fig_refit_v21_control,
    "lofo_split_caveat": fig_lofo_split_caveat,
    "lofo_draws_v5": fig_lofo_draws_v5,
    "commercial_engines": fig_commercial_engines,
    "commercial_engines_030": fig_commercial_engines_030,
    "commercial_shipped": fig_commercial_shipped,
    "commercial_transfer": fig_commercial_transfer,
    "wild_sources_2": fig_wild_sources_2,
    "wild_sources_3": fig_wild_sources_3,
    "wild_sources_4": fig_wild_sources_4,
    "wild_sources_5": fig_wild_sources_5,
    "wild_sources_6": fig_wild_sources_6,
    "wild_sources_7": fig_wild_sources_7,
    "wild_sources_8": fig_wild_sources_8,
    "wild_sources_9": fig_wild_sources_9,
    "wild_sources_10": fig_wild_sources_10,
}

# ---------------------------------------------------------------- docs


def doc_paths() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def regenerate(text: str, doc: str, cache: dict[str, str]) -> str:
    """``text`` with every figure block rewritten from its source."""
    n_open = len(OPEN.findall(text))
    n_blocks = len(BLOCK.findall(text))
    if n_open != n_blocks:
        raise FigureError(f"{doc}: {n_open} '<!-- fig:NAME -->' markers but {n_blocks} closed blocks; "
                          "close each block with '<!-- /fig -->' on its own line")

    def sub(m: re.Match) -> str:
        name = m.group(2)
        if name not in FIGURES:
            raise FigureError(f"{doc}: unknown figure block {name!r}; known: {', '.join(sorted(FIGURES))} "
                              "(add a function to FIGURES in scripts/doc_figures.py)")
        if name not in cache:
            cache[name] = FIGURES[name]().rstrip("\n") + "\n"
        return m.group(1) + cache[name] + m.group(4)

    return BLOCK.sub(sub, text)


MEASURED = re.compile(
    r"AUC|accuracy|real[ -]time|\bRSS\b|\bp(?:50|90|95|99)\b|median|\bWER\b|\bRTF\b|µs|\brecall\b|"
    r"\b[MG]B\b|\d\s?×(?!\s?\d)|≈|~\s?\d|\babout \d|%|P\(human\) (?:of )?\d|\bms per\b|"
    r"\bminutes? on\b|\bseconds? on\b")
"""Words that mark a measured figure on the same line as a number (HEURISTIC: a lint, not a parser)."""


def lint(text: str, doc: str) -> list[str]:
    """Lines outside figure blocks, code blocks and inline code that hold a measured figure."""
    problems = []
    text = BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    in_code = False
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or "<!--" in line:
            continue
        bare = re.sub(r"`[^`]*`", "", line)
        if not MEASURED.search(bare):
            continue
        rest = MEASURED.sub("", bare)
        rest = re.sub(r"\[[^\]]*\]\([^)]*\)", "", rest)  # link targets
        if re.search(r"\d", rest):
            problems.append(f"{doc}:{i}: a measured figure outside a fig block: {line.strip()[:120]}")
    return problems


def check_or_write(write: bool) -> list[str]:
    problems: list[str] = []
    cache: dict[str, str] = {}
    for p in doc_paths():
        doc = str(p.relative_to(ROOT))
        text = p.read_text()
        new = regenerate(text, doc, cache)
        if new != text:
            if write:
                p.write_text(new)
                print(f"rewrote {doc}")
            else:
                stale = [m.group(2) for m, n in zip(BLOCK.finditer(text), BLOCK.finditer(new)) if m.group(0) != n.group(0)]
                problems.append(f"{doc}: stale figure blocks {', '.join(stale)}: run python scripts/doc_figures.py")
        if doc not in RECORDS:
            problems += lint(new, doc)
    return problems


# ---------------------------------------------------------------- producing stored results


def _meta(command: str) -> dict:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"command": command, "commit": commit,
            "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "machine": f"{os.cpu_count()}-core {os.uname().machine} Linux, load average {os.getloadavg()[0]:.1f} at the start",
            }


def _store(name: str, meta: dict, result: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps({**meta, "result": result}, indent=2, ensure_ascii=False) + "\n")
    print(f"stored benchmarks/results/{name}.json")


def _produce_json_benchmark(name: str, args: list[str], store_as: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.json"
        cmd = [sys.executable, f"benchmarks/{name}.py", *args, "--json", str(out)]
        meta = _meta(" ".join(["python", f"benchmarks/{name}.py", *args]))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run(cmd, cwd=ROOT, env=env, check=True)
        _store(store_as or name, meta, json.loads(out.read_text()))


def _produce_meter_example() -> None:
    sys.path.insert(0, str(ROOT))
    from livejudge.audio import load_call
    from livejudge.judge.model.judge import load_judge
    from livejudge.outputs.meter import render_text
    from livejudge.session import Session, SessionConfig, stream_call

    meta = _meta("replay examples/example_call.wav (judge auto, every window) and render the meter at 80×24 at its end")
    s = Session(SessionConfig(judge_mode="every"), judge=load_judge("auto"))
    stream_call(s, load_call("examples/example_call.wav"))
    text = render_text(s, title="replay example_call.wav", width=80, height=24)
    s.close()
    _store("meter_example", meta, {"text": text})


PRODUCE: dict[str, Callable[[], None]] = {
    "pipeline_speed": lambda: _produce_json_benchmark("pipeline_speed", ["--minutes", "10"]),
    "judge_whisper_speed": lambda: _produce_json_benchmark("judge_whisper_speed", ["--minutes", "10"]),
    "meter_example": _produce_meter_example,
    "verdict_settle": lambda: _produce_json_benchmark("verdict_settle", ["--seeds", "4"]),
    "vad_bounds": lambda: _produce_json_benchmark("vad_bounds", ["--sets", "target"]),
    "vad_bounds_telephone": lambda: _produce_json_benchmark(
        "vad_bounds", ["--sets", "ulaw,ulaw-rec,8k-rec", "--calls", "4"], store_as="vad_bounds_telephone"),
    "vad_bounds_loud": lambda: _produce_json_benchmark(
        "vad_bounds", ["--sets", "loud", "--calls", "6"], store_as="vad_bounds_loud"),
    "vad_bounds_narrowband": lambda: _produce_json_benchmark(
        "vad_bounds", ["--sets", "telephone", "--calls", "4"], store_as="vad_bounds_narrowband"),
}


def record_test_time(mode: str, seconds: float, how: str) -> None:
    r = _result("test_times") or {}
    r.setdefault("machine", "the 2-core development machine (shared)")
    r[mode] = {"seconds": round(float(seconds), 1), "how": how,
               "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "test_times.json").write_text(json.dumps(r, indent=2, ensure_ascii=False) + "\n")
    print("stored benchmarks/results/test_times.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 on a stale block or an unsourced figure")
    ap.add_argument("--produce", choices=sorted(PRODUCE), help="run a benchmark recipe and store its result")
    ap.add_argument("--record-test-time", nargs=2, metavar=("MODE", "SECONDS"),
                    help="store a measured test-suite time (MODE fast|full)")
    ap.add_argument("--how", default="", help="with --record-test-time: how it was measured")
    a = ap.parse_args(argv)
    if a.produce:
        t0 = time.perf_counter()
        PRODUCE[a.produce]()
        print(f"{a.produce}: {time.perf_counter() - t0:.0f} s")
        return 0
    if a.record_test_time:
        mode, secs = a.record_test_time
        if mode not in ("fast", "full") or not a.how:
            ap.error("--record-test-time MODE SECONDS needs MODE fast|full and --how TEXT")
        record_test_time(mode, float(secs), a.how)
        return 0
    try:
        problems = check_or_write(write=not a.check)
    except FigureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
