"""CI gates on a call's summary metrics: ``--fail-if 'latency_p90_s>1.2'``, and JUnit XML.

A gate names a metric, a comparison and a threshold; it *fails* when the comparison is true
for the measured value (``latency_p90_s>1.2`` fails a call whose p90 latency exceeds 1.2 s).
A gate on a metric the call did not measure (no user→agent transition, judge off) also fails,
with the reason "not measured" and why (``why_not_measured``): a CI gate that cannot be checked
must not pass silently. A gate written ``'yield_mean_s>0.5 if measured'`` passes such a call
instead (a call without a barge-in has no yield time to hold to a bound).

Metrics (``call_metrics``): every number in the result's ``summary`` (``latency_p90_s``,
``mean_p_human``, ``barge_in_count``, ``overlap_ratio``...), ``duration_s``, ``dim_<id>``:
the mean score (1–5) of dimension ``<id>`` over the judged windows where it was not gated, and
``input_health_<code>_count``: how many of the input-health warnings (``source.input_health``)
carry one code of ``timing.health.WARNING_CODES`` (``input_health_channel_swap_count>0`` fails
a swapped recording and lets a removed DC offset pass; ``input_health_warning_count`` counts all).
Counts stay integers. A gate may also name an alias (``p_human_mean`` = ``mean_p_human``);
``evaluate`` resolves it, so summary.json and compare carry each figure once.

A call whose judge service could not judge most of its windows (``judge_unavailable_windows``
above ``judged_windows``: the service died mid-call) has its P(human) metrics (``mean_p_human``,
``last_p_human``, ``dim_<id>``) as not measured, so a gate on them fails rather than passing on the
few windows judged before the outage (``mostly_unjudged``); ``judge_unavailable_windows>0`` fails a
call with any window the service could not judge.

For a single call the gates apply to that call; for a batch (``score DIR --out-dir``) they
apply to the medians over the calls that scored (``batch_metrics``), and a gate fails when a
scored call did not measure its metric (``evaluate_batch``), as it fails on one such call: a
median over the calls that did would pass a batch whose agent was silent in most calls. With
``--gate-each`` they apply to every scored call on its own instead (``evaluate_each``): one
failing call fails the batch.

Exit code 3 (``EXIT_GATE``) when a gate fails.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
import re
import statistics
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from livejudge.errors import EXIT_GATE, CLIError  # noqa: F401  (EXIT_GATE re-exported)
from livejudge.outputs.report import dimension_means  # noqa: F401  (call_metrics reads it; importable from here)

OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
       "<": operator.lt, ">": operator.gt}

ALIASES = {"p_human_mean": "mean_p_human", "p_human_last": "last_p_human"}

_GATE_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
                      r"(\s+if\s+measured)?\s*$")


def known_metrics() -> list[str]:
    """Every metric name a gate or ``compare`` accepts (summary keys, aliases, dimensions)."""
    from livejudge.judge.model.dimensions import DIMENSIONS
    from livejudge.timing.metrics import Summary

    names = [f.name for f in dataclasses.fields(Summary)]
    names += ["duration_s", "mean_p_human", "last_p_human", "judged_windows", "no_evidence_windows",
              "dropped_windows", "judge_unavailable_windows", *JUDGE_WINDOW_METRICS, "user_barge_in_count",
              "input_health_warning_count",
              "echo_gated_s", "narrowband_channel_count", *health_metric_names(),
              *ALIASES]
    names += [f"dim_{d.id}" for d in DIMENSIONS]
    from livejudge.timing.verdicts import metric_names

    names += metric_names()  # per-event verdicts: verdict_<kind>_<outcome>_count, ..._flagged_rate
    return list(dict.fromkeys(names))


def health_metric_names() -> list[str]:
    """``input_health_<code>_count`` for each code of ``timing.health.WARNING_CODES``."""
    from livejudge.timing.health import WARNING_CODES

    return [f"input_health_{c}_count" for c in WARNING_CODES]


def health_counts(doc: dict) -> dict[str, int | None]:
    """``input_health_<code>_count`` of one result document: its ``source.input_health`` warnings
    of each code; all None (not measured) when the document lists no warnings but counted some
    (``summary.input_health_warning_count`` > 0: an older result), zeros when it counted none. Pure."""
    from livejudge.timing.health import WARNING_CODES

    ws = (doc.get("source") or {}).get("input_health")
    if not isinstance(ws, list):
        n = (doc.get("summary") or {}).get("input_health_warning_count")
        return {f"input_health_{c}_count": (0 if n == 0 else None) for c in WARNING_CODES}
    codes = [w.get("code") for w in ws if isinstance(w, dict)]
    return {f"input_health_{c}_count": codes.count(c) for c in WARNING_CODES}


JUDGE_WINDOW_METRICS = ("evidence_coverage",)
"""Summary figures of the judge's windows that are not P(human): a gate on one needs the judge too."""

P_HUMAN_METRICS = ("mean_p_human", "last_p_human")
"""The summary's P(human) metrics (with every ``dim_<id>``): not measured on a ``mostly_unjudged`` call."""


