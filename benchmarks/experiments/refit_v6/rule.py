"""Read the ship rule of a refit candidate (README.md beside this file: each candidate's rule fixed before its runs) from the stored JSON.

Prints each part (R1-R4; from v7 on also R1w and R2w; from v9blend also R5; for v10blend also R6 and R7, against
the shipped 0.2.0) with its figures and exits 0 when every
part is met, 1 when one is not, 2 when an input is missing or the inputs cannot be compared
(``same_inputs``). A missing figure (NaN) is never met. Inputs (repo-relative, in benchmarks/results/):
judge_lofo_protocol_v6.json (fold heads, with the shipped head as --compare-head),
judge_wild_measure_only_batch2_shipped.json (the shipped head on the measure-only sources) and
judge_wild_measure_only_batch3_v6.json (the candidate on the same sources, same options);
``--candidate v7`` reads judge_lofo_protocol_v7.json and judge_wild_measure_only_batch4_v7.json.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"
COMPARED_WITH = "7f935a59f8802578"
"""``blend.weights_digest`` of ``whisper-fitted`` 0.1.0, the shipped head every candidate here (v6 to
v9blend) was declared against and compared with; pinned, so that the stored results stay readable
after another head ships."""
SHIPPED_020 = "4ae6423b0f8afc7d"
"""``blend.weights_digest`` of ``whisper-fitted`` 0.2.0 (= the v9blend candidate's weights), which v10blend's R6 and R7
compare with; its figures on R3's and R5's sources are the stored v9blend runs."""
R6_R3_ALLOWANCE = 0.01  # R6 on R3's sources: declared for v10blend before its runs (README.md)
MIN_PEOPLE_ROWS = 20   # R2: fewer held-out-for-both human test rows than this -> read on all people
MAX_FAMILY_DROP = 0.05  # R2
CONDITIONS = ("wideband", "telephone")


def _flag(command: str, flag: str) -> str | None:
    """The value after ``flag`` in a recorded command line, or None."""
    return command.split(f"{flag} ", 1)[1].split()[0] if f"{flag} " in command else None


def _ge(a: float, b: float) -> bool:
    """a >= b, where a missing figure (NaN) is never met."""
    return not (math.isnan(a) or math.isnan(b)) and a >= b


_SUBSET = {"R2w": ", without narrowband people"}


def _family_parts(tag: str, lofo: dict, key: str, fallback: bool = True) -> tuple[str, bool, str]:
    """R2 (or R2w): on each family the shipped head never met, the fold heads' AUC on the people in
    ``lofo[F][key]`` is no more than MAX_FAMILY_DROP below the shipped head's. A family with fewer
    than MIN_PEOPLE_ROWS such human test rows is read on all of its test people, marked (R2, as
    declared); without ``fallback`` (R2w, whose point is the subset) such a family is not met. A
    NaN figure is not met."""
    fams = lofo["compare_head"]["fresh_families"]
    if not fams:
        return (f"{tag} no never-met family more than 0.05 below the shipped head{_SUBSET.get(tag, '')}", False,
                "no never-met family")
    ok, lines = True, []
    for fam in fams:
        s = lofo["lofo"][fam]
        pn = s[key]
        if pn["n_h"] >= MIN_PEOPLE_ROWS:
            x, y, how = pn["auc"], pn["compare_head_auc"], ""
        elif fallback:
            x, y, how = s["auc"], s["compare_head"]["auc"], f" (all people: {pn['n_h']} rows of the subset)"
        else:
            x, y, how = float("nan"), float("nan"), f" (only {pn['n_h']} rows of the subset: not met)"
        ok = ok and _ge(x - y, -MAX_FAMILY_DROP)
        lines.append(f"{fam} {x:.3f} vs {y:.3f} ({x - y:+.3f}){how}")
    return (f"{tag} no never-met family more than 0.05 below the shipped head{_SUBSET.get(tag, '')}", ok, "; ".join(lines))


def same_run_inputs(a: dict, b: dict, what: str) -> list[str]:
    """Why two judge_wild.py runs are not on the same dialogues (empty when they are)."""
    bad = [f"{what} runs differ in {k}" for k in
           ("manifest", "n_clips", "seed", "left_out_families", "left_out_silent_clips", "agent_speech_s",
            "user_max_s", "unit") if a.get(k) != b.get(k)]
    if list(a["conditions"]) != list(b["conditions"]):
        bad.append(f"{what} runs differ in conditions")
    return bad


def same_inputs(lofo: dict, shipped: dict, cand: dict, blend: float | None = None) -> list[str]:
    """Why the three results cannot be compared (empty when they can): the candidate's measure-only
    run must use the shipped run's manifests and options, its head must be the one the LOFO run
    shipped (``--ship``), and the LOFO run's compare head must be the shipped head. For a candidate
    declared a blend (``blend``: its weight), the LOFO run must have blended with that weight and
    with the shipped head's weights (sha256 of weights.safetensors, as ``blend.weights_digest``)."""
    bad = same_run_inputs(shipped, cand, "measure-only")
    ship, head = _flag(lofo["command"], "--ship"), _flag(cand["command"], "--head")
    if ship is None or ship != head:
        bad.append(f"the measure-only head ({head}) is not the LOFO run's --ship head ({ship})")
    shipped_digest = COMPARED_WITH
    got_digest = lofo["compare_head"].get("weights_sha256_16")  # recorded by runs after v8blend; older ones: blend_compare
    if got_digest is None and lofo["compare_head"].get("dir") != "livejudge/judge/heads/whisper-fitted":
        bad.append(f"the LOFO run's compare head is {lofo['compare_head'].get('dir')}, not the shipped head")
    # with the digest recorded, the weights decide (v10blend's compare head is 0.1.0 taken from git into another folder)
    if got_digest is not None and got_digest != shipped_digest:
        bad.append("the LOFO run's compare head weights are not the shipped head's (sha256 differs)")
    if blend is not None:  # a blend candidate: the declared weight, and the shipped head's weights as its member
        got = lofo.get("blend_compare") or {}
        if got.get("weight") != blend:
            bad.append(f"the LOFO run blended with weight {got.get('weight')}, not the declared {blend}")
        if got.get("compare_head_weights_sha256_16") != shipped_digest:
            bad.append("the LOFO run's compare head weights are not the shipped head's")
    elif "blend_compare" in lofo:
        bad.append("the LOFO run is a blend, but this candidate was not declared one")
    return bad


def _compare():
    """``commercial_transfer/compare.py`` (which also puts benchmarks/ on sys.path), its folder added once."""
    here = str(Path(__file__).resolve().parents[1] / "commercial_transfer")
    if here not in sys.path:  # called once per condition and head: add the folder once
        sys.path.insert(0, here)
    import compare

    return compare


def fifth_batch_auc(result: dict, cond: str) -> float:
    """Pooled ROC-AUC of the fifth batch's machine dialogues (commercial engines, measure-only)
    against the run's people, as ``commercial_transfer/compare.py`` reads it; NaN when missing."""
    cmp = _compare()
    v = cmp.pooled_auc(result, cond, cmp.batch5_machine_clips())
    return float("nan") if v is None else float(v)


def same_fifth_batch_inputs(lofo: dict, shipped_b5: dict, cand_b5: dict) -> list[str]:
    """Why the two fifth-batch runs cannot be compared (empty when they can): same manifests and
    options, and the candidate's head is the LOFO run's ``--ship`` head."""
    bad = same_run_inputs(shipped_b5, cand_b5, "fifth-batch")
    ship, head = _flag(lofo["command"], "--ship"), _flag(cand_b5["command"], "--head")
    if ship is None or ship != head:
        bad.append(f"the fifth-batch run's head ({head}) is not the LOFO run's --ship head ({ship})")
    return bad


def _measure_only_batch_auc(result: dict, cond: str, n: int) -> float:
    """Pooled ROC-AUC of batch ``n``'s measure-only machine dialogues (``benchmarks/data/wild_manifest_<n>.csv``)
    against the run's people; NaN when missing."""
    import csv

    cmp = _compare()
    from judge_lofo import FIT_OK  # benchmarks/ is on sys.path through compare

    with (RESULTS.parent / "data" / f"wild_manifest_{n}.csv").open() as f:
        clips = {r["path"] for r in csv.DictReader(f) if r["label"] == "machine" and r["licence"] not in FIT_OK}
    v = cmp.pooled_auc(result, cond, clips)
    return float("nan") if v is None else float(v)


def seventh_batch_auc(result: dict, cond: str) -> float:
    """Pooled ROC-AUC of the seventh batch's measure-only machine dialogues (Azure neural voices) against
    the run's people (R7, declared for v10blend before its runs); NaN when missing."""
    return _measure_only_batch_auc(result, cond, 7)


def against_shipped_inputs(lofo: dict, cand4: dict, cand5: dict, ship4: dict, ship5: dict, cand7: dict,
                           ship7: dict) -> list[str]:
    """Why R6/R7's runs cannot be compared (empty when they can): each pair on the same dialogues; the
    shipped head's batch-4 and batch-5 runs are the v9blend runs (0.2.0's weights), its batch-7 run
    records 0.2.0's weights digest; the candidate's batch-7 run is the LOFO run's --ship head."""
    bad = same_run_inputs(ship4, cand4, "batch-4") + same_run_inputs(ship5, cand5, "batch-5") \
        + same_run_inputs(ship7, cand7, "batch-7")
    for r, n in ((ship4, "batch-4"), (ship5, "batch-5")):
        if "--head /work/exp/v9blend/head " not in r["command"]:
            bad.append(f"the shipped head's {n} run is not the v9blend run (0.2.0's weights)")
    if ship7.get("head_weights_sha256_16") != SHIPPED_020 or "frame_readout" in (ship7.get("judge_info") or {}):
        bad.append("the shipped head's batch-7 run is not of 0.2.0 (weights sha256 differs or not recorded, or a "
                   "frame readout beside them: v11 carries 0.2.0's linear weights)")
    ship, head = _flag(lofo["command"], "--ship"), _flag(cand7["command"], "--head")
    if ship is None or ship != head:
        bad.append(f"the batch-7 run's head ({head}) is not the LOFO run's --ship head ({ship})")
    return bad


def against_shipped(cand4: dict, cand5: dict, ship4: dict, ship5: dict, cand7: dict, ship7: dict
                    ) -> list[tuple[str, bool, str]]:
    """R6 and R7 (declared for v10blend before its runs): against the shipped 0.2.0, the candidate's
    pooled ROC-AUC on R3's sources is no more than R6_R3_ALLOWANCE below, on R5's commercial engines
    at least as high, and on the seventh batch's measure-only engine (Azure) at least as high, per
    condition. A NaN figure is never met."""
    parts = []
    for cond in CONDITIONS:
        x = cand4["conditions"][cond]["pooled_auc_machines_vs_people"]
        y = ship4["conditions"][cond]["pooled_auc_machines_vs_people"]
        parts.append((f"R6 measure-only sources against 0.2.0 (allowance {R6_R3_ALLOWANCE}), {cond}",
                      _ge(x + R6_R3_ALLOWANCE, y), f"candidate {x:.3f} vs 0.2.0 {y:.3f}"))
    for cond in CONDITIONS:
        x, y = fifth_batch_auc(cand5, cond), fifth_batch_auc(ship5, cond)
        parts.append((f"R6 fifth batch's commercial engines against 0.2.0, {cond}", _ge(x, y),
                      f"candidate {x:.3f} vs 0.2.0 {y:.3f}"))
    for cond in CONDITIONS:
        x, y = seventh_batch_auc(cand7, cond), seventh_batch_auc(ship7, cond)
        parts.append((f"R7 seventh batch's measure-only engine (Azure) against 0.2.0, {cond}", _ge(x, y),
                      f"candidate {x:.3f} vs 0.2.0 {y:.3f}"))
    return parts


def eighth_batch_auc(result: dict, cond: str) -> float:
    """Pooled ROC-AUC of the eighth batch's measure-only machine dialogues against the run's people
    (v11's S2, Y4, declared before its runs); NaN when missing."""
    return _measure_only_batch_auc(result, cond, 8)


def ninth_batch_auc(result: dict, cond: str) -> float:
    """Pooled ROC-AUC of the ninth batch's machine dialogues (systems no earlier run measured; every row
    measure-only) against the run's people (v23's T1, Y5, declared before the batch was gathered); NaN
    when missing."""
    return _measure_only_batch_auc(result, cond, 9)


V11_S1 = "judge_lofo_v11_s1"
V11_SPEED = "judge_whisper_speed_v11"
V11_RUNS = (  # (yardstick, 0.2.0's stored run, v11's run, reading) for S2, declared before its runs
    ("Y1 R3's sources", "judge_wild_measure_only_batch4_v9blend", "judge_wild_measure_only_batch4_v11", None),
    ("Y2 fifth batch", "judge_wild_measure_only_batch5_v9blend", "judge_wild_measure_only_batch5_v11", fifth_batch_auc),
    ("Y3 Azure", "judge_wild_measure_only_batch7_shipped020", "judge_wild_measure_only_batch7_v11", seventh_batch_auc),
    ("Y4 eighth batch", "judge_wild_measure_only_batch8_shipped020", "judge_wild_measure_only_batch8_v11", eighth_batch_auc),
)
V11_MEAN_GAIN = 0.03
V11_SPEED_MIN = 30.0


def v11_inputs(runs: list[tuple[str, dict, dict]]) -> list[str]:
    """Why v11's S2 runs cannot be compared with 0.2.0's (empty when they can): same dialogues, and
    every v11 run of one head (its --head)."""
    bad = [x for name, ship, cand in runs for x in same_run_inputs(ship, cand, name)]
    heads = {_flag(cand["command"], "--head") for _, _, cand in runs}
    if len(heads) != 1:
        bad.append(f"v11's runs used different heads: {sorted(map(str, heads))}")
    for name, ship, cand in runs:  # v11 has 0.2.0's linear weights: the frame readout tells the two apart
        if "frame_readout" not in (cand.get("judge_info") or {}):
            bad.append(f"v11's {name} run has no frame readout")
        if "frame_readout" in (ship.get("judge_info") or {}):
            bad.append(f"0.2.0's {name} run has a frame readout")
    return bad


def v11_parts(s1: dict, runs: list[tuple[str, dict, dict]], speed: dict | None) -> list[tuple[str, bool, str]]:
    """v11's rule (README.md, "v11: 0.2.0 ⊕ the stage-2 CNN"): S1 as ``v11_lofo.py`` read it, S2 on the
    8 readouts of ``V11_RUNS`` (each at least 0.2.0's, mean gain at least V11_MEAN_GAIN, people's mean
    P(human) at least 0.5 on Y1), S3 the speed benchmark's real-time factor. NaN is never met."""
    parts = [(f"S1 {p['part']}", bool(p["met"]), p["figure"]) for p in s1["parts"]]
    gains = []
    reading = {name: how for name, _, _, how in V11_RUNS}
    for name, ship, cand in runs:
        for cond in CONDITIONS:
            how = reading[name]
            x, y = ((r["conditions"][cond]["pooled_auc_machines_vs_people"] if how is None else how(r, cond))
                    for r in (cand, ship))
            x, y = float("nan") if x is None else float(x), float("nan") if y is None else float(y)
            gains.append(x - y)
            parts.append((f"S2 {name}, {cond}: at least 0.2.0", _ge(x, y), f"v11 {x:.3f} vs 0.2.0 {y:.3f}"))
    mean = sum(gains) / len(gains) if gains else float("nan")
    parts.append((f"S2 mean gain over the {len(gains)} readouts at least {V11_MEAN_GAIN}", _ge(mean, V11_MEAN_GAIN),
                  f"{mean:+.3f}"))
    for cond in CONDITIONS:
        p = runs[0][2]["conditions"][cond]["people"]["mean_p_human"]
        parts.append((f"S2 people's mean P(human) at least 0.5 on Y1, {cond}", _ge(p, 0.5), f"v11 {p:.3f}"))
    speed = None if speed is None else speed.get("result", speed)  # stored by doc_figures: {meta, "result"}
    rt = float("nan") if speed is None else float(speed["long_call"]["realtime_factor"])
    parts.append((f"S3 speed at least {V11_SPEED_MIN:g}x real time (10-minute call, 2 cores)", _ge(rt, V11_SPEED_MIN),
                  f"{rt:g}x" + ("" if speed is None else f" ({speed['long_call']['call_s'] / 60:.0f} min call, "
                                                          f"load average {speed['long_call']['load_average_1min']})")))
    return parts


def main_frame(cand: str, s1_name: str, run_names, speed_name: str, inputs, parts_of) -> int:
    """Read a frame-readout candidate's stored S1 (none for v22, v23), S2 runs and S3 (v11, v12, v22, v23): exit 2 when any is
    missing or ``inputs`` finds them not comparable, else 0 when every part of ``parts_of`` holds."""
    names = ([s1_name] if s1_name else []) + [n for _, a, b, _ in run_names for n in (a, b)] + [speed_name]
    missing = [n for n in names if not (RESULTS / f"{n}.json").exists()]
    if missing:
        print(f"missing stored result(s): {', '.join(missing)}; run the commands in README.md first", file=sys.stderr)
        return 2
    load = lambda n: json.loads((RESULTS / f"{n}.json").read_text())  # noqa: E731
    runs = [(name, load(a), load(b)) for name, a, b, _ in run_names]
    bad = inputs(runs)
    if bad:
        print("cannot compare: " + "; ".join(bad), file=sys.stderr)
        return 2
    parts = parts_of(load(s1_name) if s1_name else None, runs, load(speed_name))
    for name, ok, figs in parts:
        print(f"{'met    ' if ok else 'NOT met'}  {name}: {figs}")
    ok = all(p[1] for p in parts)
    print(f"rule met: ship {cand}" if ok else "rule not met: the shipped head stays")
    return 0 if ok else 1


def main_v11() -> int:
    return main_frame("v11", V11_S1, V11_RUNS, V11_SPEED, v11_inputs, v11_parts)


V12_S1 = "judge_lofo_v12_s1"
V12_SPEED = "judge_whisper_speed_v12"
V12_RUNS = tuple((name, cand, cand.replace("_v11", "_v12"), how) for name, _, cand, how in V11_RUNS)
"""(yardstick, 0.3.0's stored run (v11's), v12's run, reading): v11's four yardsticks, 0.3.0 as the baseline."""
V12_UNSEEN = ("Y1 R3's sources", "Y3 Azure")
"""The yardsticks with no engine among v12's extra training rows (README.md, "v12")."""
V12_ALLOWANCE = 0.01
V12_UNSEEN_GAIN = 0.02
SHIPPED_030_FRAMES = "4ed1d7be4febc7b9"
"""sha256 (first 16 hex digits) of 0.3.0's frame_cnn.safetensors (v11's networks)."""


def _readout(run: dict, cond: str, how) -> float:
    """A yardstick's ROC-AUC in one run: the pooled figure, or ``how(run, cond)``; NaN when missing."""
    x = run["conditions"][cond]["pooled_auc_machines_vs_people"] if how is None else how(run, cond)
    return float("nan") if x is None else float(x)


def v12_inputs(runs: list[tuple[str, dict, dict]]) -> list[str]:
    """Why v12's S2 runs cannot be compared with 0.3.0's (empty when they can): same dialogues; the
    baseline runs are 0.3.0's (its frame readout), the candidate runs one other frame readout."""
    bad = [x for name, ship, cand in runs for x in same_run_inputs(ship, cand, name)]
    for name, ship, cand in runs:
        if ship.get("head_weights_sha256_16") != SHIPPED_020:
            bad.append(f"0.3.0's {name} run does not record 0.2.0's linear weights")
        if cand.get("head_weights_sha256_16") != SHIPPED_020:
            bad.append(f"v12's {name} run does not record 0.2.0's linear weights")
        if "frame_readout" not in (ship.get("judge_info") or {}) or "frame_readout" not in (cand.get("judge_info") or {}):
            bad.append(f"a {name} run has no frame readout")
        if cand.get("frame_readout_sha256_16") in (None, SHIPPED_030_FRAMES):
            bad.append(f"v12's {name} run does not record a frame readout other than 0.3.0's")
    if len({cand.get("frame_readout_sha256_16") for _, _, cand in runs}) != 1:
        bad.append("v12's runs used different frame readouts")
    return bad


def _speed_part(speed: dict | None) -> tuple[str, bool, str]:
    """S3 (v12, v22): the stored ``judge_whisper_speed.py`` run at least V11_SPEED_MIN× real time."""
    speed = None if speed is None else speed.get("result", speed)
    rt = float("nan") if speed is None else float(speed["long_call"]["realtime_factor"])
    return (f"S3 speed at least {V11_SPEED_MIN:g}x real time (10-minute call, 2 cores)", _ge(rt, V11_SPEED_MIN), f"{rt:g}x")


def v12_parts(s1: dict, runs: list[tuple[str, dict, dict]], speed: dict | None) -> list[tuple[str, bool, str]]:
    """v12's rule (README.md, "v12"): S1 as ``v12_lofo.py`` read it; S2 each of the 8 readouts at least
    0.3.0's − V12_ALLOWANCE, the mean over V12_UNSEEN's four readouts at least 0.3.0's + V12_UNSEEN_GAIN,
    people's mean P(human) at least 0.5 on Y1; S3 at least V11_SPEED_MIN× real time. NaN is never met."""
    parts = [(f"S1 {p['part']}", bool(p["met"]), p["figure"]) for p in s1["parts"]]
    reading = {name: how for name, _, _, how in V12_RUNS}
    unseen = []
    for name, ship, cand in runs:
        for cond in CONDITIONS:
            x, y = _readout(cand, cond, reading[name]), _readout(ship, cond, reading[name])
            if name in V12_UNSEEN:
                unseen.append(x - y)
            parts.append((f"S2 {name}, {cond}: at least 0.3.0 - {V12_ALLOWANCE}", _ge(x + V12_ALLOWANCE, y),
                          f"v12 {x:.3f} vs 0.3.0 {y:.3f}"))
    mean = sum(unseen) / len(unseen) if unseen else float("nan")
    parts.append((f"S2 mean gain over the {len(unseen)} readouts of {' and '.join(V12_UNSEEN)} at least {V12_UNSEEN_GAIN}",
                  _ge(mean, V12_UNSEEN_GAIN), f"{mean:+.3f}"))
    for cond in CONDITIONS:
        p = runs[0][2]["conditions"][cond]["people"]["mean_p_human"]
        parts.append((f"S2 people's mean P(human) at least 0.5 on Y1, {cond}", _ge(p, 0.5), f"v12 {p:.3f}"))
    parts.append(_speed_part(speed))
    return parts


def main_v12() -> int:
    return main_frame("v12", V12_S1, V12_RUNS, V12_SPEED, v12_inputs, v12_parts)


V22_SPEED = "judge_whisper_speed_v22"
V22_RUNS = tuple((name, cand, cand.replace("_v11", "_v22"), how) for name, _, cand, how in V11_RUNS)
"""(yardstick, 0.3.0's stored run (v11's), v22's run, reading): v11's four yardsticks, 0.3.0 as the baseline."""
V22_ALLOWANCE = 0.01   # (a), declared before v22's runs (README.md, "v22")
V22_MEAN_GAIN = 0.02   # (b)
V22_PEOPLE_DROP = 0.02  # (c)


def v22_inputs(runs: list[tuple[str, dict, dict]]) -> list[str]:
    """Why v22's S2 runs cannot be compared with 0.3.0's (empty when they can): v12's checks (same
    dialogues, 0.2.0's linear weights on both sides, 0.3.0's frame readout against one other), and
    the candidate's readout has a member over Whisper base's frames."""
    bad = [b.replace("v12", "v22") for b in v12_inputs(runs)]
    for name, _, cand in runs:
        members = ((cand.get("judge_info") or {}).get("frame_readout") or {}).get("member_frames") or []
        if "whisper-base" not in [m.get("encoder") for m in members]:
            bad.append(f"v22's {name} run has no frame-readout member over Whisper base's frames")
    return bad


def _people_parts(tag: str, where: str, ship: dict, cand: dict, drop: float, name: str) -> list[tuple[str, bool, str]]:
    """Per condition: people's mean P(human) in the candidate's run at least 0.5 and no more than
    ``drop`` below 0.3.0's run on the same dialogues (v22's S2 (c), v23's T3). NaN is never met."""
    parts = []
    for cond in CONDITIONS:
        p = float(cand["conditions"][cond]["people"]["mean_p_human"])
        q = float(ship["conditions"][cond]["people"]["mean_p_human"])
        parts.append((f"{tag} people's mean P(human) on {where} at least 0.5 and at least 0.3.0's - {drop}, {cond}",
                      _ge(p, 0.5) and _ge(p + drop, q), f"{name} {p:.3f} vs 0.3.0 {q:.3f}"))
    return parts


def v22_parts(s1: dict | None, runs: list[tuple[str, dict, dict]], speed: dict | None) -> list[tuple[str, bool, str]]:
    """v22's rule (README.md, "v22"; no S1 part: the LOFO folds were read before it was written):
    S2 (a) each of the 8 readouts at least 0.3.0's − V22_ALLOWANCE, (b) their mean at least 0.3.0's +
    V22_MEAN_GAIN, (c) people's mean P(human) on Y1 at least 0.5 and at least 0.3.0's − V22_PEOPLE_DROP,
    both conditions; S3 at least V11_SPEED_MIN× real time. NaN is never met."""
    reading = {name: how for name, _, _, how in V22_RUNS}
    parts, gains = [], []
    for name, ship, cand in runs:
        for cond in CONDITIONS:
            x, y = _readout(cand, cond, reading[name]), _readout(ship, cond, reading[name])
            gains.append(x - y)
            parts.append((f"S2 (a) {name}, {cond}: at least 0.3.0 - {V22_ALLOWANCE}", _ge(x + V22_ALLOWANCE, y),
                          f"v22 {x:.3f} vs 0.3.0 {y:.3f}"))
    mean = sum(gains) / len(gains) if gains else float("nan")
    parts.append((f"S2 (b) mean gain over the {len(gains)} readouts at least {V22_MEAN_GAIN}", _ge(mean, V22_MEAN_GAIN),
                  f"{mean:+.3f}"))
    parts += _people_parts("S2 (c)", "Y1", runs[0][1], runs[0][2], V22_PEOPLE_DROP, "v22")
    parts.append(_speed_part(speed))
    return parts


def main_v22() -> int:
    return main_frame("v22", None, V22_RUNS, V22_SPEED, v22_inputs, v22_parts)


V23_SPEED = "judge_whisper_speed_v23"
V23_Y5 = ("Y5 ninth batch", "judge_wild_measure_only_batch9_030", "judge_wild_measure_only_batch9_v23", ninth_batch_auc)
"""(yardstick, 0.3.0's run, v23's run, reading) of T1 and T3: the ninth batch, gathered after v23's rule."""
V23_RUNS = (V23_Y5,) + tuple((name, cand, cand.replace("_v11", "_v23"), how) for name, _, cand, how in V11_RUNS)
"""Y5 first, then v11's four yardsticks (T2, the guard) with 0.3.0's stored runs as the baseline."""
V23_FRESH_GAIN = 0.02   # T1 (a), declared before the ninth batch was gathered (README.md, "v23")
V23_ALLOWANCE = 0.01    # T1 (b) and T2
V23_PEOPLE_DROP = 0.02  # T3


def v23_inputs(runs: list[tuple[str, dict, dict]]) -> list[str]:
    """Why v23's runs cannot be compared with 0.3.0's (empty when they can): v22's checks, 0.3.0's own frame
    readout on the baseline side of Y5 (run fresh), and three members on the candidate's side."""
    bad = [b.replace("v22", "v23") for b in v22_inputs(runs)]
    name, ship, cand = runs[0]
    if ship.get("frame_readout_sha256_16") != SHIPPED_030_FRAMES:
        bad.append(f"0.3.0's {name} run does not record 0.3.0's frame readout")
    for name, _, cand in runs:
        members = ((cand.get("judge_info") or {}).get("frame_readout") or {}).get("member_frames") or []
        if len(members) != 3:
            bad.append(f"v23's {name} run has {len(members)} frame-readout members, not 3")
    return bad


def v23_parts(s1: dict | None, runs: list[tuple[str, dict, dict]], speed: dict | None) -> list[tuple[str, bool, str]]:
    """v23's rule (README.md, "v23"): T1 on Y5 (fresh) (a) the mean of its two readouts at least 0.3.0's +
    V23_FRESH_GAIN, (b) each at least 0.3.0's − V23_ALLOWANCE; T2 each of Y1-Y4's 8 readouts at least
    0.3.0's − V23_ALLOWANCE; T3 people's mean P(human) on Y5 at least 0.5 and at least 0.3.0's −
    V23_PEOPLE_DROP, both conditions; S3 at least V11_SPEED_MIN× real time. NaN is never met."""
    reading = {name: how for name, _, _, how in V23_RUNS}
    (y5, ship5, cand5), old = runs[0], runs[1:]
    parts, gains = [], []
    for cond in CONDITIONS:
        x, y = _readout(cand5, cond, reading[y5]), _readout(ship5, cond, reading[y5])
        gains.append(x - y)
        parts.append((f"T1 (b) {y5}, {cond}: at least 0.3.0 - {V23_ALLOWANCE}", _ge(x + V23_ALLOWANCE, y),
                      f"v23 {x:.3f} vs 0.3.0 {y:.3f}"))
    mean = sum(gains) / len(gains)
    parts.insert(0, (f"T1 (a) {y5}: mean gain over its {len(gains)} readouts at least {V23_FRESH_GAIN}",
                     _ge(mean, V23_FRESH_GAIN), f"{mean:+.3f}"))
    for name, ship, cand in old:
        for cond in CONDITIONS:
            x, y = _readout(cand, cond, reading[name]), _readout(ship, cond, reading[name])
            parts.append((f"T2 {name}, {cond}: at least 0.3.0 - {V23_ALLOWANCE} (guard, read before)",
                          _ge(x + V23_ALLOWANCE, y), f"v23 {x:.3f} vs 0.3.0 {y:.3f}"))
    parts += _people_parts("T3", y5, ship5, cand5, V23_PEOPLE_DROP, "v23")
    parts.append(_speed_part(speed))
    return parts


def main_v23() -> int:
    return main_frame("v23", None, V23_RUNS, V23_SPEED, v23_inputs, v23_parts)


def evaluate(lofo: dict, shipped: dict, cand: dict, wideband_people: bool = False,
             fifth: tuple[dict, dict] | None = None) -> list[tuple[str, bool, str]]:
    """[(part, met, figures)] of the rule; pure function of the stored results. With
    ``wideband_people`` (v7 on, declared before its runs) R1 and R2 must also hold without the
    people whose source is narrowband (R1w, R2w): a bandwidth cue, since nearly every machine clip
    is wideband. With ``fifth`` (the shipped head's and the candidate's runs on the fifth batch;
    v9blend on, declared before its runs) R5: the candidate's pooled ROC-AUC of the fifth batch's
    commercial engines against the people is at least the shipped head's, per condition."""
    parts = []
    c = lofo["compare_head"]
    a, b = c["fold_heads_auc_fresh_families_and_people"], c["compare_head_auc_fresh_families_and_people"]
    parts.append(("R1 never-met families, people neither head met", _ge(a, b),
                  f"candidate's fold heads {a:.3f} vs shipped {b:.3f} ({c['fresh_people_test_rows']} human test rows, "
                  f"{len(c['fresh_families'])} families)"))
    parts.append(_family_parts("R2", lofo, "people_neither_met"))
    if wideband_people:
        a, b = c["fold_heads_auc_fresh_families_and_wideband_people"], c["compare_head_auc_fresh_families_and_wideband_people"]
        parts.append(("R1w the same without narrowband people", _ge(a, b),
                      f"candidate's fold heads {a:.3f} vs shipped {b:.3f} ({c['fresh_wideband_people_test_rows']} human test rows)"))
        parts.append(_family_parts("R2w", lofo, "people_neither_met_wideband", fallback=False))
    for cond in CONDITIONS:
        x = cand["conditions"][cond]["pooled_auc_machines_vs_people"]
        y = shipped["conditions"][cond]["pooled_auc_machines_vs_people"]
        parts.append((f"R3 measure-only sources, {cond}", _ge(x, y), f"candidate {x:.3f} vs shipped {y:.3f}"))
    for cond in CONDITIONS:
        p = cand["conditions"][cond]["people"]["mean_p_human"]
        parts.append((f"R4 people's mean P(human) >= 0.5, {cond}", _ge(p, 0.5), f"candidate {p:.3f}"))
    if fifth is not None:
        for cond in CONDITIONS:
            y, x = (fifth_batch_auc(r, cond) for r in fifth)
            parts.append((f"R5 fifth batch's commercial engines, {cond}", _ge(x, y), f"candidate {x:.3f} vs shipped {y:.3f}"))
    return parts


CANDIDATES = {  # candidate -> (its LOFO table, its measure-only run, R1w/R2w declared for it before its runs,
    # the blend weight declared for it or None); the shipped head's measure-only run is shared
    "v6": ("judge_lofo_protocol_v6", "judge_wild_measure_only_batch3_v6", False, None),
    "v7": ("judge_lofo_protocol_v7", "judge_wild_measure_only_batch4_v7", True, None),
    "v7blend": ("judge_lofo_protocol_v7blend", "judge_wild_measure_only_batch4_v7blend", True, 0.5),
    "v8blend": ("judge_lofo_protocol_v8blend", "judge_wild_measure_only_batch4_v8blend", True, 0.5),
    "v9blend": ("judge_lofo_protocol_v9blend", "judge_wild_measure_only_batch4_v9blend", True, 0.5),
    "v10blend": ("judge_lofo_protocol_v10blend", "judge_wild_measure_only_batch4_v10blend", True, 0.5),
}
FIFTH_BATCH = {  # candidate -> its run on the fifth batch (R5, declared for it before its runs)
    "v9blend": "judge_wild_measure_only_batch5_v9blend",
    "v10blend": "judge_wild_measure_only_batch5_v10blend",
}
AGAINST_020 = {  # candidate -> (its batch-7 run, 0.2.0's batch-7 run) for R6 and R7, declared before its runs
    "v10blend": ("judge_wild_measure_only_batch7_v10blend", "judge_wild_measure_only_batch7_shipped020"),
}
SHIPPED_020_RUNS = ("judge_wild_measure_only_batch4_v9blend", "judge_wild_measure_only_batch5_v9blend")
SHIPPED_FIFTH = "judge_wild_measure_only_batch5_shipped"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Candidates: " + "; ".join(f"{k} ({v[0]}.json + {v[1]}.json{', a blend, weight ' + str(v[3]) if v[3] else ''})"
                                          for k, v in CANDIDATES.items())
               + ". The shipped head's figures in R1 and R2 are on the candidate's own fold dialogues, so they differ "
                 "between candidates. Exit status: 0 every part met (ship), 1 a part not met, 2 inputs missing or "
                 "not comparable.")
    ap.add_argument("--candidate", choices=sorted(CANDIDATES) + ["v11", "v12", "v22", "v23"], default="v6",
                    help="which refit (default v6); v11: 0.2.0 with the frame readout, v12: its networks retrained "
                         "(their own parts S1-S3); v22: 0.3.0 with a Whisper base member (S2, S3); v23: 0.3.0 with a "
                         "Whisper base member added (T1-T3, S3)")
    a = ap.parse_args(argv)
    if a.candidate == "v11":
        return main_v11()
    if a.candidate == "v12":
        return main_v12()
    if a.candidate == "v22":
        return main_v22()
    if a.candidate == "v23":
        return main_v23()
    lofo, wild, wideband_people, blend = CANDIDATES[a.candidate]
    names = (lofo, "judge_wild_measure_only_batch2_shipped", wild) \
        + ((SHIPPED_FIFTH, FIFTH_BATCH[a.candidate]) if a.candidate in FIFTH_BATCH else ())
    extra = (SHIPPED_020_RUNS + AGAINST_020[a.candidate]) if a.candidate in AGAINST_020 else ()
    names = names + extra
    missing = [n for n in names if not (RESULTS / f"{n}.json").exists()]
    if missing:
        print(f"missing stored result(s): {', '.join(missing)}; run the commands in README.md first", file=sys.stderr)
        return 2
    got = [json.loads((RESULTS / f"{n}.json").read_text()) for n in names]
    if extra:  # R6/R7: (ship4, ship5, cand7, ship7) after the fifth-batch pair
        ship4, ship5, cand7, ship7 = got[-4:]
        got = got[:-4]
    bad = same_inputs(*got[:3], blend=blend) + (same_fifth_batch_inputs(got[0], *got[3:]) if len(got) > 3 else [])
    if extra:
        bad += against_shipped_inputs(got[0], got[2], got[4], ship4, ship5, cand7, ship7)
    if bad:
        print("cannot compare: " + "; ".join(bad), file=sys.stderr)
        return 2
    parts = evaluate(*got[:3], wideband_people=wideband_people, fifth=tuple(got[3:]) or None)
    if extra:
        parts += against_shipped(got[2], got[4], ship4, ship5, cand7, ship7)
    for name, ok, figs in parts:
        print(f"{'met    ' if ok else 'NOT met'}  {name}: {figs}")
    ok = all(p[1] for p in parts)
    print(f"rule met: ship {a.candidate}" if ok else "rule not met: the shipped head stays")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
