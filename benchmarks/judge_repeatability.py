"""How much the judge's call-level scores move between calls of the SAME agent voice: the spread
``livejudge compare`` needs before it may call a change of mean P(human) or of a dimension score
"better" or "worse".

Why: compare judged a judge row by its shown digit alone, so one call's dimension score of 1.8
against another's 1.9 read "better" although two calls of one unchanged agent differ by more
than that (a new user's trial). This measures that between-call spread.

What is measured. For each voice (one machine voice or one person, taken as the agent) with at
least ``--min-clips`` clips of 1.5 s or more in the manifests: ``--calls`` calls, each built as
``judge_wild.build`` builds a wild call (that voice's clips as the agent's turns, ``--turns`` of
them drawn without replacement for each call; the shipped human clips as the caller; a noise
floor of -70 to -55 dBFS and an agent level of -30 to -18 dBFS drawn per call), then scored as
``livejudge score`` scores a file (a Session streamed at full speed, the default judge and settings).
Per call: mean P(human) and each dimension's mean score (``gates.call_metrics``). Per metric:
the pooled within-voice standard deviation (the root of the mean of the voices' sample
variances, ddof 1; voices where the metric was measured in fewer than two calls are left out).
The change two calls of one voice show at most 95 % of the time, under a normal approximation,
is 1.96 * sqrt(2) * SD (HEURISTIC: the voices here stand for the user's agent; calls of one
voice differ here in sentences, caller, noise floor and level only).

Voices: the sealed families and groups (benchmarks/results/sealed_split.json) are left out;
per (label, family) the speaker with the most clips, so no family counts twice.

Output: JSON to ``--json`` (default benchmarks/results/judge_repeatability.json): per metric
{"sd", "tolerance", "n_voices"}, the voices, the head, the command and commit. The tolerance of
mean P(human) and of the dimension scores in ``livejudge.commands.compare`` comes from it
(``JUDGE_SPREAD``; a test checks the two agree).

Usage (repo root, the project's venv; the manifests: docs/corpus.md):
    python benchmarks/judge_repeatability.py --manifest /work/exp/wild/manifest.csv \
        --manifest /work/exp/wild/manifest_new.csv --manifest /work/exp/r3/manifest_conv_r2.csv
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def pick_voices(rows: list[dict], min_clips: int, skip: set[str]) -> list[tuple[tuple, list[dict]]]:
    """[((label, family, speaker), clips)]: per (label, family) not in ``skip``, the speaker with the
    most clips of at least 1.5 s, if it has ``min_clips`` of them; sorted. Pure."""
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["family"] in skip or float(r["duration_s"]) < 1.5 or (r.get("lang") or "en") != "en":
            continue
        by[(r["label"], r["family"], r["speaker"])].append(r)
    best: dict[tuple, tuple] = {}
    for (label, family, speaker), clips in by.items():
        if len(clips) >= min_clips and len(clips) > len(best.get((label, family), (None, []))[1]):
            best[(label, family)] = ((label, family, speaker), sorted(clips, key=lambda r: r["path"]))
    return sorted(best.values(), key=lambda v: v[0])


def pooled(per_voice: dict[str, list[list[float]]]) -> dict[str, dict]:
    """Per metric: the pooled within-voice SD (root of the mean sample variance over voices with at
    least two measured calls), its 95 % two-call tolerance 1.96 * sqrt(2) * SD, and the number of
    voices it pools. Pure."""
    out = {}
    for metric, voices in per_voice.items():
        var = [float(np.var(v, ddof=1)) for v in voices if len(v) >= 2]
        if not var:
            continue
        sd = math.sqrt(float(np.mean(var)))
        out[metric] = {"sd": round(sd, 4), "tolerance": round(1.96 * math.sqrt(2) * sd, 4), "n_voices": len(var)}
    return out


PACKAGE_SPREAD = HERE.parent / "livejudge" / "data" / "judge_spread.json"
"""What ``livejudge compare`` reads (``compare.judge_spread``)."""


def package_spread(res: dict, source: Path) -> dict:
    """The package copy of a stored run: the judge as compare's settings name it ("backbone / head
    version"), each metric's two-call tolerance, and where it came from. Pure."""
    h = res["head"]
    try:
        src = source.resolve().relative_to(HERE.parent)
    except ValueError:
        src = source
    return {"judge": f"{h['backbone']} / {h['head']} {h['head_version']}",
            "tolerance": {k: v["tolerance"] for k, v in res["metrics"].items()},
            "n_voices": len(res["voices"]), "calls_per_voice": res["calls_per_voice"],
            "source": f"{src} ({res['command']}, commit {res['commit']})"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", type=Path, action="append", required=True, help="a wild manifest CSV (repeat)")
    ap.add_argument("--calls", type=int, default=5, help="calls per voice")
    ap.add_argument("--turns", type=int, default=4, help="agent turns per call (clips drawn without replacement)")
    ap.add_argument("--min-clips", type=int, default=10, help="clips a voice needs to be used")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sealed", type=Path, default=HERE / "results" / "sealed_split.json")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "judge_repeatability.json")
    ap.add_argument("--write-package", action="store_true",
                    help="also write livejudge/data/judge_spread.json, the tolerances compare reads (package_spread)")
    a = ap.parse_args(argv)

    from judge_lofo import _git_head
    from judge_wild import build, read_manifest
    from livejudge.commands.cli import build_parser
    from livejudge.commands.gates import call_metrics
    from livejudge.commands.runner import judge_config, judge_from_config, session_config
    from livejudge.session import Session, stream_call

    cli = build_parser().parse_args(["score", "call.wav"])  # the defaults a user gets
    judge = judge_from_config(judge_config(cli))
    if judge is None:
        raise SystemExit("the default judge did not load here (see the line above); nothing to measure")
    config = session_config(cli, "every")
    sealed = json.loads(a.sealed.read_text()) if a.sealed.exists() else {"families": [], "groups": []}
    rows = [r for m in a.manifest for r in read_manifest(m)]
    voices = pick_voices(rows, a.min_clips, set(sealed["families"]) | set(sealed["groups"]))
    print(f"{len(voices)} voices x {a.calls} calls", file=sys.stderr)
    per_voice: dict[str, list[list[float]]] = defaultdict(list)
    listed, head, t0 = [], None, time.time()
    for vi, (voice, clips) in enumerate(voices):
        vals: dict[str, list[float]] = defaultdict(list)
        for c in range(a.calls):
            rng = np.random.default_rng([a.seed, vi, c])
            pick = [clips[int(i)] for i in rng.choice(len(clips), size=min(a.turns, len(clips)), replace=False)]
            d = build({"clips": pick}, 1000 * vi + c, a.seed, False, 4.0)
            session = Session(config, judge=judge, info={"sample_rate_in": d.call.sample_rate_in,
                                                          "channels": d.call.channels, "kind": "score"})
            stream_call(session, d.call, speed=None)  # as livejudge score does (judge_wild.score_call)
            doc = session.close()
            head = head or {k: (doc.get("judge_info") or {}).get(k) for k in ("backbone", "head", "head_version")}
            m = call_metrics(doc)
            for k, v in m.items():
                if v is not None and (k == "mean_p_human" or k.startswith("dim_")):
                    vals[k].append(float(v))
        for k, v in vals.items():
            per_voice[k].append(v)
        listed.append({"label": voice[0], "family": voice[1], "speaker": voice[2], "clips": len(clips),
                       "mean_p_human": [round(x, 3) for x in vals.get("mean_p_human", [])]})
        print(f"  {vi + 1}/{len(voices)} {voice[0]}/{voice[1]}/{voice[2]}: P(human) "
              f"{' '.join(f'{x:.2f}' for x in vals.get('mean_p_human', []))} ({time.time() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    res = {"command": "python benchmarks/judge_repeatability.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "commit": _git_head(), "head": head, "calls_per_voice": a.calls, "turns_per_call": a.turns,
           "voices": listed, "metrics": pooled(per_voice), "seconds": round(time.time() - t0, 1)}
    a.json.write_text(json.dumps(res, indent=1) + "\n")
    if a.write_package:
        PACKAGE_SPREAD.write_text(json.dumps(package_spread(res, a.json), indent=1) + "\n")
        print(f"-> {PACKAGE_SPREAD}")
    print(json.dumps(res["metrics"].get("mean_p_human")), f"-> {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