def mostly_unjudged(summary: dict) -> bool:
    """True when a judge service could not judge more of the call's windows than it judged
    (``judge_unavailable_windows`` > ``judged_windows`` in a result's ``summary``): its P(human)
    then comes from a minority of the call (a trial: 1 window with evidence of 22). Pure."""
    unjudged = summary.get("judge_unavailable_windows") or 0
    return unjudged > 0 and unjudged > (summary.get("judged_windows") or 0)


def _is_p_human_metric(name: str) -> bool:
    return name in P_HUMAN_METRICS or name.startswith("dim_")


def call_metrics(doc: dict) -> dict[str, float | None]:
    """The flat metrics of one result document (see module docstring); None = not measured,
    which includes the P(human) metrics of a ``mostly_unjudged`` call."""
    sm = doc.get("summary") or {}
    m: dict[str, float | None] = {}
    for k, v in sm.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, numbers.Integral):  # a count stays a count ("3.0" read as a measurement; summary.json)
            m[k] = int(v)
        elif isinstance(v, numbers.Real) or v is None:
            m[k] = None if v is None or math.isnan(v) else float(v)
    if "user_barge_in_count" not in sm and "barge_in_count" in m:  # results before 0.1.x counted only the user's
        m["user_barge_in_count"] = m["barge_in_count"]
    bcs = doc.get("backchannels")
    if "agent_backchannel_count" not in sm and isinstance(bcs, list):  # older results: from the list
        for ch in ("user", "agent"):
            m[f"{ch}_backchannel_count"] = sum(1 for b in bcs if isinstance(b, dict) and b.get("channel") == ch)
    m["duration_s"] = float(doc["duration_s"]) if doc.get("duration_s") is not None else None
    m.update(health_counts(doc))
    m.update(dimension_means(doc))
    if mostly_unjudged(sm):  # a mean over the few windows judged before the service died is no measurement
        m.update({k: None for k in m if _is_p_human_metric(k)})
    return m


def batch_metrics(per_call: Iterable[dict[str, float | None]]) -> dict[str, float | None]:
    """Median of each metric over calls (calls where it was not measured are left out); a median
    of counts is an integer where it is whole (the median of 2 and 3 counts is 2.5)."""
    per_call = list(per_call)
    keys = list(dict.fromkeys(k for m in per_call for k in m))
    out: dict[str, float | None] = {}
    for k in keys:
        vals = [m[k] for m in per_call if m.get(k) is not None]
        if not vals:
            out[k] = None
            continue
        med = statistics.median(vals)
        # six decimals: the mean of two middle values printed as 1.9729999999999999 in summary.json (a trial)
        out[k] = int(med) if all(isinstance(v, int) for v in vals) and float(med).is_integer() else round(float(med), 6)
    return out


@dataclass(frozen=True)
class Gate:
    """``metric op threshold``: fails when ``value op threshold`` is true."""

    metric: str
    op: str
    threshold: float
    written: str = field(default="", compare=False)  # the number as written ("1.0"), echoed back as given
    if_measured: bool = False  # "... if measured": a call that did not measure the metric passes

    @property
    def text(self) -> str:
        return f"{self.metric}{self.op}{self.written or format(self.threshold, 'g')}" + (" if measured" if self.if_measured else "")


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    value: float | None
    failed: bool
    reason: str


def parse_gate(text: str) -> Gate:
    """Parse ``'latency_p90_s>1.2'``. Raises ValueError with the fix (syntax or unknown metric)."""
    m = _GATE_RE.match(text)
    if not m:
        raise ValueError(f"bad --fail-if {text!r}: write METRIC OP NUMBER, e.g. 'latency_p90_s>1.2' "
                         f"(OP one of {' '.join(OPS)}), optionally followed by 'if measured'")
    name, op, num, if_measured = m.groups()
    if if_measured and name in known_metrics() and not key_optional(ALIASES.get(name, name)):
        raise ValueError(f"bad --fail-if {text!r}: 'if measured' is for metrics a good call may lack (yield_mean_s: "
                         f"no barge-in; verdict_<kind>_flagged_rate: no moment of the kind); {name} missing means "
                         "the call or the judge gave nothing to measure, which a gate should fail: drop 'if measured'")
    if name not in known_metrics():
        import difflib

        # the nearest names first ('latency_p90' → latency_p90_s alone); then same-prefix ones
        known = known_metrics()
        close = _dimension_matches(name) if name.startswith("dim_") else []
        close = close or difflib.get_close_matches(name, known, n=3, cutoff=0.8)
        if not close and name.startswith("dim_"):  # no dimension means it: every id, not the first six
            from livejudge.judge.model.dimensions import DIMENSIONS

            raise ValueError(f"bad --fail-if {text!r}: no dimension {name[4:]!r}; the ids (dim_<id>): "
                             + ", ".join(d.id for d in DIMENSIONS) + " (docs/ci-gates.md)")
        if not close:  # names holding it whole ('p_human' → mean_p_human), then its first word
            close = ([k for k in known if name in k] or [k for k in known if name.split("_")[0] in k.split("_")])[:6]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"bad --fail-if {text!r}: unknown metric {name!r}{hint} "
                         "(metrics: the keys of the result's summary, p_human_mean, dim_<dimension id>)")
    return Gate(name, op, float(num), num, if_measured=bool(if_measured))


