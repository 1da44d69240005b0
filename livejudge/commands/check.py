"""`livejudge check`: expectations pinned to moments of a recorded call, for CI.

At a caller moment (a barge-in, a backchannel, a pause inside the caller's speech: the
``EXPECTABLE`` verdicts of ``livejudge.timing.verdicts``) the agent either *yields* (stops
talking, or leaves the floor to the caller) or *holds* (talks on, or takes the floor)::

    livejudge check call.wav --at 16.1 --expect yield --within 0.8
    livejudge check call.wav --expectations exp.json --junit check.xml
    livejudge check call.wav --json result.json    # the numbered moments
    livejudge check --pin-from result.json --event 3 --event 7 -o exp.json
    livejudge check --pin-from result.json --flagged -o exp.json

CALL is a recording (run through the timing pipeline, judge off) or a result document
(``.json``: its verdicts are read as they are). An expectation matches the expectable verdict
nearest its ``at_s`` within ``tolerance_s`` (default 0.5 s, HEURISTIC: VAD onsets move by tens
of ms between line conditions); with ``kind`` set, only a verdict of that kind. ``yield`` passes
when the agent yielded there, and, with ``within_s``, did so within that many seconds of the
moment (barge-in: its yield time; backchannel: agent offset − backchannel onset; a pause the
agent waited through has nothing to time and passes). ``hold`` passes when it held.

Expectations file (JSON, or TOML with ``.toml``)::

    {"livejudge_expectations": 1, "call": "call.wav", "tolerance_s": 0.5,
     "verdict_config": {...},                       # optional: thresholds to re-check with
     "expect": [{"at_s": 16.07, "expect": "yield", "within_s": 1.0,
                 "kind": "barge_in", "name": "barge-in at 16.1 s"}]}

Pinning (``--pin-from``): each chosen verdict becomes an expectation of what a person would
do there (``--pin expected``, the default: barge-in → yield within ``yield_max_s``,
backchannel → hold, pause → yield), so a flagged moment keeps CI red until the agent is
fixed, and a passing one guards against regressions; or of what the agent did
(``--pin observed``: a snapshot; a yield is pinned with ``within_s`` = its time +
``PIN_MARGIN_S``).

A pause expectation of ``yield`` that "passed" because the agent never spoke after it (a dead
or hung agent waits through every pause) is not measured: printed ``ERROR``, a JUnit ``error``,
and not a pass (exit 3). So is an expectation at a barge-in or backchannel the call's end cut (no
verdict there; the result's ``barge_in_cut_by_end`` / ``backchannel_cut_by_end`` note), one with
no verdict less than ``END_MARGIN_S`` before the call's end, and a moment a probe's call never
played (its file's ``not_played``).

Exit codes: 0 every expectation passed (or there were none), 3 one failed or was not measured (``EXIT_GATE``, as a
failed ``--fail-if`` gate: CI tells a failed expectation from a run that failed, 1), 2 usage or
input error (one line says what): usage errors leave through ``CLIError`` (``runner.EXIT_USAGE``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass, fields, replace
from pathlib import Path

from livejudge.commands.runner import EXIT_GATE, CLIError, HelpFormatter, add_session_args, session_config
from livejudge.commands.verdict_args import add_verdict_args, verdict_config_from_args  # noqa: F401 (re-exported)
from livejudge.timing.verdicts import (EXPECTABLE, JOINED_MOMENT_WORDS, Verdict, VerdictConfig, flagged_moments, joined_text,
                                       moment_groups, moments)

EXIT_PASS, EXIT_FAIL = 0, EXIT_GATE  # a failed expectation is a failed gate (3); 1 is a run that failed

TOLERANCE_S = 0.5
"""HEURISTIC: how far from ``at_s`` the moment may be found, seconds."""

PIN_MARGIN_S = 0.25
"""HEURISTIC: ``--pin observed`` pins a yield of y seconds as ``within_s = y + PIN_MARGIN_S``
(VAD offsets move by tens of ms between runs on other machines or line conditions)."""

FORMAT_VERSION = 1
EXPECTS = ("yield", "hold")


@dataclass(frozen=True)
class Expectation:
    """One pinned moment.

    Attributes:
        at_s: the caller moment, session seconds (a verdict's ``t_s``).
        expect: "yield" or "hold".
        within_s: for "yield", the latest the agent may stop after ``at_s``, seconds; None = any.
        kind: restrict the match to one verdict kind ("barge_in", "backchannel", "pause"); None = any.
        name: label in outputs and JUnit.
    Raises:
        ValueError: a bad value (the message names the field and the fix).
    """

    at_s: float
    expect: str
    within_s: float | None = None
    kind: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if self.expect not in EXPECTS:
            raise ValueError(f"expect must be 'yield' or 'hold', got {self.expect!r}")
        if not (isinstance(self.at_s, (int, float)) and self.at_s >= 0 and self.at_s == self.at_s):
            raise ValueError(f"at_s must be a time ≥ 0 seconds, got {self.at_s!r}")
        if self.within_s is not None:
            if self.expect != "yield":
                raise ValueError("within_s goes with expect 'yield' only (how soon the agent must stop)")
            if not (isinstance(self.within_s, (int, float)) and self.within_s >= 0):
                raise ValueError(f"within_s must be ≥ 0 seconds, got {self.within_s!r}")
        if self.kind is not None and self.kind not in EXPECTABLE:
            raise ValueError(f"kind must be one of {', '.join(EXPECTABLE)}, got {self.kind!r}")

    @property
    def label(self) -> str:
        w = f" within {self.within_s:g} s" if self.within_s is not None else ""
        k = f" ({self.kind.replace('_', '-')})" if self.kind else ""
        return self.name or f"{self.expect}{w} at {self.at_s:.2f} s{k}"

    def to_dict(self) -> dict:
        d: dict = {"at_s": round(self.at_s, 4), "expect": self.expect}
        if self.within_s is not None:
            d["within_s"] = round(self.within_s, 4)
        if self.kind:
            d["kind"] = self.kind
        if self.name:
            d["name"] = self.name
        return d

    @staticmethod
    def from_dict(d: object, where: str = "expectation") -> "Expectation":
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be a table/object with at_s and expect, got {d!r}")
        unknown = set(d) - {"at_s", "expect", "within_s", "kind", "name", "note"}
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} "
                             "(fields: at_s, expect, within_s, kind, name, note)")
        if "at_s" not in d or "expect" not in d:
            raise ValueError(f"{where} needs at_s and expect, got {d!r}")
        try:
            if any(isinstance(d.get(k), (str, bool)) for k in ("at_s", "within_s")):
                raise TypeError  # "16.07" was read as 16.07 while null was refused (a trial): numbers, as JSON has them
            at = float(d["at_s"])
            within = None if d.get("within_s") is None else float(d["within_s"])
        except (TypeError, ValueError):
            raise ValueError(f"{where}: at_s and within_s must be numbers of seconds, got {d!r}") from None
        try:
            return Expectation(at, str(d["expect"]), within, d.get("kind"), str(d.get("name") or ""))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class CheckResult:
    """One expectation's outcome. ``error`` (a reason) marks a moment that could not be measured:
    ``passed`` is then False, and the moment is neither a pass nor a failure (JUnit ``error``);
    ``cause`` says which kind (a key of ``CAUSE_WORDS``: "silent", "cut", "not_played",
    "unreadable"), for the summary line and the JUnit type."""

    expectation: Expectation
    passed: bool
    reason: str
    verdict: Verdict | None = None
    error: str | None = None
    cause: str | None = None

    @property
    def status(self) -> str:
        """"pass", "fail" or "error" (not measured)."""
        return "error" if self.error else ("pass" if self.passed else "fail")


CAUSE_WORDS = {"silent": "the agent did not speak after them", "cut": "cut by the call's end",
               "not_played": "not played by the probe's call", "unreadable": "the recording cannot be read"}
"""Each ``CheckResult.cause`` in the words of check's summary line ("2 not measured: …")."""
NOT_PLAYED = "the probe's call ended before this moment, so the recording does not hold it; re-run the probe"
"""Why an expectations file's ``not_played`` moment (written by ``probe --expectations-out``) is
not measured: ``check`` counts it as an ``error``, not a pass."""


def not_played_result(expectation: Expectation) -> CheckResult:
    """The outcome of a moment the probe's call ended before (``not_played``): not measured, an
    ``error`` with cause "not_played" and the reason ``NOT_PLAYED``. One builder, so ``check``'s
    report and ``probe --junit`` count such a moment alike."""
    return CheckResult(expectation, False, "not played", None, NOT_PLAYED, "not_played")


NEVER_SPOKE = "the agent never spoke in the call: waiting cannot be told from not answering"
SILENT_AFTER = "the agent did not speak after this moment: waiting cannot be told from not answering"


def not_measured(e: Expectation, passed: bool, agent_onsets: list[float] | None) -> str | None:
    """Why an expectation that passed was not measured, or None (pure). A pause passes "yield" when
    the agent waited, i.e. did not start in it; an agent that never speaks again "waits" too (a
    trial: a dead agent read 3 of 5 green), so a pause is only judged once the agent has spoken
    after it. ``agent_onsets``: the agent's speech onsets, seconds on the call's clock (the
    result's ``segments``); None when the result does not list them (then nothing is marked)."""
    if not passed or e.expect != "yield" or agent_onsets is None:
        return None
    if e.kind not in ("pause", None):  # kind None: the caller passes only a pause's result
        return None
    if not agent_onsets:
        return NEVER_SPOKE
    if not any(t > e.at_s for t in agent_onsets):
        return SILENT_AFTER
    return None


def agent_onsets_of(doc: dict) -> list[float] | None:
    """The agent's speech onsets (s) of a result document's ``segments``, None when it has none."""
    segs = doc.get("segments")
    if not isinstance(segs, list):
        return None
    return [float(s["onset_s"]) for s in segs if isinstance(s, dict) and s.get("channel") == "agent"
            and isinstance(s.get("onset_s"), (int, float))]


CUT_BY_END = ("the call ended during this caller moment, before the agent's answer to it was heard "
              "(barge_in_cut_by_end / backchannel_cut_by_end): it is not judged")
END_MARGIN_S = 2.0
"""HEURISTIC: a moment with no verdict that lies less than this before the call's end is not
measured, not failed: its outcome (a yield within ``yield_max_s``, the caller resuming after a
pause, the agent going on past an "mm") needs up to about this long after it to be heard, and a
call cut that soon leaves none (a probe stopped by Ctrl-C blamed the agent: "no backchannel
within ±0.5 s"; a trial), seconds."""


def check_call(exps: list[Expectation], verdicts: list[Verdict], doc: dict,
               tolerance_s: float = TOLERANCE_S) -> list[CheckResult]:
    """Every expectation checked against a call's verdicts, with three moments marked not measured:
    a pause the agent "waited" out without speaking after it (``not_measured``), a barge-in the
    call's end cut (a ``barge_in_cut_by_end`` note in the result's ``framework_events``: no verdict
    there, which read "FAIL … no caller moment" in a trial), and any moment with no verdict less
    than ``END_MARGIN_S`` before the call's end (``doc["duration_s"]``). ``doc``: the call's result
    document. ``livejudge probe`` scores its moments with it too, so the two agree."""
    onsets = agent_onsets_of(doc)
    end = doc.get("duration_s")
    cut = [(str(n["kind"])[: -len("_cut_by_end")], float(n["t_s"])) for n in doc.get("framework_events") or []
           if isinstance(n, dict) and n.get("kind") in ("barge_in_cut_by_end", "backchannel_cut_by_end")
           and isinstance(n.get("t_s"), (int, float))]
    out = []
    for e in exps:
        r = check(e, verdicts, tolerance_s)
        why = not_measured(e, r.passed, onsets) if r.verdict is not None and r.verdict.kind == "pause" else None
        cause = "silent"
        hit = [(k, t) for k, t in cut if e.kind in (None, k) and abs(t - e.at_s) <= tolerance_s]
        if r.verdict is None and hit:  # its reason named the nearest other moment (a trial): name this one
            k, t = min(hit, key=lambda kt: abs(kt[1] - e.at_s))
            r = replace(r, reason=f"{k.replace('_', '-')} at {t:.2f} s")
            why, cause = CUT_BY_END, "cut"
        elif r.verdict is None and isinstance(end, (int, float)) and 0 <= end - e.at_s < END_MARGIN_S:
            why = (f"the call ended {end - e.at_s:.2f} s after this moment, before its outcome could be heard "
                   f"(under {END_MARGIN_S:g} s): it is not judged")
            cause = "cut"
            # not "(no caller moment … nearest: barge-in at 30.36 s)", which read as a second, other reason (a trial)
            r = replace(r, reason=f"nothing judged within ±{tolerance_s:g} s of {e.at_s:.2f} s")
        out.append(replace(r, passed=False, error=why, cause=cause) if why else r)
    return out


def check(expectation: Expectation, verdicts: list[Verdict], tolerance_s: float = TOLERANCE_S) -> CheckResult:
    """Check one expectation against a call's verdicts (pure). See the module docstring."""
    e = expectation
    kinds = (e.kind,) if e.kind else EXPECTABLE
    near = [v for v in verdicts if v.kind in kinds and abs(v.t_s - e.at_s) <= tolerance_s]
    if not near:
        cands = [v for v in verdicts if v.kind in kinds]
        hint = ""
        if cands:
            n = min(cands, key=lambda v: abs(v.t_s - e.at_s))
            hint = f"; nearest: {n.kind.replace('_', '-')} at {n.t_s:.2f} s"
        what = e.kind.replace("_", "-") if e.kind else "caller moment (barge-in, backchannel or pause)"
        return CheckResult(e, False, f"no {what} within ±{tolerance_s:g} s of {e.at_s:.2f} s{hint}")
    v = min(near, key=lambda v: (abs(v.t_s - e.at_s), EXPECTABLE.index(v.kind)))
    said = f"{v.kind.replace('_', '-')} at {v.t_s:.2f} s: {v.outcome.replace('_', ' ')}"
    if v.observed != e.expect:
        return CheckResult(e, False, f"expected the agent to {expect_words(e.expect, v.kind)}, it did not ({said})", v)
    if e.expect == "yield" and e.within_s is not None and v.value_s is not None and v.kind != "pause":
        if v.value_s > e.within_s + 1e-9:
            return CheckResult(e, False, f"yielded after {v.value_s:.2f} s, later than {e.within_s:g} s ({said})", v)
        return CheckResult(e, True, f"yielded after {v.value_s:.2f} s ({said})", v)
    if not v.ok and e.expect == "yield" and e.within_s is None and v.kind != "pause":
        # "PASS … slow yield" read as a pass of a flagged moment (a trial): a yield is what was expected,
        # and how soon is bounded only by --within; say so on the line
        after = f" after {v.value_s:.2f} s" if v.value_s is not None else ""
        return CheckResult(e, True, f"{said}: it yielded{after}, as expected, though the verdicts flag it; add "
                                    "--within S to bound how soon", v)
    return CheckResult(e, True, said, v)


def expect_words(expect: str, kind: str | None) -> str:
    """An expectation in words for its moment: at a caller's pause "yield" means the agent waits
    (leaves the floor to the caller) and "hold" that it takes the floor; "expect yield" at a pause
    read as a contradiction (a trial: "expected yield, the agent did not (pause at 0.95 s: cut in)")."""
    if kind == "pause":
        return {"yield": "wait", "hold": "take the floor"}.get(expect, expect)
    return expect


# ----------------------------------------------------------------------------- files
def load_expectations(path: str | Path) -> dict:
    """Read an expectations file (JSON, or TOML by extension). Returns ``{"expect": [Expectation],
    "tolerance_s": float | None, "call": str | None, "verdict_config": dict | None,
    "not_played": [Expectation]}`` (``not_played``: moments a probe's call ended before, each
    named; its ``at_s`` is 0 and means nothing: ``cmd_check`` counts each as not measured).

    Raises:
        ValueError: unreadable file, bad syntax or a bad expectation (one line naming it).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read expectations file {p}: {exc.strerror or exc}") from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            doc = tomllib.loads(text)
        else:
            doc = json.loads(text)
    except Exception as exc:  # json.JSONDecodeError, tomllib.TOMLDecodeError
        kind = "TOML" if p.suffix.lower() == ".toml" else "JSON"
        raise ValueError(f"expectations file {p} is not valid {kind}: {exc}") from None
    if isinstance(doc, list):
        doc = {"expect": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("expect"), list):
        raise ValueError(f"expectations file {p} needs a list 'expect' of {{at_s, expect, within_s}} entries "
                         "(see livejudge check --help)")
    exps = [Expectation.from_dict(d, f"{p.name}: expect[{i}]") for i, d in enumerate(doc["expect"])]
    tol = doc.get("tolerance_s")
    if tol is not None and not (isinstance(tol, (int, float)) and tol >= 0):
        raise ValueError(f"{p.name}: tolerance_s must be ≥ 0 seconds, got {tol!r}")
    vc = doc.get("verdict_config")
    if vc is not None:
        verdict_config_from_dict(vc, p.name)  # validate now
    version = doc.get("livejudge_expectations", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ValueError(f"{p.name}: livejudge_expectations is {version!r}, and this livejudge reads format "
                         f"{FORMAT_VERSION}: write it with this version (livejudge check --pin-from, probe "
                         "--expectations-out) or set it to 1")
    missed = doc.get("not_played") or []
    if not isinstance(missed, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in missed):
        raise ValueError(f"{p.name}: not_played must be a list of {{name, expect, kind}} entries "
                         "(as probe --expectations-out writes it)")
    try:
        not_played = [Expectation(0.0, str(m.get("expect") or "yield"), None, m.get("kind"), m["name"])
                      for m in missed]
    except ValueError as exc:
        raise ValueError(f"{p.name}: not_played: {exc}") from None
    call = doc.get("call")
    if call is not None and not Path(str(call)).is_absolute():
        call = str(p.parent / str(call))
    return {"expect": exps, "tolerance_s": tol, "call": call, "verdict_config": vc, "not_played": not_played}


def verdict_config_from_dict(d: object, where: str = "verdict_config") -> VerdictConfig:
    names = {f.name for f in fields(VerdictConfig)}
    if not isinstance(d, dict) or set(d) - names:
        raise ValueError(f"{where}: verdict_config must hold only {', '.join(sorted(names))}, got {d!r}")
    try:
        return VerdictConfig(**d)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def pin(result: dict, events: list[int] | None, *, flagged: bool = False, mode: str = "expected") -> dict:
    """An expectations document from verdicts of a result document.

    Args:
        result: a result document with ``verdicts``.
        events: indices into ``result["verdicts"]`` (as ``livejudge check CALL`` numbers them).
        flagged: also pin every flagged caller moment.
        mode: "expected" (what a person would do there) or "observed" (what the agent did).
    Raises:
        ValueError: no verdicts in the result, an index out of range, a verdict that is not a
            caller moment, or nothing chosen (with ``flagged``: when the call's flagged moments
            are all agent-side, the message says how to gate those). With ``flagged`` on a call
            without a flagged moment the document holds no expectations (``expect: []``).
    """
    raw = result.get("verdicts") if isinstance(result, dict) else None
    if raw is None:
        raise ValueError("the result has no verdicts (written by a livejudge before verdicts? score the call again)")
    vs = [Verdict.from_dict(v) for v in raw]
    chosen: list[int] = []
    for n in events or []:
        if not 0 <= n < len(vs):
            raise ValueError(f"--event {n} is out of range: the result has {len(vs)} verdicts (0–{len(vs) - 1})")
        if vs[n].kind not in EXPECTABLE:
            raise ValueError(f"verdict {n} is a {vs[n].kind.replace('_', ' ')} verdict; only caller moments "
                             f"({', '.join(EXPECTABLE)}) can be pinned (gate the rest with "
                             f"{never_flagged_gates(vs[n].kind)})")
        chosen.append(n)
    if flagged:
        chosen += [i for i, v in enumerate(vs) if v.kind in EXPECTABLE and not v.ok and i not in chosen]
    if not chosen and flagged:
        n_flag = len(flagged_moments(vs))
        if n_flag:
            raise ValueError(f"--flagged: {unpinned_flagged(vs)}")
        # a clean call: an expectations document holding none (a CI script pinning every call's
        # flagged moments stopped with exit 2 on the clean one; a noted gap)
    if not chosen and not flagged:
        raise ValueError("nothing to pin: give --event N (see the numbered list of `livejudge check CALL`) "
                         "or --flagged")
    cfg = result.get("verdict_config") or {}
    exps = []
    for n in sorted(set(chosen)):
        v = vs[n]
        if mode == "observed":
            expect = v.observed
            within = (round(v.value_s + PIN_MARGIN_S, 3)
                      if expect == "yield" and v.kind != "pause" and v.value_s is not None else None)
        else:
            expect = v.expected
            within = cfg.get("yield_max_s", VerdictConfig().yield_max_s) if v.kind == "barge_in" else None
        e = Expectation(round(v.t_s, 4), str(expect), within, v.kind,
                        f"{v.kind.replace('_', '-')} at {v.t_s:.2f} s")
        exps.append({**e.to_dict(), "note": f"pinned from verdict {n}: {v.outcome.replace('_', ' ')}"})
    src = result.get("source") or {}
    doc: dict = {"livejudge_expectations": FORMAT_VERSION}
    if src.get("file") and not src.get("agent_file"):  # a call given one side per file: --user/--agent again
        doc["call"] = str(src["file"])
    elif src.get("record"):  # a live call's --record (attach, probe)
        # the pinned file named no call, so `check --expectations FILE` said "no call" (a trial)
        doc["call"] = str(src["record"])
    doc["tolerance_s"] = TOLERANCE_S
    if cfg:
        doc["verdict_config"] = cfg
    doc["pin"] = mode
    doc["expect"] = exps
    return doc


def never_flagged_gates(kind: str) -> str:
    """The ``--fail-if`` gates that fail when a verdict of ``kind`` is flagged: one count gate per
    flagged outcome, e.g. "--fail-if 'verdict_dead_air_agent_silent_count>0'". Counts, not the
    flagged rate: a rate is not measured on a call without that kind of moment, and an unmeasured
    gate fails (a trial's clean call failed the suggested 'verdict_dead_air_flagged_rate>0')."""
    from livejudge.timing.verdicts import OK_OUTCOMES, OUTCOMES

    return " ".join(f"--fail-if 'verdict_{kind}_{o}_count>0'" for o in OUTCOMES[kind] if o not in OK_OUTCOMES[kind])


def unpinned_flagged(vs: list[Verdict]) -> str | None:
    """What ``--flagged`` leaves out of ``vs``, in words, or None when it leaves nothing out: the
    flagged moments that are agent-side (latency, dead air, talk-over, restart: no caller moment
    to expect a yield or hold at), with the ``--fail-if`` gates that catch them instead."""
    fm = flagged_moments(vs)
    out = [m for m in fm if not any(v.kind in EXPECTABLE for v in m)]
    if not out:
        return None
    kinds: dict[str, int] = {}
    for m in out:
        for v in m:
            if not v.ok:
                kinds[v.kind] = kinds.get(v.kind, 0) + 1
    what = "flagged verdicts: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items())
    gates = " ".join(never_flagged_gates(k) for k in kinds)
    if len(out) == len(fm):
        head = (f"the flagged moment is agent-side ({what})" if len(fm) == 1 else
                f"the {len(fm)} flagged moments are all agent-side ({what})")
    else:
        head = f"{len(out)} of the {len(fm)} flagged moments not pinned: agent-side ({what})"
    it = "it" if len(out) == 1 else "them"
    return (f"{head}, which cannot be pinned as caller expectations; gate {it} with {gates} "
            "(see docs/ci-gates.md)")


def moment_lines(vs: list[Verdict]) -> list[str]:
    """``livejudge check CALL``'s list: one line per moment (``livejudge.timing.verdicts.moments``,
    as the HTML report lists them), numbered with the index of each of its verdicts in ``vs``
    (the numbers ``--pin-from RESULT.json --event N`` takes; a reply after dead air, or a start
    over the caller, is one line numbered "a,b", the latency's text then its partner's), ``*`` marking a caller moment that
    can be pinned (pure)."""
    rows = []
    for g in moment_groups(vs):
        m = [vs[i] for i in g]
        # in the order of the text: the first number is the verdict the line reads first (sorted, "0,1"
        # sat beside the latency's text while 0 was the pause, and --event 1 was refused; a trial)
        nums = ",".join(str(n) for n in g)
        text = m[0].to_dict()["text"].strip()
        for d in m[1:]:  # the dead air of the same silence, or the talk-over of the same start
            text += joined_text(d.kind, d.outcome, d.value_s, d.threshold_s, d.ok)
        rows.append((nums, "*" if any(v.kind in EXPECTABLE for v in m) else " ", text))
    w = max([3] + [len(n) for n, _, _ in rows])
    return [f"{n:>{w}}{p} {t}" for n, p, t in rows]


def junit_xml(results: list[CheckResult], suite: str) -> str:
    """JUnit XML: one testsuite, one testcase per expectation (``failure`` with the reason; a moment
    not measured, ``CheckResult.error``, is an ``error``: not a pass, not a failure)."""
    root = ET.Element("testsuites", name="livejudge")
    s = ET.SubElement(root, "testsuite", name=f"livejudge check: {suite}", tests=str(len(results)),
                      failures=str(sum(r.status == "fail" for r in results)),
                      errors=str(sum(r.status == "error" for r in results)), skipped="0")
    for r in results:
        tc = ET.SubElement(s, "testcase", classname="livejudge.commands.check", name=r.expectation.label)
        if r.error:
            msg = f"not measured: {r.error} ({r.reason})"
            ET.SubElement(tc, "error", message=msg, type="NotPlayed" if r.cause == "not_played" else "NotMeasured"
                          ).text = msg
        elif not r.passed:
            f = ET.SubElement(tc, "failure", message=r.reason, type="ExpectationFailed")
            f.text = r.reason
        else:
            ET.SubElement(tc, "system-out").text = r.reason
    from livejudge.commands.gates import junit_text

    return junit_text(root)


# ----------------------------------------------------------------------------- CLI
def _verdicts_of(args: argparse.Namespace, call_path: str | None, vcfg: VerdictConfig) -> tuple[list[Verdict], dict]:
    """(verdicts, result document) of CALL: a result JSON read as is, or a recording scored
    with the judge off."""
    if call_path is not None and call_path.lower().endswith(".json"):
        try:
            doc = json.loads(Path(call_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CLIError(f"cannot read the result {call_path}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("verdicts") is None:
            raise CLIError(f"{call_path} is not a result document with verdicts (score the call again, or "
                           "give the recording)")
        set_flags = [flag for dest, (flag, default) in (getattr(args, "_rejudge_flags", None) or {}).items()
                     if getattr(args, dest, default) != default]
        if set_flags:
            print(f"livejudge: note: {', '.join(sorted(set_flags))} not applied: a result's verdicts are read as it was "
                  "scored (its own recording, thresholds and channels); check the recording to judge it with them",
                  file=sys.stderr)
        try:
            return [Verdict.from_dict(v) for v in doc["verdicts"]], doc
        except ValueError as exc:
            raise CLIError(f"{call_path}: {exc}") from None
    from livejudge.audio import AudioFormatError, open_call
    from livejudge.session import Session, stream_call

    if call_path is None and args.user is None and args.agent is None:
        raise CLIError("no call: give a recording (or a result .json), or --user A.wav --agent B.wav, "
                       "or an expectations file that names its call")
    config = replace(session_config(args, "every"), verdicts=vcfg)  # flag errors before input ones
    from livejudge.commands.runner import check_distinct_sides

    check_distinct_sides(args.user, args.agent)
    try:
        reader = open_call(call_path, user=args.user, agent=args.agent,
                           user_channel=args.user_channel, agent_channel=args.agent_channel)
    except AudioFormatError as exc:
        raise CLIError(str(exc)) from exc
    try:
        from livejudge.sources.recording import UnmeasurableRecording, prepare_recording

        try:  # the same steps as score: livejudge/sources/recording.py
            prepared = prepare_recording(reader, args.echo_gate)
        except UnmeasurableRecording as exc:
            raise CLIError(f"{call_path or args.user}: {exc}") from None
        except AudioFormatError as exc:  # undecodable from its first block
            raise CLIError(str(exc)) from None
        call = prepared.call
        info = {"sample_rate_in": call.sample_rate_in, "channels": call.channels, "kind": "check",
                "file": call_path, "file_resolved": _resolved(call_path), "echo_gate": prepared.gate_info}
        session = Session(config, judge=None, info=info)
        prepared.start(session)
        try:
            stream_call(session, call)
        except AudioFormatError as exc:
            raise CLIError(str(exc)) from exc
        prepared.finish(session)  # a truncated file, clipped samples: warned as score warns them
        doc = session.close()
        return session.verdicts, doc
    finally:
        reader.close()


def cmd_check(args: argparse.Namespace) -> int:
    from livejudge.outputs.guard import OutputPathError, check_output_paths

    try:  # as score's: check --json CALL.wav wrote its result over the recording it read (a re-check)
        check_output_paths({"--json": args.json_out, "--junit": args.junit, "-o": args.out},
                           [args.call, args.user, args.agent, args.expectations, args.pin_from],
                           examples={"-o": "expectations.json", "--junit": "check.xml"})
    except OutputPathError as exc:
        raise CLIError(str(exc)) from None
    if args.pin_from is not None:
        return _cmd_pin(args)
    if args.event:
        raise CLIError("--event goes with --pin-from RESULT.json")
    exps: list[Expectation] = []
    not_played: list[Expectation] = []
    tolerance = args.tolerance_s
    base_cfg = None
    call = args.call
    if args.expectations:
        try:
            f = load_expectations(args.expectations)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        exps += f["expect"]
        not_played = f["not_played"]
        tolerance = tolerance if tolerance is not None else f["tolerance_s"]
        if f["verdict_config"]:
            base_cfg = verdict_config_from_dict(f["verdict_config"])
        call = call or f["call"]
    if args.at is not None or args.expect is not None or args.within is not None:
        if args.at is None or args.expect is None:
            raise CLIError("--at T and --expect yield|hold go together (--within S optional, with yield)")
        try:
            exps.append(Expectation(args.at, args.expect, args.within))
        except ValueError as exc:  # the flags' names, not the expectation file's keys (a trial read "at_s")
            msg = str(exc)
            for key, flag in (("at_s", "--at"), ("within_s", "--within"), ("expect", "--expect")):
                msg = re.sub(rf"\b{key}\b", flag, msg)
            raise CLIError(msg) from None
    tolerance = TOLERANCE_S if tolerance is None else float(tolerance)
    if tolerance < 0:
        raise CLIError(f"--tolerance-s must be ≥ 0 seconds, got {tolerance}")
    suite = str(call or (f"{args.user} + {args.agent}" if args.user else "call"))  # the JUnit suite's name
    if not_played and not exps:  # the probe's call played none of them: nothing in the recording to read
        return _report([], not_played, args, suite)
    vcfg = verdict_config_from_args(args, base_cfg)
    try:
        vs, doc = _verdicts_of(args, call, vcfg)
    except CLIError as exc:
        if not not_played or exc.code != 2:
            raise
        # a probe cut so early that its recording cannot be read: the moments it did not play are
        # still what fails (exit 3), not the recording (a trial read exit 2, "too short")
        print(f"livejudge: {exc}", file=sys.stderr)
        return _report([CheckResult(e, False, "not checked", None, f"the recording cannot be read ({exc})",
                                    "unreadable") for e in exps], not_played, args, suite)
    if args.json_out:
        from livejudge.outputs.report import write_json

        if args.json_out == "-":
            print(json.dumps(doc, indent=2))
        else:
            print(f"livejudge: result written to {write_json(doc, args.json_out)}", file=sys.stderr)
    if not exps:  # list the moments, numbered for --pin-from
        out = sys.stderr if args.json_out == "-" else sys.stdout
        for line in moment_lines(vs):
            print(line, file=out)
        ms = moments(vs)
        n_flag = sum(1 for m in ms if any(not v.ok for v in m))
        joined = any(len(m) > 1 for m in ms)
        print(f"livejudge: {len(ms)} moments, {n_flag} flagged ({len(vs)} verdicts, {sum(not v.ok for v in vs)} "
              "flagged" + (f"; {JOINED_MOMENT_WORDS}, numbered with each of its verdicts" if joined else "")
              + "); * = a caller moment you can pin (--pin-from RESULT.json --event N)", file=sys.stderr)
        if args.expectations:  # a file pinned from a clean call holds none: say so, and keep --junit's file
            print(f"livejudge: {args.expectations} holds no expectations (pinned with --flagged from a call without "
                  "a flagged moment?): nothing checked, 0 of 0 passed", file=sys.stderr)
            if args.junit:
                p = Path(args.junit)
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_text(junit_xml([], suite), encoding="utf-8")
                except OSError as exc:
                    raise CLIError(f"cannot write --junit {p}: {exc.strerror or exc}") from None
                print(f"livejudge: JUnit XML written to {p}", file=sys.stderr)
        return EXIT_PASS
    dur = doc.get("duration_s")
    late = [e for e in exps if isinstance(dur, (int, float)) and e.at_s > dur + tolerance]
    from livejudge.commands.gates import cut_short_reason

    ended = str((doc.get("source") or {}).get("ended") or "")
    cut = cut_short_reason(doc) if late and ended.startswith(("interrupted", "failed")) else None
    if cut:  # a result of a call stopped part way (Ctrl-C, SIGTERM, a failure): those moments are not measured,
        # not bad input; "past the end of the recording (86.34 s long)" named an 870 s recording (a trial).
        # A truncated file stays bad input (below): the file does not hold the whole call.
        why = (f"the result covers only the first {dur:.2f} s ({cut}), so this moment "
               "was not measured; score the whole call again")
        rest = [e for e in exps if e not in late]
        return _report(check_call(rest, vs, doc, tolerance)
                       + [CheckResult(e, False, f"{e.at_s:.2f} s", None, why, "cut") for e in late],
                       not_played, args, suite)
    if late:  # bad input, not a regression: a cut recording read as a failed moment (exit 3; a new user's trial)
        more = f" (and {len(late) - 1} more)" if len(late) > 1 else ""
        if (doc.get("source") or {}).get("truncated"):  # say what is known (a re-check read "26.11 s long")
            raise CLIError(f"{late[0].label}{more}: {late[0].at_s:.2f} s is past the end of what could be read of "
                           f"the recording ({dur:.2f} s): the file is truncated, it ends before its header says; "
                           "check the whole recording")
        raise CLIError(f"{late[0].label}{more}: {late[0].at_s:.2f} s is past the end of the recording "
                       f"({dur:.2f} s long): check the time, or whether the file holds the whole call")
    results = check_call(exps, vs, doc, tolerance)
    return _report(results, not_played, args, suite)


def _report(results: list[CheckResult], not_played: list[Expectation], args: argparse.Namespace, suite: str) -> int:
    """Print each expectation's outcome, write ``--junit``, say the count; the exit code. A
    ``not_played`` moment (a probe's call ended before it) is an error: not measured."""
    results = results + [not_played_result(e) for e in not_played]
    out = sys.stderr if args.json_out == "-" else sys.stdout
    for r in results:
        reason = r.reason  # "backchannel at 6.22 s: backchannel at 6.22 s: held" said the moment twice (a trial)
        if reason.startswith(r.expectation.label + ": "):
            reason = reason[len(r.expectation.label) + 2:]
        if r.error:
            reason = f"not measured: {r.error} ({reason})"
        print(f"{r.status.upper():<5} {r.expectation.label}: {reason}", file=out)
    n_fail = sum(not r.passed for r in results)
    n_err = sum(r.status == "error" for r in results)
    causes: dict[str, int] = {}  # each error's cause, in the words of the summary line
    for r in results:
        if r.error:
            words = CAUSE_WORDS[r.cause or "silent"]
            causes[words] = causes.get(words, 0) + 1
    if args.junit:
        p = Path(args.junit)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(junit_xml(results, suite), encoding="utf-8")
        except OSError as exc:
            raise CLIError(f"cannot write --junit {p}: {exc.strerror or exc}") from None
        print(f"livejudge: JUnit XML written to {p}", file=sys.stderr)
    why = list(causes) if len(causes) == 1 else [f"{n} {w}" for w, n in causes.items()]
    print(f"livejudge: {len(results) - n_fail} of {len(results)} expectation(s) passed"
          + (f" ({n_err} not measured: {', '.join(why)}, which is not a pass)" if n_err else ""),
          file=sys.stderr)
    fails = [r for r in results if r.status == "fail"]
    if getattr(args, "expectations", None) and any(r.verdict is not None for r in fails):
        # a FAIL read as a verdict ("yielded") beside the word FAIL, with no next step (a trial)
        print("livejudge: a FAIL is the agent doing otherwise than the file pins: fix the agent, or, where the "
              "change is wanted, pin the call again (livejudge check CALL --json R.json, then livejudge check "
              "--pin-from R.json --event N -o FILE)", file=sys.stderr)
    if any(r.verdict is None for r in fails):  # the moment itself was not found: not the agent's doing
        if getattr(args, "expectations", None):  # a pinned file: the recording's moments may have moved
            print("livejudge: a moment not found near its time has moved in this recording, or is not in it: "
                  "widen --tolerance-s, or pin it again from this recording", file=sys.stderr)
        else:  # --at T: nothing was pinned, nothing moved (a re-check); T itself may be off
            print("livejudge: no caller moment near --at: take the time from the numbered list `livejudge check "
                  "CALL` prints (the FAIL line names the nearest), or widen --tolerance-s", file=sys.stderr)
    return EXIT_FAIL if n_fail else EXIT_PASS


def _call_for(call: str, result_path: Path, out: Path | None, resolved: str | None = None) -> str:
    """The recording's path as an expectations file must hold it (relative to that file, as
    ``load_expectations`` reads it): the result's ``source.file`` was relative to wherever
    ``score`` ran, so it is found at the result's ``source.file_resolved`` (absolute, written by
    score/replay/check), from here, or from the result's folder, then written relative to the
    expectations file (absolute when the expectations go to stdout).

    Raises:
        CLIError: the recording is found nowhere (an expectations file naming it could never run).
    """
    p = Path(call)
    if not p.is_absolute() or not p.exists():
        tries = ([Path(resolved)] if resolved else []) + [Path.cwd() / p, result_path.resolve().parent / p]
        found = next((t for t in tries if t.exists()), None)
        if found is None:
            raise CLIError(f"the result names the recording {call} (relative to where it was scored), and it is "
                           f"not found from here or next to {result_path}: run --pin-from from the folder it was "
                           "scored in, or score it again with an absolute path")
        p = found
    p = p.resolve()
    if out is None:
        return str(p)
    return os.path.relpath(p, out.resolve().parent)


def _resolved(path: str | None) -> str | None:
    """The absolute path of a recording (the result's ``source.file_resolved``), or None."""
    return str(Path(path).resolve()) if path else None


def _cmd_pin(args: argparse.Namespace) -> int:
    if args.at is not None or args.expect is not None or args.expectations:
        raise CLIError("--pin-from writes expectations; it does not take --at/--expect/--expectations")
    try:
        result = json.loads(Path(args.pin_from).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot read the result {args.pin_from}: {exc}") from None
    try:
        doc = pin(result, args.event, flagged=args.flagged, mode=args.pin)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.flagged and not doc["expect"]:
        print("livejudge: --flagged: the call has no flagged moments, so the expectations hold none (checking "
              "them lists the moments and passes); to keep a moment that passed in CI, pin it with --event N "
              "(the numbered list of `livejudge check CALL`)", file=sys.stderr)
    elif args.flagged:  # pinned something, but not every flagged moment: say which were left out, and why
        note = unpinned_flagged([Verdict.from_dict(v) for v in result["verdicts"]])
        if note:
            print(f"livejudge: --flagged: {note}", file=sys.stderr)
    if doc.get("call"):
        src = result.get("source") or {}
        doc["call"] = _call_for(doc["call"], Path(args.pin_from), Path(args.out) if args.out else None,
                                src.get("file_resolved") or src.get("record_resolved"))
    text = json.dumps(doc, indent=2) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
        print(f"livejudge: {len(doc['expect'])} expectation(s) written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser(
        "check", help="check pinned expectations (yield/hold at a moment) on a recorded call or its result JSON, for CI",
        formatter_class=HelpFormatter,
        # the prose as one line (the formatter wraps it whole: line by line it came out ragged), the
        # examples as they are (each fits 80 columns: one wrapped mid-command; a trial)
        description=(" ".join(__doc__.split("\n\n")[1].split()) + "\n\n" + __doc__.split("\n\n")[2]).replace(
            "the ``EXPECTABLE`` verdicts of ``livejudge.timing.verdicts``", "the moments `check` can pin").replace(
            "::", ":").replace("``", "`"),
        epilog=textwrap.fill("exit codes: 0 every expectation passed · 3 one failed (as a --fail-if gate) · 1 the call failed "
               "mid-way · 2 bad input or usage (one line says what) · 130 Ctrl-C · 143 SIGTERM · 129 SIGHUP (check "
               "writes no result, so a stopped check leaves nothing behind)", width=78))
    p.add_argument("call", nargs="?", default=None,
                   help="the recording (stereo, user and agent on separate channels), or a result .json "
                        "(its verdicts are read as they are, with the thresholds it was scored with)")
    p.add_argument("--user", default=None, metavar="A.wav", help="the user's side as its own file (with --agent)")
    p.add_argument("--agent", default=None, metavar="B.wav", help="the agent's side as its own file (with --user)")
    p.add_argument("--user-channel", type=int, default=0, help="channel index of the user in CALL")
    p.add_argument("--agent-channel", type=int, default=1, help="channel index of the agent in CALL")
    p.add_argument("--echo-gate", default="auto", choices=("auto", "on", "off"),
                   help="remove the agent's voice leaking into the user channel (as for score)")
    g = p.add_argument_group("expectations")
    g.add_argument("--at", type=float, default=None, metavar="T", help="the caller moment, seconds into the call")
    g.add_argument("--expect", choices=EXPECTS, default=None, help="what the agent must do at T")
    g.add_argument("--within", type=float, default=None, metavar="S",
                   help="with --expect yield: the agent stops at most S seconds after T")
    g.add_argument("--expectations", default=None, metavar="FILE",
                   help="expectations file (JSON, or .toml); its 'call' is used when CALL is not given")
    g.add_argument("--tolerance-s", type=float, default=None,
                   help=f"how far from T the moment may be found, seconds (default: the file's, else {TOLERANCE_S})")
    g.add_argument("--junit", default=None, metavar="OUT.xml", help="write the checks as JUnit XML here")
    g.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                   help="write the call's result document (JSON) here; '-' for stdout")
    g = p.add_argument_group("pinning")
    g.add_argument("--pin-from", default=None, metavar="RESULT.json",
                   help="write expectations from verdicts of this result (to stdout, or -o)")
    g.add_argument("--event", type=int, action="append", default=[], metavar="N",
                   help="the verdict to pin, by its number in `livejudge check CALL` (repeatable)")
    g.add_argument("--flagged", action="store_true", help="pin every flagged caller moment")
    g.add_argument("--pin", choices=("expected", "observed"), default="expected",
                   help="expected: what a person would do there (keeps CI red until fixed); "
                        "observed: what the agent did (a regression snapshot)")
    g.add_argument("-o", "--out", default=None, metavar="FILE", help="write the pinned expectations here")
    add_session_args(p)  # with the verdict thresholds (add_verdict_args)
    # the flags a result's verdicts do not read, with their defaults: a result given as CALL says which of
    # them were set (a trial's --yield-max-s 0.2 on a result was ignored without a word)
    dests = _rejudge_dests(p)
    rejudge = {a.dest: (a.option_strings[-1], a.default) for a in p._actions
               if a.option_strings and a.dest in dests}
    p.set_defaults(func=cmd_check, _rejudge_flags=rejudge)


def _rejudge_dests(p) -> set[str]:
    """The dests of ``check``'s pipeline, verdict and channel flags (what scoring a recording reads)."""
    groups = [g for g in p._action_groups if g.title and g.title.startswith(("pipeline", "verdicts"))]
    dests = {a.dest for g in groups for a in g._group_actions}
    return dests | {"user_channel", "agent_channel", "echo_gate", "user", "agent"}


__all__ = ["CheckResult", "Expectation", "add_verdict_args", "check", "junit_xml", "load_expectations",
           "moment_lines", "pin", "unpinned_flagged", "verdict_config_from_args"]
