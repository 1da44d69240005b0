"""`livejudge probe`: a scripted human caller that stresses a live agent's turn-taking.

The caller is made of the shipped human recordings (``livejudge/data/audio/human``) and
plays stressors, each a moment with its expectation (``livejudge.commands.check``):

* a filler start ("um… so"): a short syllable, a pause, then the request: the agent waits;
* a backchannel ("mm") 1.5 s into the agent's reply: the agent holds;
* a pause mid-sentence (``--pause-mid-s``, 0.6–1.0 s): the agent waits;
* a hard interruption 1.0 s into the agent's reply: the agent yields within ``--yield-max-s``;
* a self-correction ("four queen of clubs … seven of clubs"): the agent waits;
* ``--line telephone`` plays the caller through a μ-law 8 kHz line, ``--line noise`` puts a
  continuous white-noise floor of ``NOISE_DBFS`` under the caller (silences included), the
  level of ``benchmarks/verdicts.py``'s "white-50" line.

It runs over every route ``attach`` has (``--ws-url`` with ``--protocol pipecat|twilio|
pipecat-eval``, ``--runner`` with its eval wire, ``/ws-client`` or SmallWebRTC, ``--webrtc``):
the call itself is ``attach``'s (``livejudge.commands.attach``) with this caller in place of
``--input-wav``. At the end it prints a scorecard (each moment: expectation, verdict, PASS or
FAIL; each response latency against the human bands, reported, not gated: an agent that waits
out 1 s pauses without words answers slower than people do), and writes ``--scorecard FILE``
(JSON), ``--junit OUT.xml`` (one testcase per moment, ``check``'s writer; the ``--fail-if`` gates'
suite after them) and ``--expectations-out
FILE`` (the moments as an expectations file naming the ``--record``ed call, so
``livejudge check --expectations FILE`` re-checks the same recording offline).

A pause moment passes when the agent waits, which an agent that never speaks again does too: a
moment of "the agent waited" after which the agent never spoke is not measured (an ``ERROR`` in
the scorecard, an ``error`` in JUnit), not a pass.

Exit codes: 0 every moment passed, 1 the call failed, 2 usage or input error, 3 a moment failed or
was not measured, or a ``--fail-if`` gate failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from livejudge.commands.check import NEVER_SPOKE, NOT_PLAYED, SILENT_AFTER  # noqa: F401 (re-exported)
from livejudge.commands.runner import EXIT_GATE, CLIError

PAUSE_RANGE_S = (0.6, 1.0)
"""The mid-sentence pause the probe may play, seconds (issue 20: 0.6–1.0 s)."""
BACKCHANNEL_S = 0.4
"""Length of the probe's "mm" (the first syllable of "five five", CMU ARCTIC), seconds."""
FILLER_S = 0.45
"""Length of the filler syllable that opens the first turn, seconds."""
NOISE_DBFS = -50.0
"""``--line noise``: RMS of the caller's continuous white-noise floor, dBFS."""


@dataclass(frozen=True)
class ProbeMoment:
    """A stressor moment inside a probe turn.

    Attributes:
        name: label ("backchannel", "pause mid-sentence", ...).
        turn: index of the probe turn that holds it.
        offset_s: from the turn's first sample to the moment (the caller onset, or the pause's start).
        expect: "yield" or "hold" (``check.Expectation``).
        kind: the verdict kind that judges it ("barge_in", "backchannel", "pause").
        within_s: for a barge-in, the latest yield, seconds (None: the verdict's ``yield_max_s``).
    """

    name: str
    turn: int
    offset_s: float
    expect: str
    kind: str
    within_s: float | None = None


@dataclass(frozen=True)
class ProbeTurn:
    """One probe turn: audio, and when it starts.

    ``mode``: "first" (at the call's start), "after_reply" (``pause_s`` after the agent went quiet,
    once it spoke after the last floor turn), "into_reply" (``after_s`` after the agent's reply to
    the last floor turn started). ``floor``: False for a backchannel (it does not ask for a reply).
    """

    samples: np.ndarray
    name: str
    mode: str
    after_s: float = 0.0
    floor: bool = True