def why_not_measured(metric: str, metrics: dict[str, float | None]) -> str:
    """Why a call has no value of ``metric``, from its other metrics, for a gate's reason: a
    ``yield_mean_s`` gate failed "not measured" on a call with no barge-in, and nothing said so (a
    trial). '' where no reason is known. Pure."""
    def n(key: str) -> str:
        v = metrics.get(key)
        return "0" if v is None else format(v, "g")  # a count the summary does not hold counted nothing

    if metric.startswith("latency_"):
        return f"no reply to the caller to time (latency_count {n('latency_count')})"
    if metric == "yield_mean_s":
        cut = metrics.get("barge_in_cut_by_end_count")
        return (f"no caller barge-in that the agent yielded to (user_barge_in_count {n('user_barge_in_count')}, "
                f"talked through {n('verdict_barge_in_talked_through_count')}"
                + (f", cut by the call's end before it was decided {n('barge_in_cut_by_end_count')}" if cut else "")
                + ")")
    if metric == "gap_mean_s":
        return f"no change of speaker (gap_count {n('gap_count')})"
    if metric.startswith("dim_"):
        return f"no judged window scored this dimension (judged_windows {n('judged_windows')})"
    if _is_p_human_metric(metric):
        return (f"no judged window with evidence (judged_windows {n('judged_windows')}, "
                f"no_evidence_windows {n('no_evidence_windows')}; is the judge off, or did it not load? the "
                "result's errors say)")
    if metric.startswith("verdict_") and metric.endswith("_rate"):
        return "no verdict of that kind in the call"
    return ""


def moment_absent(metric: str, metrics: dict[str, float | None]) -> bool:
    """Whether a ``key_optional`` metric is missing because the call had none of its moments (no
    caller barge-in for ``yield_mean_s``; no verdict of the kind for a verdict rate), not because
    of what the agent did there: an agent that talked through every barge-in has no yield time
    either, and passed a 'yield_mean_s>0.5 if measured' gate (a trial). Pure."""
    if metric == "yield_mean_s":
        n = metrics.get("user_barge_in_count", metrics.get("barge_in_count"))
        if not n:
            return True
        # barge-ins the call's end cut (``Timeline.cut_by_end``) have no barge-in verdict: when
        # none was decided either way, the moment was not measured, whatever the agent did
        judged = [metrics.get(f"verdict_barge_in_{o}_count") for o in ("yielded", "slow_yield", "talked_through")]
        return all(isinstance(j, (int, float)) for j in judged) and not any(judged) and \
            not metrics.get("verdict_backchannel_yielded_count")
    return key_optional(metric)


def key_optional(metric: str) -> bool:
    """A metric that a call with nothing wrong may lack: the mean yield time (no caller barge-in)
    and the per-kind verdict rates (no moment of that kind). Pure."""
    return metric == "yield_mean_s" or (metric.startswith("verdict_") and metric.endswith("_rate"))


def _dimension_matches(name: str) -> list[str]:
    """``dim_<id>`` names whose dimension a misspelt ``dim_<word>`` means, found by the word in its
    id, display name, meter label or human-like end ("dim_breathing" → dim_micro_physiological_noise,
    shown on the meter as "breathing/mouth": a trial was offered the first six dimensions). Pure."""
    from livejudge.judge.model.dimensions import DIMENSIONS
    from livejudge.outputs.meter import SHORT_NAMES

    words = [w for w in re.split(r"[_\W]+", name[4:].lower()) if len(w) >= 3]
    out = []
    for d in DIMENSIONS:
        text = " ".join((d.id, d.name, SHORT_NAMES.get(d.id, ""), d.high)).lower()
        if words and all(w in text for w in words):
            out.append(f"dim_{d.id}")
    return out[:4]


def evaluate(gates: Iterable[Gate], metrics: dict[str, float | None]) -> list[GateResult]:
    """Check each gate against ``metrics`` (pure). A metric the call did not measure fails its gate
    with the reason (``why_not_measured``), unless the gate says "if measured": then it passes."""
    out = []
    for g in gates:
        v = metrics.get(ALIASES.get(g.metric, g.metric))
        if v is None:
            why = why_not_measured(ALIASES.get(g.metric, g.metric), metrics)
            why = f": {why}" if why else ""
            if g.if_measured and moment_absent(ALIASES.get(g.metric, g.metric), metrics):
                out.append(GateResult(g, None, False, f"{g.metric} was not measured{why}; passes ('if measured')"))
            elif g.if_measured:  # the moments were there; the agent's behaviour left nothing to time
                out.append(GateResult(g, None, True, f"{g.metric} was not measured{why}: the call had the "
                                                     "moments, so 'if measured' does not pass it"))
            else:
                # a metric a good call may lack (no barge-in, no verdict of a kind): how to let it pass
                hint = (f" (to let such a call pass: '{g.text} if measured')"
                        if key_optional(ALIASES.get(g.metric, g.metric)) else "")
                out.append(GateResult(g, None, True, f"{g.metric} was not measured{why}{hint}"))
        elif OPS[g.op](v, g.threshold):
            out.append(GateResult(g, v, True, f"{g.metric} = {v:g} ({g.op} {g.threshold:g})"))
        else:
            out.append(GateResult(g, v, False, f"{g.metric} = {v:g}"))
    return out


