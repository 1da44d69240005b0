"""livejudge and hotato side by side on the same built calls with a known timeline (issue 20).

hotato (https://github.com/attenlabs/hotato, pip ``hotato``; licence MIT, Attention Labs, Inc.)
scans a two-channel recording for turn-taking moments. Its public scan API is used as its CLI
``hotato scan`` does (``hotato.scan.scan_recording``: its energy VAD at 20 ms / 10 ms hop, its
candidate walk), version pinned to 1.20.0 (``pip install hotato==1.20.0``; it adds no other
package). hotato makes no claim about intent ("energy is not intent"); these are its timing facts.

Calls: ``benchmarks/vad_bounds.random_dialogue`` (real clips, random gaps, talk-overs, barge-ins
with and without a yield, backchannels on both sides) under five line conditions — white noise
−55 dBFS; babble −45 dBFS; room noise −50 dBFS with room tails (RT60 0.3 s) and breaths;
telephone line (300–3400 Hz, 8 kHz μ-law, white −50 dBFS); speakerphone echo (the agent through
a small loudspeaker and a room into the user's microphone at −18 dB, 50 ms; ``echo_speakerphone``)
— ``--seeds`` calls each, written as 16-bit stereo WAVs in both channel orders (user on channel
0, or on channel 1). Both tools read the same file with the same channel assignment.

livejudge: the path ``livejudge score`` takes (``open_call`` → ``gate_source(--echo-gate auto)``
→ front end, VAD, turns; whole-call ``snapshot_of_call``).
hotato: ``scan_recording(path, caller_channel, agent_channel, min_gap_sec=0.01)``, read as events:
  * response (user→agent transition): ``long_response_gap`` (caller turn end → next agent onset;
    with ``min_gap_sec`` 0.01 every gap, not only long ones); hotato has no event for an agent
    that starts before the caller ends (a talk-over), so those are missed by construction;
  * barge-in by the user: ``overlap_while_agent_talking`` at ``t_sec``; yield =
    ``agent_reaction.after_sec`` when ``went_silent_within_search``, else none (kept talking);
    a candidate at the onset of a caller run hotato itself flags ``echo_correlated_activity`` is
    dropped (its own echo caveat);
  * barge-in by the agent (talk-over): ``agent_start_during_caller`` at ``t_sec``; yield = the
    caller's ``caller_kept_talking_sec`` when given;
  * backchannel: no such class.

Same matching for both (``MATCH_S`` = 0.3 s, as benchmarks/vad_bounds.py): a measured event
matches an unmatched truth event of the same kind (and speaker) whose onset (the agent's onset
for a response) is within MATCH_S, nearest first. Recall = matched truth / truth; precision =
matched measured / measured. Latency error = measured − truth gap over matched responses.
Yield detection: over matched barge-ins, "yielded" (a yield time) vs "kept talking" (none) as in
the truth; yield error over those both call yielded.

    python benchmarks/hotato_compare.py [--seeds 3] [--json benchmarks/results/hotato_compare.json]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vad_bounds import MATCH_S, random_dialogue  # noqa: E402

from livejudge.audio import open_call  # noqa: E402
from livejudge.session import snapshot_of_call  # noqa: E402
from livejudge.timing.echo import gate_source  # noqa: E402

CONDITIONS = {
    "white -55": dict(noise_dbfs=-55.0),
    "babble -45": dict(noise_dbfs=-45.0, noise_kind="babble"),
    "room -50 +tails": dict(noise_dbfs=-50.0, noise_kind="room", room_rt60_s=0.3, room_drr_db=10.0,
                            breath_dbfs=-44.0),
    "telephone": dict(noise_dbfs=-50.0, telephone_line=True),
    "echo -18 dB": dict(noise_dbfs=-55.0, echo_gain_db=-18.0, echo_delay_s=0.05, echo_speakerphone=True),
}


def _write(call, path: Path, user_first: bool) -> tuple[int, int]:
    cols = (call.user, call.agent) if user_first else (call.agent, call.user)
    sf.write(path, np.clip(np.stack(cols, axis=1), -1, 1), 16000, subtype="PCM_16")
    return (0, 1) if user_first else (1, 0)


def livejudge_events(path: Path, user_ch: int, agent_ch: int) -> dict:
    """Events the way ``livejudge score`` measures them: responses, barge-ins, backchannels."""
    reader = open_call(path, user_channel=user_ch, agent_channel=agent_ch)
    try:
        call, _ = gate_source(reader, "auto", log=False)
        if hasattr(call, "read_all"):
            call = call.read_all()
        snap = snapshot_of_call(call)
    finally:
        reader.close()
    return {
        "responses": [(t.to_onset_s, t.gap_s) for t in snap.transitions if t.is_response],
        "barge_ins": [(b.by, b.onset_s, b.yield_s) for b in snap.barge_ins],
        "backchannels": [(b.channel, b.onset_s) for b in snap.backchannels],
    }


def hotato_events(path: Path, user_ch: int, agent_ch: int) -> dict:
    """hotato's scan candidates read as the same events (see the module docstring)."""
    from hotato.scan import scan_recording

    scan = scan_recording(str(path), caller_channel=user_ch, agent_channel=agent_ch, min_gap_sec=0.01)
    cands = scan["candidates"]
    echo_t = {c["t_sec"] for c in cands if c["kind"] == "echo_correlated_activity"}
    resp, barge = [], []
    for c in cands:
        if c["kind"] == "long_response_gap" and c["agent_reaction"]["next_agent_onset_sec"] is not None:
            resp.append((c["agent_reaction"]["next_agent_onset_sec"], c["durations"]["gap_sec"]))
        elif c["kind"] == "overlap_while_agent_talking" and c["t_sec"] not in echo_t:
            r = c["agent_reaction"]
            barge.append(("user", c["t_sec"], r["after_sec"] if r["went_silent_within_search"] else None))
        elif c["kind"] == "agent_start_during_caller":
            barge.append(("agent", c["t_sec"], c["durations"].get("caller_kept_talking_sec")))
    return {"responses": sorted(resp), "barge_ins": sorted(barge, key=lambda b: b[1]), "backchannels": None}