def build_script(pause_s: float = 0.8, line: str = "clean") -> tuple[list[ProbeTurn], list[ProbeMoment]]:
    """The probe's turns and moments, built from trimmed shipped human clips.

    Args:
        pause_s: the mid-sentence pause, seconds, within ``PAUSE_RANGE_S``.
        line: "clean", "telephone" (μ-law 8 kHz round trip) or "noise" (the turns are left as
            they are: ``ProbeCaller(noise_dbfs=NOISE_DBFS)`` adds the floor to the whole line).
    Returns:
        (turns, moments); every offset is exact: the clips are trimmed to their speech bounds.
    Raises:
        ValueError: pause_s outside ``PAUSE_RANGE_S`` or an unknown line.
    """
    from livejudge.audio import SAMPLE_RATE, fade_edges
    from livejudge.testing.dialogues import load_clip, trim

    lo, hi = PAUSE_RANGE_S
    if not lo <= pause_s <= hi:
        raise ValueError(f"--pause-mid-s must be within {lo}–{hi} s (a pause mid-sentence), got {pause_s}")
    if line not in ("clean", "telephone", "noise"):
        raise ValueError(f"--line must be clean, telephone or noise, got {line!r}")
    sr = SAMPLE_RATE

    def clip(name: str) -> np.ndarray:
        return 0.9 * trim(load_clip(name))

    def gap(s: float) -> np.ndarray:
        return np.zeros(int(round(s * sr)), np.float32)

    filler = fade_edges(clip("cmu_cards_004")[: int(FILLER_S * sr)])
    mm = fade_edges(clip("cmu_cards_004")[: int(BACKCHANNEL_S * sr)])
    t1a, t1b = filler, clip("cmu_cards_005")
    t3a, t3b = clip("librivox_austen_0880"), clip("librivox_austen_0890")  # one sentence in the book
    t5a, t5b = clip("cmu_cards_002"), clip("cmu_cards_003")  # "four queen of clubs … seven of clubs"
    fill_gap, correct_gap = 0.7, 0.7
    turns = [
        ProbeTurn(np.concatenate([t1a, gap(fill_gap), t1b]), "filler start", "first"),
        ProbeTurn(mm, "backchannel", "into_reply", 1.5, floor=False),
        ProbeTurn(np.concatenate([t3a, gap(pause_s), t3b]), "pause mid-sentence", "after_reply"),
        ProbeTurn(clip("librivox_austen_0930"), "hard interruption", "into_reply", 1.0),
        ProbeTurn(np.concatenate([t5a, gap(correct_gap), t5b]), "self-correction", "after_reply"),
        ProbeTurn(clip("cmu_numbers"), "closing question", "after_reply"),
    ]
    moments = [
        ProbeMoment("filler start", 0, t1a.size / sr, "yield", "pause"),
        ProbeMoment("backchannel", 1, 0.0, "hold", "backchannel"),
        ProbeMoment("pause mid-sentence", 2, t3a.size / sr, "yield", "pause"),
        ProbeMoment("hard interruption", 3, 0.0, "yield", "barge_in"),
        ProbeMoment("self-correction", 4, t5a.size / sr, "yield", "pause"),
    ]
    if line == "telephone":
        turns = [dataclasses.replace(t, samples=_telephone(t.samples)) for t in turns]
    return turns, moments


def _telephone(x: np.ndarray) -> np.ndarray:
    """The caller's audio through a telephone line: 8 kHz, μ-law (8 bits) and back, same length."""
    from livejudge.audio import SAMPLE_RATE, resample

    y = resample(x, SAMPLE_RATE, 8000)
    mu = 255.0
    q = np.round(np.sign(y) * np.log1p(mu * np.minimum(np.abs(y), 1.0)) / np.log1p(mu) * 127) / 127
    y = np.sign(q) * np.expm1(np.abs(q) * np.log1p(mu)) / mu
    out = resample(y.astype(np.float32), 8000, SAMPLE_RATE)
    return out[: x.size] if out.size >= x.size else np.pad(out, (0, x.size - out.size))