def gate_call(gates: Iterable[Gate], doc: dict) -> list[GateResult]:
    """The gates on one call's result document: ``evaluate`` on ``call_metrics(doc)``, with a
    dimension the head never measures said so (``explain_unmeasured``). Pure; what ``score``,
    ``replay``, ``attach`` and the LiveKit tap gate a call with."""
    from livejudge.outputs.report import dimension_view

    # a dimension the head never measures keeps that reason, even on a call the service left unjudged
    results = explain_unmeasured(explain_unjudged(evaluate(gates, call_metrics(doc)), doc.get("summary") or {}),
                                 dimension_view(doc))
    health = list((doc.get("source") or {}).get("input_health") or [])  # dicts: a per-code gate shows its own
    return [dataclasses.replace(r, reason=with_health(r.reason, ALIASES.get(r.gate.metric, r.gate.metric), health))
            if r.failed else r for r in results]


def explain_unjudged(results: list[GateResult], summary: dict) -> list[GateResult]:
    """``results`` with the reason of a failed P(human) gate (``mean_p_human``, ``last_p_human``,
    ``dim_<id>``) on a ``mostly_unjudged`` call saying why it was not measured: the judge service
    could not judge most windows (a trial's ``p_human_mean`` gate would have passed on 1 window of
    22). Pure."""
    if not mostly_unjudged(summary):
        return results
    unjudged, judged = summary.get("judge_unavailable_windows"), summary.get("judged_windows") or 0
    out = []
    for r in results:
        if r.failed and r.value is None and _is_p_human_metric(ALIASES.get(r.gate.metric, r.gate.metric)):
            r = GateResult(r.gate, None, True,
                           f"{r.gate.metric} was not measured: the judge service could not judge {unjudged} "
                           f"windows and judged {judged} (judge_unavailable_windows); keep the service up "
                           "(livejudge serve-judge) and judge the call again")
        out.append(r)
    return out


def explain_unmeasured(results: list[GateResult], view: dict | None) -> list[GateResult]:
    """``results`` with the reason of a failed ``dim_<id>`` gate that the head never measures
    (``view["not_measured"]``, ``outputs.report.dimension_view``) saying so: such a gate can never
    pass, so "was not measured" alone read as a fault of this call (a trial gated on
    ``dim_memory_consistency<2``); and of one on a dimension that shares one learned score with
    others (``view["groups"]``) naming them. Pure."""
    why = (view or {}).get("not_measured") or {}
    shared = {d: g for g in (view or {}).get("groups") or () if len(g) > 1 for d in g}
    out = []
    for r in results:
        d = r.gate.metric[4:] if r.gate.metric.startswith("dim_") else None
        if r.failed and r.value is None and d in why:
            r = GateResult(r.gate, None, True, f"{r.gate.metric} is never measured by this judge's head ({why[d]}), "
                                               "so this gate can never pass: drop it")
        elif r.failed and d in shared:  # "dim_accent = 1.87" read as evidence about accent alone (a trial)
            others = ", ".join(f"dim_{x}" for x in shared[d] if x != d)
            r = GateResult(r.gate, r.value, True, f"{r.reason}; one learned score shared with {others} (the head "
                                                  "cannot tell them apart)")
        out.append(r)
    return out


def needs_judge(gate: Gate) -> bool:
    """Whether ``gate`` reads the judge (mean or last P(human), a dimension): without one it could
    never pass."""
    name = ALIASES.get(gate.metric, gate.metric)
    return _is_p_human_metric(name) or name in JUDGE_WINDOW_METRICS


def check_gates_measurable(gates: Iterable[Gate], judge, *, judge_off: bool = False) -> None:
    """Before a call is scored: a ``dim_<id>`` gate on a dimension the loaded judge's head never
    measures (``judge.view["not_measured"]``, ``judge.model.judge.dimension_view``) can never pass,
    so it is a usage error (exit 2), not a failed gate after the call (a trial's
    ``dim_memory_consistency<2`` scored the whole call and then exited 3). So is a P(human) or
    dimension gate with ``judge_off`` (``--judge none`` asked for: timing only; a re-check). No
    judge otherwise (``--judge auto`` that could not load), or one without a view (a judge
    service): nothing to check, the gate fails as not measured. Raises CLIError naming the gate
    and the fix."""
    for g in gates:
        if judge_off and needs_judge(g):
            raise CLIError(f"--fail-if {g.text!r}: {g.metric} needs the judge, and --judge none measures timing "
                           "only, so the gate could never pass: drop it, or leave --judge at its default")
    view = getattr(judge, "view", None) if judge is not None else None
    why = (view or {}).get("not_measured") or {} if isinstance(view, dict) else {}
    for g in gates:
        d = g.metric[4:] if g.metric.startswith("dim_") else None
        if d in why:
            cfg = getattr(judge, "config", None)
            name = (f"the head {cfg.name} {cfg.version}" if getattr(cfg, "name", None) and getattr(cfg, "version", None)
                    else "this judge's head")
            raise CLIError(f"--fail-if {g.text!r}: {g.metric} is never measured by {name} ({why[d]}), so the gate "
                           "could never pass: drop it, or gate on a dimension the head measures "
                           "(docs/judge.md, 'What the output claims and what it does not')")