def _match(truth: list, meas: list, key) -> list[tuple[int, int]]:
    """Pairs (truth index, measured index): nearest onsets first, each used once, ≤ MATCH_S."""
    pairs = sorted((abs(key(t) - key(m)), i, j) for i, t in enumerate(truth) for j, m in enumerate(meas)
                   if abs(key(t) - key(m)) <= MATCH_S)
    used_t, used_m, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_t and j not in used_m:
            used_t.add(i)
            used_m.add(j)
            out.append((i, j))
    return out


def score(truth: dict, meas: dict) -> dict:
    """Counts and error lists of one call for one tool."""
    out = {"lat_err_ms": [], "resp_truth": len(truth["responses"]), "resp_meas": len(meas["responses"]),
           "resp_hit": 0, "barge_truth": len(truth["barge_ins"]), "barge_meas": len(meas["barge_ins"]),
           "barge_hit": 0, "yield_right": 0, "yield_n": 0, "yield_err_ms": [], "bc_truth": len(truth["backchannels"]),
           "bc_right": None, "bc_false": None}
    for i, j in _match(truth["responses"], meas["responses"], key=lambda r: r[0]):
        out["resp_hit"] += 1
        out["lat_err_ms"].append(1000 * (meas["responses"][j][1] - truth["responses"][i][1]))
    for by in ("user", "agent"):
        tb = [b for b in truth["barge_ins"] if b[0] == by]
        mb = [b for b in meas["barge_ins"] if b[0] == by]
        for i, j in _match(tb, mb, key=lambda b: b[1]):
            out["barge_hit"] += 1
            ty, my = tb[i][2], mb[j][2]
            out["yield_n"] += 1
            out["yield_right"] += int((ty is None) == (my is None))
            if ty is not None and my is not None:
                out["yield_err_ms"].append(1000 * (my - ty))
    if meas["backchannels"] is not None:
        hits = 0
        for c in ("user", "agent"):
            tb = [b for b in truth["backchannels"] if b[0] == c]
            mb = [b for b in meas["backchannels"] if b[0] == c]
            hits += len(_match(tb, mb, key=lambda b: b[1]))
        out["bc_right"] = hits
        out["bc_false"] = len(meas["backchannels"]) - hits
    return out


def _sum(rows: list[dict]) -> dict:
    tot: dict = {}
    for r in rows:
        for k, v in r.items():
            if k in ("tool", "condition", "seed", "user_channel", "error"):
                continue
            if v is None:
                tot.setdefault(k, None)
            elif isinstance(v, list):
                tot[k] = tot.get(k, []) + v
            else:
                tot[k] = (tot.get(k) or 0) + v
    return tot