class ProbeCaller:
    """``ScriptedCaller`` with the probe's start rules (``ProbeTurn.mode``); same ``placed``
    record (each turn's start on the session clock) and the same ``chunk`` interface."""

    def __init__(self, turns: list[ProbeTurn], *, pause_s: float = 0.8, lead_s: float = 0.5,
                 max_wait_s: float = 8.0, noise_dbfs: float | None = None, seed: int = 0) -> None:
        from livejudge.sources.ws import CallerTurn, ScriptedCaller

        self._inner = ScriptedCaller([CallerTurn(t.samples, t.name) for t in turns], pause_s=pause_s,
                                     lead_s=lead_s, max_wait_s=max_wait_s)
        self.probe_turns = turns
        self._inner._due = self._due  # type: ignore[method-assign]
        self._floor_end_s: float | None = None
        self._noise = None if noise_dbfs is None else (10 ** (noise_dbfs / 20), np.random.default_rng(seed))

    placed = property(lambda self: self._inner.placed)
    done = property(lambda self: self._inner.done)
    last_end_s = property(lambda self: self._inner.last_end_s)
    turns = property(lambda self: self._inner.turns)
    speaking = property(lambda self: self._inner.speaking)

    def not_played(self) -> list[int]:
        return self._inner.not_played()

    def finish(self, end_s: float) -> list[str]:
        return self._inner.finish(end_s)

    def _due(self, now_s: float, agent) -> bool:
        c = self._inner
        turn = self.probe_turns[c._i]
        eps = 1e-9
        if turn.mode == "first" or c._i == 0:
            return now_s + eps >= c.lead_s
        last = c._last_end_s
        assert last is not None
        if now_s - last + eps >= c.max_wait_s:
            return True
        anchor = self._floor_end_s if self._floor_end_s is not None else last
        if turn.mode == "into_reply":
            onset = agent.first_onset_after(anchor)
            return onset is not None and now_s + eps >= onset + turn.after_s
        spoke = agent.last_voice_s is not None and agent.last_voice_s > anchor
        return (spoke and now_s - agent.last_voice_s + eps >= c.pause_s  # type: ignore[operator]
                and now_s - last + eps >= c.pause_s)

    def chunk(self, k: int, n: int, agent) -> np.ndarray:
        c = self._inner
        before = c._cur
        out = c.chunk(k, n, agent)
        if before is not None and c._cur is None and self.probe_turns[before[0]].floor:
            self._floor_end_s = c._last_end_s
        if self._noise is not None:
            level, rng = self._noise
            out = out + (rng.standard_normal(out.size) * level).astype(np.float32)
        return out


def moments_on_clock(moments: list[ProbeMoment], placed: list[dict]):
    """The moments as ``check.Expectation``s on the session clock, from the placed turns."""
    from livejudge.commands.check import Expectation

    out = []
    for m in moments:
        if not _reached(m, placed):
            continue  # the call ended before this moment was played
        at = placed[m.turn]["start_s"] + m.offset_s
        out.append(Expectation(round(at, 4), m.expect, m.within_s, m.kind, f"{m.name} at {at:.2f} s"))
    return out


def _reached(m: ProbeMoment, placed: list[dict]) -> bool:
    """Whether the call got to moment ``m``: its turn was placed and not cut off before it
    (``ScriptedCaller.finish`` marks a cut turn with ``cut_at_s``)."""
    if m.turn >= len(placed):
        return False
    cut = placed[m.turn].get("cut_at_s")
    return cut is None or placed[m.turn]["start_s"] + m.offset_s < cut