def measured_calls(per_call: Iterable[dict[str, float | None]]) -> dict[str, int]:
    """How many calls measured each metric (not None): the number each median of
    ``batch_metrics`` is taken over."""
    per_call = list(per_call)
    keys = list(dict.fromkeys(k for m in per_call for k in m))
    return {k: sum(1 for m in per_call if m.get(k) is not None) for k in keys}


def unmeasured_by_call(gates: Iterable[Gate], rows: list[dict]) -> dict[str, list[str]]:
    """``{file: [gated metrics this scored call did not measure, each with why]}`` for the scored batch rows
    (``{"file", "metrics"}``), calls that measured every gated metric left out."""
    out: dict[str, list[str]] = {}
    for r in rows:
        m = r.get("metrics") or {}
        miss = []
        for g in gates:
            key = ALIASES.get(g.metric, g.metric)
            if not g.if_measured and m.get(key) is None:
                why = why_not_measured(key, m)  # why, in the call's case (a re-check read only the name)
                miss.append(f"{g.metric} ({why})" if why else g.metric)
        if miss:
            out[str(r.get("file"))] = list(dict.fromkeys(miss))
    return out


def evaluate_batch(gates: Iterable[Gate], rows: list[dict]) -> list[GateResult]:
    """Each gate on the medians over the scored batch rows (``{"file", "metrics"}``), failing
    where any of those calls did not measure its metric: "latency_p90_s was not measured on 2 of
    3 scored calls (a.wav, b.wav)", as a single call without it fails (a trial: a batch of one good
    call and two with a silent agent passed 'latency_p90_s>2', on the one call's latencies). Pure."""
    gates = list(gates)
    rows = list(rows)
    medians = batch_metrics(r.get("metrics") or {} for r in rows)
    out = []
    for g, res in zip(gates, evaluate(gates, medians)):
        key = ALIASES.get(g.metric, g.metric)
        missing = [Path(str(r.get("file"))).name for r in rows if (r.get("metrics") or {}).get(key) is None]
        if res.value is None or not missing or g.if_measured:  # 'if measured': the median of those that did
            out.append(res)
            continue
        shown = ", ".join(missing[:3]) + (f", … {len(missing) - 3} more" if len(missing) > 3 else "")
        # whether the median fails too: a trial fixed the one unmeasured call and was still red
        verdict = (f", which fails too ({g.op} {g.threshold:g})" if OPS[g.op](res.value, g.threshold)
                   else f", which would pass ({g.metric} {g.op} {g.threshold:g} does not hold)")
        out.append(GateResult(g, res.value, True,
                              f"{g.metric} was not measured on {len(missing)} of {len(rows)} scored calls ({shown}); "
                              f"the median of the {len(rows) - len(missing)} that measured it is {res.value:g}{verdict}"))
    return out


def evaluate_each(gates: Iterable[Gate], rows: list[dict]) -> tuple[list[GateResult], dict[str, list[dict]]]:
    """Each gate on every scored batch row (``{"file", "metrics"}``) on its own (``--gate-each``):
    a gate fails the batch when it fails on any call, not only on the medians. A median passes a
    warning or a flag that most calls lack (a trial's ``input_health_warning_count>0`` passed a
    batch where one call of three had its channels swapped). Pure.

    Returns:
        (results, failed_on): one ``GateResult`` per gate (``value``: the median over the calls
        that measured it, as ``evaluate_batch``; ``reason`` names the calls it failed on and
        their values), and ``{gate text: [{"file", "value"}, ...]}``, the calls each gate failed
        on with their own values (None: not measured); ``failed_by_call`` inverts it.
    """
    gates = list(gates)
    rows = list(rows)
    medians = batch_metrics(r.get("metrics") or {} for r in rows)
    failed_on: dict[str, list[dict]] = {}
    out = []
    for g in gates:
        bad = []
        key = ALIASES.get(g.metric, g.metric)
        for r in rows:
            res = evaluate([g], r.get("metrics") or {})[0]
            if res.failed:
                why = why_not_measured(key, r.get("metrics") or {}) if res.value is None else ""
                bad.append({"file": str(r.get("file")), "value": res.value,
                            "reason": with_health(res.reason, key, row_health(r)),
                            **({"why": why} if why else {})})
        failed_on[g.text] = bad
        med = medians.get(key)
        if not bad:
            out.append(GateResult(g, med, False, f"{g.metric}: held on none of {len(rows)} scored calls"))
            continue
        # "not measured" with why: a trial's 'yield_mean_s>1.0 if measured' failed "(not measured)" on
        # a call whose agent talked through its barge-in, the reason only in the docs
        named = [f"{Path(b['file']).name} ("
                 + ("not measured" + (f": {b['why']}" if b.get("why") else "") if b["value"] is None
                    else format(b["value"], "g")) + ")" for b in bad]
        shown = ", ".join(named[:3]) + (f", … {len(named) - 3} more" if len(named) > 3 else "")
        out.append(GateResult(g, med, True, f"failed on {len(bad)} of {len(rows)} scored calls: {shown}"))
    return out, failed_on