def summary(tot: dict) -> dict:
    def q(xs, p):
        return round(float(np.percentile(xs, p)), 1) if xs else None

    def ratio(a, b):
        return round(a / b, 3) if b else None

    return {
        "latency_err_median_ms": q(tot["lat_err_ms"], 50),
        "latency_err_p95_abs_ms": round(float(np.percentile(np.abs(tot["lat_err_ms"]), 95)), 1) if tot["lat_err_ms"] else None,
        "n_latency": len(tot["lat_err_ms"]),
        "transition_recall": ratio(tot["resp_hit"], tot["resp_truth"]),
        "transition_precision": ratio(tot["resp_hit"], tot["resp_meas"]),
        "responses": f"{tot['resp_hit']}/{tot['resp_truth']} truth, {tot['resp_hit']}/{tot['resp_meas']} measured",
        "barge_in_recall": ratio(tot["barge_hit"], tot["barge_truth"]),
        "barge_in_precision": ratio(tot["barge_hit"], tot["barge_meas"]),
        "barge_ins": f"{tot['barge_hit']}/{tot['barge_truth']} truth, {tot['barge_hit']}/{tot['barge_meas']} measured",
        "backchannels_right": None if tot["bc_right"] is None else f"{tot['bc_right']}/{tot['bc_truth']}",
        "backchannels_false": tot["bc_false"],
        "yield_detection": f"{tot['yield_right']}/{tot['yield_n']}",
        "yield_detection_rate": ratio(tot["yield_right"], tot["yield_n"]),
        "yield_err_median_ms": q(tot["yield_err_ms"], 50),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="random calls per condition (each in both channel orders)")
    ap.add_argument("--json", default=None, help="write the rows and the summary here")
    args = ap.parse_args()
    try:
        import hotato
    except ImportError:
        sys.exit("hotato is not installed: pip install hotato==1.20.0 (MIT)")
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cname, line in CONDITIONS.items():
            for seed in range(args.seeds):
                d = random_dialogue(seed, **line)
                tr = d.truth
                truth = {"responses": [(t.to_onset_s, t.gap_s) for t in tr.transitions if t.is_response],
                         "barge_ins": [(b.by, b.onset_s, b.yield_s) for b in tr.barge_ins],
                         "backchannels": [(b.channel, b.onset_s) for b in tr.backchannels]}
                for user_first in (True, False):
                    path = Path(tmp) / f"call_{seed}_{int(user_first)}.wav"
                    uc, ac = _write(d.call, path, user_first)
                    for tool, fn in (("livejudge", livejudge_events), ("hotato", hotato_events)):
                        try:
                            ev = fn(path, uc, ac)
                            rows.append({"tool": tool, "condition": cname, "seed": seed, "user_channel": uc,
                                         **score(truth, ev)})
                        except Exception as exc:  # a traceback is a result too: count it
                            rows.append({"tool": tool, "condition": cname, "seed": seed, "user_channel": uc,
                                         "error": f"{type(exc).__name__}: {exc}"})
    import datetime
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    out = {"command": "python " + " ".join(["benchmarks/hotato_compare.py"] + sys.argv[1:]), "commit": commit,
           "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "hotato_version": getattr(hotato, "__version__", "1.20.0"), "hotato_licence": "MIT", "match_s": MATCH_S,
           "calls": len(rows) // 2, "conditions": list(CONDITIONS), "by_tool": {}, "by_condition": {}}
    for tool in ("livejudge", "hotato"):
        ok = [r for r in rows if r["tool"] == tool and "error" not in r]
        out["by_tool"][tool] = {**summary(_sum(ok)), "errors": sum(1 for r in rows if r["tool"] == tool and "error" in r)}
        out["by_condition"][tool] = {c: summary(_sum([r for r in ok if r["condition"] == c])) for c in CONDITIONS}
    L, H = out["by_tool"]["livejudge"], out["by_tool"]["hotato"]
    print(f"{out['calls']} calls ({len(CONDITIONS)} conditions × {args.seeds} seeds × 2 channel orders), "
          f"match within {MATCH_S} s; hotato {out['hotato_version']} (MIT)\n")
    print(f"| | livejudge | hotato {out['hotato_version']} |\n|---|---|---|")
    f = lambda s: f"{s['latency_err_median_ms']} / {s['latency_err_p95_abs_ms']} ms (n={s['n_latency']})"  # noqa: E731
    print(f"| latency error, median / p95 abs | {f(L)} | {f(H)} |")
    print(f"| transition (user→agent) recall / precision | {L['transition_recall']} / {L['transition_precision']} | "
          f"{H['transition_recall']} / {H['transition_precision']} |")
    print(f"| barge-in recall / precision | {L['barge_ins']} | {H['barge_ins']} |")
    print(f"| backchannels classified right (false) | {L['backchannels_right']} ({L['backchannels_false']}) | no such class |")
    print(f"| yield detected right (yielded vs kept talking) | {L['yield_detection']} | {H['yield_detection']} |")
    print(f"| yield-time error median | {L['yield_err_median_ms']} ms | {H['yield_err_median_ms']} ms |")
    print(f"| tracebacks | {L['errors']} | {H['errors']} |")
    print("\nper condition (latency median/p95 ms, transition R/P, barge-in R/P, yield right):")
    for c in CONDITIONS:
        for tool in ("livejudge", "hotato"):
            s = out["by_condition"][tool][c]
            print(f"  {c:16s} {tool:9s} {s['latency_err_median_ms']}/{s['latency_err_p95_abs_ms']}  "
                  f"{s['transition_recall']}/{s['transition_precision']}  {s['barge_in_recall']}/{s['barge_in_precision']}  "
                  f"{s['yield_detection']}")
    print(f"\n{time.perf_counter() - t0:.0f} s")
    if args.json:
        out["rows"] = rows
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