def scorecard(moments: list[ProbeMoment], placed: list[dict], result: dict, tolerance_s: float) -> dict:
    """The probe's scorecard from a live call's result document (pure).

    Returns: {"moments": [{name, expect, at_s, verdict, passed, status, error, reason}], "missed":
    [names not played], "agent_backchannels": [{at_s, length_s}] (the agent's speech inside the
    caller's that the timeline reads as backchannels: no moment flags it), "latencies": [{t_s, gap_s,
    band}], "passed", "failed", "errors", "not_played", "total"}. ``status`` is "pass", "fail" or
    "error" (not measured: a pause the agent "waited" out without speaking after it, ``error``
    says why; ``passed`` is then False). A moment the call ended before (``missed``) is not measured
    either: counted in ``errors`` and ``not_played`` (a Ctrl-C'd probe's card read "passed 1, failed
    0, errors 0", green, with four moments never played; a trial).
    """
    from livejudge.commands.check import check_call
    from livejudge.timing.verdicts import Verdict, VerdictConfig

    vs = [Verdict.from_dict(v) for v in result.get("verdicts") or []]
    ymax = (result.get("verdict_config") or {}).get("yield_max_s", VerdictConfig().yield_max_s)
    exps = [dataclasses.replace(e, within_s=ymax) if e.kind == "barge_in" and e.within_s is None else e
            for e in moments_on_clock(moments, placed)]
    rows = []
    for e, r in zip(exps, check_call(exps, vs, result, tolerance_s)):  # check's rules: the re-check agrees
        rows.append({"name": e.name.split(" at ")[0], "at_s": e.at_s, "expect": e.expect, "kind": e.kind,
                     "within_s": e.within_s, "passed": r.passed, "status": r.status, "error": r.error,
                     "reason": r.reason, "verdict": None if r.verdict is None else r.verdict.to_dict(), "_result": r})
    lat = [{"t_s": round(v.t_s, 3), "gap_s": v.value_s, "band": v.outcome, "human": v.ok}
           for v in vs if v.kind == "latency"]
    missed = [m.name for m in moments if not _reached(m, placed)]
    # the agent's speech inside the caller's, under backchannel_max_s: the timeline reads it as a
    # backchannel, so no moment flags it, yet a dropped reply reads the same (a trial: the rude
    # agent cut into a 0.2 s dip, spoke 0.93 s over the caller and stopped; every moment passed there)
    over = [{"at_s": round(float(b["onset_s"]), 3),
             "length_s": round(float(b["offset_s"]) - float(b["onset_s"]), 3)}
            for b in result.get("backchannels") or [] if b.get("channel") == "agent"]
    return {"moments": rows, "missed": missed, "agent_backchannels": over,
            "latencies": lat, "expectations": exps,
            "passed": sum(r["status"] == "pass" for r in rows), "failed": sum(r["status"] == "fail" for r in rows),
            "errors": sum(r["status"] == "error" for r in rows) + len(missed), "not_played": len(missed),
            "total": len(rows) + len(missed)}