def failed_by_call(failed_on: dict[str, list[dict]]) -> dict[str, list[str]]:
    """``evaluate_each``'s ``failed_on`` per call: ``{file: ["gate (that call's reason)", ...]}``
    (JUnit's per-call failures: a trial's case said only which gate failed, its value in another
    case). Pure."""
    out: dict[str, list[str]] = {}
    for gate, bad in failed_on.items():
        for b in bad:
            out.setdefault(b["file"], []).append(f"{gate} ({b['reason']})" if b.get("reason") else gate)
    return out


def row_health(row: dict) -> list:
    """A batch row's input-health warnings for ``with_health``: dicts of code and message where the
    row keeps their codes (``input_health_codes``), else the messages. Pure."""
    msgs = list(row.get("input_health") or ())
    codes = row.get("input_health_codes")
    if isinstance(codes, list) and len(codes) == len(msgs):
        return [{"code": c, "message": m} for c, m in zip(codes, msgs)]
    return msgs


def with_health(reason: str, metric: str, messages) -> str:
    """``reason`` of a failed ``input_health_warning_count`` gate with the warnings themselves (up to
    two, each cut at 400 characters): a trial's JUnit said only "input_health_warning_count = 1
    (> 0)", not which warning (a swap, or a DC offset that was removed). ``messages``: the
    warnings' messages, or their dicts (``source.input_health``); with dicts, an
    ``input_health_<code>_count`` gate shows that code's warnings. Other gates: ``reason``. Pure."""
    items = list(messages or ())
    if metric in health_metric_names():
        code = metric[len("input_health_"):-len("_count")]
        items = [w for w in items if isinstance(w, dict) and w.get("code") == code]
    elif metric != "input_health_warning_count":
        return reason
    msgs = [str(w.get("message", w)) if isinstance(w, dict) else str(w) for w in items]
    if not msgs:
        return reason
    cut = [m if len(m) <= 400 else m[:399] + "…" for m in msgs[:2]]  # whole: a swap's fix is at its end
    return f"{reason}: " + "; ".join(cut) + (f"; … {len(msgs) - 2} more" if len(msgs) > 2 else "")


def gate_dicts(results: list[GateResult]) -> list[dict]:
    """The gate outcomes as a result document or ``summary.json`` keeps them (``"gates"``):
    ``[{"gate", "value", "failed", "reason"}]``."""
    return [{"gate": r.gate.text, "value": r.value, "failed": r.failed, "reason": r.reason} for r in results]


def truncated_row(row: object) -> bool:
    """Whether a batch's row (``summary.json``'s ``calls``) is a scored call from a truncated recording
    (its ``input_health_codes`` hold ``truncated_file``): its figures cover only the part read, so the
    batch's gates, its JUnit case and ``compare`` of the batch treat it as cut short. Pure."""
    return (isinstance(row, dict) and row.get("status") == "ok"
            and "truncated_file" in (row.get("input_health_codes") or ()))


def cut_short(doc: dict) -> str | None:
    """Why a call's result covers only part of the call, or None, as one sentence for the gates: the
    reason (``cut_short_reason``) and ": the gates read only the part before it" (or "played"). Its
    gates read only the part measured, so passing them is no pass: a trial's call killed by a CI
    timeout after 24 s of 635 s wrote a green JUnit file, and a later one's SIGTERMed attach did too;
    a trial's truncated file cut to half passed two gates its whole call fails. Pure."""
    why = _cut_short(doc)
    return None if why is None else f"{why[0]}: the gates read only the part {why[1]}"


def cut_short_reason(doc: dict) -> str | None:
    """Why a call's result covers only part of the call, or None: the reason alone (each caller says
    what follows from it; ``check`` names why a moment was not measured). Cut short: a recording
    (``score``, ``replay``, ``check``) stopped before its end (``source.ended`` "interrupted (…)");
    any call that failed mid-way ("failed: …"); a live call stopped by SIGTERM or SIGHUP (a CI
    timeout), or one whose scripted caller did not finish (``source.caller`` turns not ``played``,
    ``caller_not_played``: ``--duration-s`` or a stop came first); a recording that is truncated
    (``source.truncated``: it ends before its header says, or cannot be decoded past some point). A
    live call ended by Ctrl-C with its script done (or with no script: a person at the microphone)
    is a call's normal end. Pure."""
    why = _cut_short(doc)
    return None if why is None else why[0]