def print_scorecard(card: dict, out=sys.stdout) -> None:
    print("livejudge probe: scorecard", file=out)
    from livejudge.commands.check import expect_words

    if not card["moments"] and card["missed"]:  # five "not played" lines said less (a trial)
        ended = f" ({card['ended']})" if card.get("ended") else ""
        print(f"  none of the {len(card['missed'])} moments was played: the call ended{ended} before the caller's "
              "first turn", file=out)
    for r in card["moments"]:
        exp = expect_words(r["expect"], r["kind"]) + (f" within {r['within_s']:g} s" if r["within_s"] is not None else "")
        status = r.get("status") or ("pass" if r["passed"] else "fail")  # older scorecards: no status
        label = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[status]
        why = f"not measured: {r['error']} ({r['reason']})" if r.get("error") else r["reason"]
        print(f"  {label:<5} {r['name']:<20} at {r['at_s']:6.2f} s  expect {exp:<18} {why}", file=out)
    for name in card["missed"] if card["moments"] else []:
        print(f"  FAIL  {name:<20} not played (the call ended first)", file=out)
    over = card.get("agent_backchannels") or []
    if over:
        at = ", ".join(f"{b['at_s']:.2f} s ({b['length_s']:.2f} s)" for b in over[:5])
        at += " …" if len(over) > 5 else ""
        print(f"  note: the agent spoke over the caller for under 1 s at {at}: read as "
              f"{'a backchannel' if len(over) == 1 else 'backchannels'}, which no moment flags (HEURISTIC: without "
              "words a reply started and dropped reads the same); the caller asked for none: listen there",
              file=out)
    if card["latencies"]:
        gaps = [x["gap_s"] for x in card["latencies"] if x["gap_s"] is not None]
        bands = ", ".join(f"{x['gap_s']:.2f} s {x['band']}" for x in card["latencies"] if x["gap_s"] is not None)
        print(f"  latency (reported against the human bands, not gated): median {np.median(gaps):.2f} s; {bands}",
              file=out)
    missed = len(card["missed"])
    errors = card.get("errors", 0) - missed
    total = card["passed"] + card["failed"] + errors + missed
    why = [f"{errors} not measured: the agent did not speak after them"] if errors else []
    why += [f"{missed} not played: the call ended first"] if missed and card["moments"] else []  # else said above
    print(f"livejudge probe: {card['passed']} of {total} moment(s) passed"
          + (f" ({'; '.join(why)})" if why else ""), file=out)


def cmd_probe(args: argparse.Namespace) -> int:
    from livejudge.commands import attach as A
    from livejudge.commands.check import FORMAT_VERSION, TOLERANCE_S
    from livejudge.sources.ws import AttachConfig, ScriptedSource, redact_url

    # attach's audio-device flags, which a probe has no use for (no microphone, no speakers: the agent's
    # audio is timed at arrival, with no jitter buffer); they were taken and ignored (a trial)
    unused = [flag for flag, given in (("--list-devices", args.list_devices), ("--input-device", args.input_device),
                                       ("--output-device", args.output_device), ("--no-aec", args.no_aec),
                                       ("--jitter-s", args.jitter_s is not None)) if given]
    if unused:
        raise CLIError(f"probe plays its own caller and uses no audio device (the agent's audio is timed as it "
                       f"arrives): drop {', '.join(unused)}")
    args.jitter_s = AttachConfig.jitter_s  # unused without speakers (sources.ws: no output, no prebuffer)
    if args.input_wav:
        raise CLIError("probe plays its own caller: drop --input-wav (or use livejudge attach --input-wav)")
    if args.barge_in:
        raise CLIError("probe places its own interruptions: drop --barge-in")
    if args.expectations_out and not args.record:
        raise CLIError("--expectations-out names the recorded call: add --record CALL.wav")
    try:
        turns, moments = build_script(args.pause_mid_s, args.line)
        caller = ProbeCaller(turns, pause_s=args.pause_s, noise_dbfs=NOISE_DBFS if args.line == "noise" else None,
                             seed=args.seed)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.judge is None:  # --judge-url alone asks for the service's judge (it was ignored: a trial)
        args.judge = "auto" if args.judge_url else "none"
    args.no_playback = True  # a scripted caller: agent audio is timed at arrival, no speakers
    probe_junit, args.junit = args.junit, None  # --junit is the moments' here, and the gates' beside them
    gates_junit = None
    if probe_junit and args.fail_if:  # the gates' suite, written by the call, goes into the probe's file
        fd, gates_junit = tempfile.mkstemp(prefix="livejudge-probe-gates-", suffix=".xml")
        os.close(fd)
        args.junit = gates_junit
        args.announce_junit = False  # a scratch copy: the probe's own file is announced
    tmp = None
    if not args.json_out or args.json_out == "-":
        fd, tmp = tempfile.mkstemp(prefix="livejudge-probe-", suffix=".json")
        os.close(fd)
    json_out = tmp or args.json_out
    want_stdout = args.json_out == "-"
    args.json_out = json_out
    args.announce_json = tmp is None  # a scratch copy, removed at the end: not announced
    call = A._parse(args)
    src = call.source
    source = ScriptedSource(caller)  # type: ignore[arg-type]
    info = {"probe": {"line": args.line, "pause_mid_s": args.pause_mid_s,
                      "moments": [dataclasses.asdict(m) for m in moments]}}
    try:
        if src.runner:
            code = A._attach_runner(call, source, extra_info=info, title=f"probe --runner {redact_url(src.runner)}")
        else:
            if not src.ws_url:
                raise CLIError("--ws-url is required: the agent's websocket (or --runner URL, --webrtc URL)")
            code = A._run_call(call, src.ws_url, source, title=f"probe {redact_url(src.ws_url)}", extra_info=info)
        try:
            result = json.loads(Path(json_out).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CLIError(f"the call left no result to score ({exc})", 1) from None
        if want_stdout:
            print(json.dumps(result, indent=2))
    finally:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        gates_xml = None
        if gates_junit:
            try:
                gates_xml = Path(gates_junit).read_text(encoding="utf-8") or None
            except OSError:
                pass
            Path(gates_junit).unlink(missing_ok=True)
    tol = TOLERANCE_S
    card = scorecard(moments, caller.placed, result, tol)
    card["ended"] = result.get("source", {}).get("ended")
    print_scorecard(card, sys.stderr if want_stdout else sys.stdout)
    exps = card.pop("expectations")
    results = [r.pop("_result") for r in card["moments"]]
    by_name = {m.name: m for m in moments}
    if args.scorecard:
        _write(args.scorecard, json.dumps({"livejudge_probe": 1, **card, "call_exit_code": code}, indent=2) + "\n")
    if probe_junit:
        # the URL as every other output shows it: a ?token= in it redacted (a trial found it in plain text here)
        _write(probe_junit, probe_junit_xml(results, f"probe {redact_url(src.ws_url or src.runner or '')}",
                                            not_played=[by_name[n] for n in card["missed"]], gates_xml=gates_xml))
        print(f"livejudge: JUnit XML written to {probe_junit}", file=sys.stderr)
    if args.expectations_out:
        rec = Path(args.record).resolve()
        ef = Path(args.expectations_out).resolve()
        try:
            call_ref = os.path.relpath(rec, ef.parent)
        except ValueError:  # another drive (Windows)
            call_ref = str(rec)
        doc = {"livejudge_expectations": FORMAT_VERSION, "call": call_ref, "tolerance_s": tol,
               "verdict_config": result.get("verdict_config"), "pin": "probe",
               "expect": [e.to_dict() for e in exps],
               # what the call ended before: ``check`` fails each (a file of the played ones alone
               # passed the check of a probe that had failed; a trial)
               "not_played": [{"name": n, "expect": by_name[n].expect, "kind": by_name[n].kind}
                              for n in card["missed"]]}
        if not doc["verdict_config"]:
            doc.pop("verdict_config")
        if not doc["not_played"]:
            doc.pop("not_played")
        _write(args.expectations_out, json.dumps(doc, indent=2) + "\n")
        if card["missed"]:
            print(f"livejudge: {args.expectations_out} lists the {len(card['missed'])} moment(s) not played as "
                  "not_played, which `livejudge check` fails: re-run the probe to pin them", file=sys.stderr)
        if card["moments"]:
            print(f"livejudge: re-check the recording with: livejudge check --expectations {args.expectations_out}",
                  file=sys.stderr)
    if code != 0:
        return code
    # 3, as a gate: 1 is a call that failed; a moment not measured is not a pass
    return EXIT_GATE if card["failed"] or card["errors"] or card["missed"] else 0


def probe_junit_xml(results: list, suite: str, not_played: list = (), gates_xml: str | None = None) -> str:
    """JUnit XML of the probe's moments: ``check.junit_xml`` of ``results`` (``check_call``'s, a
    moment not measured already an ``error``) with one ``NotPlayed`` error per moment the call
    ended before (``not_played``: ``ProbeMoment``s; a cut probe's suite read ``tests="1"
    failures="0"``, green; a trial). The same writer as ``livejudge check --junit``, so the
    probe's file and its re-check's agree. ``gates_xml``: the ``--fail-if`` gates' JUnit file as
    the call wrote it (``gates.junit_xml``), whose suites follow the moments' (a trial: a probe
    whose gate failed exited 3 while its file held the moments alone, all green)."""
    import xml.etree.ElementTree as ET

    from livejudge.commands.check import Expectation, junit_xml, not_played_result
    from livejudge.commands.gates import junit_text

    missed = [not_played_result(Expectation(0.0, m.expect, None, m.kind, m.name)) for m in not_played]
    text = junit_xml(list(results) + missed, suite)
    if not gates_xml:
        return text
    root = ET.fromstring(text)
    for s in ET.fromstring(gates_xml).iter("testsuite"):
        root.append(s)
    return junit_text(root)


def _write(path: str, text: str) -> None:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {p}: {exc.strerror or exc}") from None


def register(subparsers) -> None:
    from livejudge.commands.attach import _add_call_flags
    from livejudge.commands.runner import (
        EXIT_CODES_HELP, HelpFormatter, add_judge_args, add_output_args, add_session_args,
    )

    p = subparsers.add_parser(
        "probe", help="call a live agent with a scripted human caller that plays turn-taking stressors; scorecard",
        formatter_class=HelpFormatter, epilog=EXIT_CODES_HELP + " (probe: 3 = a moment failed, as a gate)",
        description=(__doc__.split("\n\n")[1] + "\n\n" + __doc__.split("\n\n")[2]).replace("``", "`"))
    _add_call_flags(p)
    g = p.add_argument_group("probe")
    g.add_argument("--pause-mid-s", type=float, default=0.8,
                   help=f"the caller's pause mid-sentence, seconds ({PAUSE_RANGE_S[0]}–{PAUSE_RANGE_S[1]})")
    g.add_argument("--line", default="clean", choices=("clean", "telephone", "noise"),
                   help=f"the caller's line: clean, telephone (μ-law 8 kHz) or noise (a white floor at {NOISE_DBFS:g} dBFS)")
    g.add_argument("--seed", type=int, default=0, help="the noise draw of --line noise")
    g.add_argument("--scorecard", default=None, metavar="OUT.json", help="write the scorecard (JSON) here")
    g.add_argument("--expectations-out", default=None, metavar="FILE.json",
                   help="write the moments as an expectations file for `livejudge check` (needs --record)")
    add_session_args(p)
    add_judge_args(p)
    add_output_args(p)  # its --junit writes the moments' checks here
    p.set_defaults(func=cmd_probe, judge=None)  # cmd_probe: none, or auto with --judge-url
    for a in p._actions:  # the shared --judge help names auto as the default; the probe's is none
        # attach's flags a probe refuses (its own caller, its own interruptions) or has no use for (no
        # microphone, no speakers): still parsed, so the refusals say why, but not listed (a trial)
        if a.dest in ("input_wav", "barge_in", "no_playback", "no_aec", "input_device", "output_device",
                      "list_devices", "jitter_s"):
            a.help = argparse.SUPPRESS
        if a.dest == "jitter_s":
            a.default = None  # given at all: refused (cmd_probe); its value is set there
        if a.dest == "ws_url":
            a.help = "the agent's websocket, e.g. ws://localhost:8765 (required unless --runner or --webrtc)"
        if a.dest == "junit":  # "the gate results" read as if the moments were not in it
            a.help = "write JUnit XML here: one testcase per moment, and the --fail-if gates' suite after them"
        if a.dest == "judge":
            a.help = ("judge of the agent's voice: none (default: the probe scores turn-taking only, no P(human); "
                      "with --judge-url, the service's judge), or auto/whisper/acoustic/... as in score")


__all__ = ["PAUSE_RANGE_S", "ProbeCaller", "ProbeMoment", "ProbeTurn", "build_script", "moments_on_clock",
           "scorecard"]