def _cut_short(doc: dict) -> tuple[str, str] | None:
    """``(reason, the part the gates read)`` for ``cut_short`` and ``cut_short_reason``, or None."""
    from livejudge.outputs.report import RECORDED_KINDS

    src = doc.get("source") or {}
    ended = src.get("ended")
    dur = doc.get("duration_s")
    at = f" after {dur:.1f} s" if isinstance(dur, (int, float)) else ""
    if src.get("truncated") and not str(ended or "").startswith(("interrupted", "failed")):
        # a file that ends before its header says (or cannot be decoded past some point) lost its end as a
        # stopped call did: a trial's file cut to half passed two gates its whole call fails
        return ((f"the recording is truncated (read to {dur:.1f} s, short of what its header says: "
                 "input_health truncated_file)" if isinstance(dur, (int, float)) else
                 "the recording is truncated (input_health truncated_file)"), "before it")
    if not isinstance(ended, str):
        return None
    caller = src.get("caller") if isinstance(src.get("caller"), list) else []
    unplayed = len(src.get("caller_not_played") or ()) + sum(
        1 for t in caller if isinstance(t, dict) and t.get("played") is False)
    recorded = src.get("kind") in RECORDED_KINDS
    if ended.startswith("failed") or (ended.startswith("interrupted")
                                      and (recorded or not ended.startswith("interrupted (Ctrl-C"))):
        return f"the call was cut short ({ended}{at})", "before it"
    if unplayed:
        return (f"the caller's script did not finish ({ended}{at}, {unplayed} scripted turn(s) not played to "
                "their end)", "played")
    return None


def format_passed(results: list[GateResult], scope: str, cut: str | None = None) -> str:
    """One line for stderr when every gate passed ('' when there is no gate or one failed): a CI log
    then shows that the gates ran (a passing gate printed nothing; a new user's trial). With ``cut``
    (``cut_short``), the line says the gates held on part of the call only, not that they passed."""
    if not results or any(r.failed for r in results):
        return ""
    gates = ", ".join(f"--fail-if {r.gate.text}" for r in results)
    if cut:
        return (f"livejudge: {cut}; none of {gates} held on that part, which is not a pass ({scope}; "
                "JUnit: an error)")
    return f"livejudge: {len(results)} of {len(results)} gate(s) passed ({scope}): none of {gates} held"


def format_failures(results: list[GateResult], scope: str) -> str:
    """The failed gates as lines for stderr ('' when none failed)."""
    failed = [r for r in results if r.failed]
    if not failed:
        return ""
    lines = [f"livejudge: {len(failed)} of {len(results)} gate(s) failed ({scope}):"]
    lines += [f"  FAIL {r.gate.text}: {r.reason}" for r in failed]
    return "\n".join(lines)


def junit_xml(results: list[GateResult], *, suite: str, calls: list[dict] | None = None,
              unmeasured: dict[str, list[str]] | None = None, skipped_is_error: bool = False,
              failed_each: dict[str, list[str]] | None = None, cut: str | None = None,
              cut_case: str = "the call was measured to its end") -> str:
    """JUnit XML: one ``testsuite`` of gates (``failure`` per failed gate) and, for a batch, one
    of calls (``skipped`` with the reason for each file that could not be scored, or ``error``
    with ``skipped_is_error``: the batch then exits 1, and CI pages show a skipped case grey, not
    red; ``failure`` for a scored call that did not measure a gated metric).

    Args:
        results: gate results.
        suite: name of the gate suite (e.g. the call's file, or "medians over 48 calls").
        calls: batch rows ``{"file", "status": "ok"|"skipped", "reason"}``, or None.
        unmeasured: ``unmeasured_by_call``: file → gated metrics that call did not measure.
        failed_each: ``failed_by_call`` of ``evaluate_each`` (``--gate-each``): file → gates that
            failed on that call, each call's ``failure``.
        cut: ``cut_short``'s reason, or None: one more test case (``cut_case``: "the call was
            measured to its end"; a stopped batch's, "the batch ran to its end") with an ``error``,
            so a CI page shows a stopped call red, not green.
    """
    root = ET.Element("testsuites", name="livejudge")
    s = ET.SubElement(root, "testsuite", name=f"livejudge gates: {suite}", tests=str(len(results) + bool(cut)),
                      failures=str(sum(r.failed for r in results)), errors=str(int(bool(cut))), skipped="0")
    if cut:
        _error_case(s, "livejudge.commands.gates", cut_case, cut, "CallCutShort")
    for r in results:
        tc = ET.SubElement(s, "testcase", classname="livejudge.commands.gates", name=r.gate.text)
        if r.failed:
            f = ET.SubElement(tc, "failure", message=r.reason, type="GateFailed")
            f.text = r.reason
        else:
            ET.SubElement(tc, "system-out").text = r.reason
    if calls is not None:
        unmeasured = unmeasured or {}
        bad = [c for c in calls if c.get("status") != "ok"]
        # a truncated call is an error of its own where the gates are cut by it (a re-check: its case was green)
        truncated = {str(c.get("file")) for c in calls if cut and truncated_row(c)}
        n_fail = sum(1 for c in calls if c.get("status") == "ok" and str(c.get("file")) not in truncated
                     and (str(c.get("file")) in unmeasured or str(c.get("file")) in (failed_each or {})))
        s2 = ET.SubElement(root, "testsuite", name="livejudge calls", tests=str(len(calls)),
                           failures=str(n_fail), errors=str((len(bad) if skipped_is_error else 0) + len(truncated)),
                           skipped=str(0 if skipped_is_error else len(bad)))
        for c in calls:
            tc = ET.SubElement(s2, "testcase", classname="livejudge.calls", name=str(c.get("file")))
            if c.get("status") != "ok" and skipped_is_error:
                ET.SubElement(tc, "error", message=str(c.get("reason") or "not scored"), type="NotScored")
            elif c.get("status") != "ok":
                ET.SubElement(tc, "skipped", message=str(c.get("reason") or "not scored"))
            elif str(c.get("file")) in truncated:
                msg = "a truncated recording: it ends before its header says, so only the part read was measured"
                ET.SubElement(tc, "error", message=msg, type="CallCutShort").text = msg
            elif str(c.get("file")) in (failed_each or {}):
                msg = "gate(s) failed on this call: " + ", ".join(failed_each[str(c.get("file"))])
                ET.SubElement(tc, "failure", message=msg, type="GateFailed").text = msg
            elif str(c.get("file")) in unmeasured:
                msg = "not measured in this call: " + ", ".join(unmeasured[str(c.get("file"))])
                ET.SubElement(tc, "failure", message=msg, type="NotMeasured").text = msg
    return junit_text(root)


def _error_case(suite: ET.Element, classname: str, name: str, message: str, kind: str) -> None:
    """One test case with an ``error`` (not a failure: the run did not end as measured), as a
    stopped call's case and a failed run's case both are."""
    tc = ET.SubElement(suite, "testcase", classname=classname, name=name)
    ET.SubElement(tc, "error", message=message, type=kind).text = message


def junit_text(root: ET.Element) -> str:
    """A JUnit ``testsuites`` element as the text of a file (indented, with the XML declaration)."""
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def failed_run_junit_xml(command: str, message: str, code: int | None) -> str:
    """JUnit XML for a command that stopped before it wrote its own (bad input, a stop signal): one
    test case, "livejudge COMMAND ran to its end", with an ``error`` naming the reason and the exit
    code (None: not known, for the file a run starts with), so a CI page reads the run red. Without
    it the file of an earlier, passing run was left in place and read green (a trial)."""
    root = ET.Element("testsuites", name="livejudge")
    s = ET.SubElement(root, "testsuite", name=f"livejudge {command}", tests="1", failures="0", errors="1",
                      skipped="0")
    _error_case(s, "livejudge.commands.cli", f"livejudge {command} ran to its end",
                message if code is None else f"exit {code}: {message}", "CommandFailed")
    return junit_text(root)


def write_junit(path: str | Path, results: list[GateResult], *, suite: str, calls: list[dict] | None = None,
                unmeasured: dict[str, list[str]] | None = None, skipped_is_error: bool = False,
                failed_each: dict[str, list[str]] | None = None, cut: str | None = None,
                cut_case: str = "the call was measured to its end") -> Path:
    """``junit_xml`` written to ``path`` (parents made). Raises OSError."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(junit_xml(results, suite=suite, calls=calls, unmeasured=unmeasured,
                           skipped_is_error=skipped_is_error, failed_each=failed_each, cut=cut, cut_case=cut_case),
                 encoding="utf-8")
    return p


def add_gate_args(p) -> None:
    """``--fail-if`` and ``--junit`` (argparse)."""
    g = p.add_argument_group("CI gates")
    g.add_argument("--fail-if", action="append", default=[], metavar="'METRIC>X'",
                   help="exit 3 when this holds, e.g. 'latency_p90_s>1.2' or 'p_human_mean<0.3' (repeatable); a call "
                        "that did not measure the metric fails, unless the gate ends 'if measured' "
                        "('yield_mean_s>0.5 if measured'); "
                        "any summary metric, p_human_mean, dim_<id>; a batch is gated on its medians (--gate-each: on every "
                        "call). A P(human) gate "
                        "is only as good as the head on your agent's voice: docs/ci-gates.md. With --judge-url, "
                        "'judge_unavailable_windows>0' fails a call with windows the service could not judge")
    g.add_argument("--junit", default=None, metavar="OUT.xml", help="write the gate results as JUnit XML here")


def parse_gates(texts: Iterable[str]) -> list[Gate]:
    """Parsed ``--fail-if`` gates (``OutputConfig.fail_if``); raises CLIError (exit 2) on a bad one."""
    try:
        return [parse_gate(t) for t in texts]
    except ValueError as exc:
        raise CLIError(str(exc)) from None
