"""The SHIPPED default judge on speech from the wild, at the user's unit (issue 19).

Measures what a user gets from ``livejudge score CALL.wav`` (default ``--judge auto``: the
Whisper-encoder head ``whisper-fitted``) on two-party calls whose agent side is neural TTS /
speech-LM output gathered from public GitHub repositories (``docs/corpus.md``), against the same
calls with a person on the agent side. Nothing is fitted or tuned here; the head is never changed.

Dialogues (``livejudge.testing.DialogueBuilder``): the caller speaks the repo's shipped human clips
(``livejudge/data/audio/human``, cut to ≤ ``--user-max-s`` s); the agent answers with a sequence of
clips of ONE group of the manifest (one system, or one human source), in manifest order
(same-speaker clips adjacent), until about ``--agent-speech-s`` s of agent speech. Both classes
get the same random timing (gaps U(0.3, 1.0) s), agent level (U(−30, −18) dBFS RMS) and noise
floor (U(−70, −55) dBFS), drawn from one seeded stream per dialogue index, so only the agent's
voice differs. Conditions: ``wideband`` (16 kHz) and ``telephone`` (``telephone_line=True``: both
channels 300–3400 Hz, 8 kHz, G.711 μ-law round trip); on request ``mp3-KBPS`` (each agent
clip, either class, through an MP3 round trip at KBPS kbit/s before it is placed: an agent whose
audio reached the recording as MP3; ``parse_condition``).

Scoring is the CLI's: the parser's defaults (``livejudge score``: 30 s windows every 2 s, judge
mode "every", VAD and turn settings), ``judge_from_config(judge_config(args))`` for the judge, ``Session`` +
``stream_call`` + ``Session.close()`` for the result document; the figure per dialogue is the
document's ``summary.mean_p_human`` (mean over every window with evidence), as a CI gate reads it.
Dialogues whose document has no P(human) (no window with evidence) are counted, not scored.

Reported (JSON + table): per group and per family, n dialogues, mean P(human), accuracy at 0.5
(people ≥ 0.5, machines < 0.5), evidence coverage; pooled ROC-AUC machines vs people (every
neural family; the codec-resynthesis family, a re-encoding of real recordings, is reported
separately and kept out of the pooled figure), per condition.

Run:  OMP_NUM_THREADS=1 nice -n 10 python benchmarks/judge_wild.py \
          [--manifest /work/exp/wild/manifest.csv] [--json benchmarks/results/judge_wild.json]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

RESYNTH = {"codec-resynthesis"}  # real recordings re-encoded by a codec: not a TTS voice
MIN_FAMILY_DIALOGUES = 10  # a family's mean P(human) is named in the caveat only from this many scored dialogues


def read_manifest(path: Path, need_audio: bool = True) -> list[dict]:
    """Rows of the manifest CSV (path, label, family, system, speaker, duration_s, repo, ...).
    With ``need_audio`` (measuring), rows whose clip is not on this machine are left out and
    counted on stderr; without it (the sources table), every row is kept.

    Raises:
        SystemExit: missing file or columns (one line, naming the fix).
    """
    if not path.exists():
        raise SystemExit(f"no manifest at {path}: gather the clips first (see docs/corpus.md)")
    rows = list(csv.DictReader(path.open()))
    need = {"path", "label", "family", "system", "speaker", "duration_s"}
    if not rows or not need <= set(rows[0]):
        raise SystemExit(f"{path}: needs columns {sorted(need)}")
    if not need_audio:
        return rows
    here = [r for r in rows if Path(r["path"]).exists()]
    if len(here) < len(rows):
        print(f"{path}: {len(rows) - len(here)} of {len(rows)} clips are not on this machine and are left out "
              "(gather them: docs/corpus.md)", file=sys.stderr)
    return [r for r in here if float(r["duration_s"]) >= 0.3]


def plan_dialogues(rows: list[dict], agent_speech_s: float) -> list[dict]:
    """Group clips by (label, family, system) and cut each group into dialogues of about
    ``agent_speech_s`` seconds of agent audio (clip durations as stored, before trimming)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["label"], r["family"], r["system"])].append(r)
    plans = []
    for (label, family, system), clips in sorted(groups.items()):
        clips.sort(key=lambda r: (r["speaker"], r["path"]))
        cur: list[dict] = []
        acc = 0.0
        for c in clips:
            cur.append(c)
            acc += float(c["duration_s"])
            if acc >= agent_speech_s:
                plans.append({"label": label, "family": family, "system": system, "clips": cur})
                cur, acc = [], 0.0
        if cur:  # the rest: its own (shorter) dialogue, or joined to the last one when short
            if acc < agent_speech_s / 2 and plans and plans[-1]["system"] == system \
                    and plans[-1]["label"] == label:
                plans[-1]["clips"].extend(cur)
            else:
                plans.append({"label": label, "family": family, "system": system, "clips": cur})
    return plans


def load_wav16k(path: str) -> np.ndarray:
    from livejudge.audio import load_audio, resample, to_mono

    data, rate = load_audio(path)
    return resample(to_mono(data), rate)


def parse_condition(name: str) -> tuple[bool, float | None]:
    """(telephone line, agent MP3 kbit/s or None) for a ``--conditions`` name: ``wideband``,
    ``telephone``, or ``mp3-KBPS`` (every agent clip through ``mp3_round_trip`` at KBPS kbit/s
    before it is placed, both classes alike: an agent whose audio reached the recording as MP3).

    Raises:
        SystemExit: an unknown name (one line, naming the valid ones).
    """
    if name in ("wideband", "telephone"):
        return name == "telephone", None
    if name.startswith("mp3-") and name[4:].isdigit() and 8 <= int(name[4:]) <= 160:
        return False, float(name[4:])
    raise SystemExit(f"unknown condition {name!r}: use wideband, telephone or mp3-KBPS (KBPS 8-160), comma-separated")


def build(plan: dict, index: int, seed: int, telephone: bool, user_max_s: float, agent_mp3_kbps: float | None = None):
    """The call for one planned dialogue (see module docstring). Same draws for both classes:
    the stream depends only on (seed, index). ``agent_mp3_kbps``: each agent clip through an MP3
    round trip at that rate first (``parse_condition``)."""
    from livejudge.testing.dialogues import DialogueBuilder, _level, list_clips, mp3_round_trip, trim

    rng = np.random.default_rng([seed, index])
    users = list_clips("human")
    noise_dbfs = float(rng.uniform(-70, -55))
    level_dbfs = float(rng.uniform(-30, -18))
    b = DialogueBuilder(noise_dbfs=noise_dbfs, seed=seed * 100_003 + index, telephone_line=telephone)
    order = rng.permutation(len(users))
    for k, clip in enumerate(plan["clips"]):
        b.user(users[int(order[k % len(users)])], gap_s=float(rng.uniform(0.3, 1.0)) if k else None,
               max_s=user_max_s)
        x = load_wav16k(clip["path"])
        if agent_mp3_kbps is not None:
            x = mp3_round_trip(x, agent_mp3_kbps)
        x = _level(trim(x), level_dbfs)  # the level of its speech
        b.agent(np.clip(x, -1, 1), gap_s=float(rng.uniform(0.3, 1.0)))
    return b.build()


def has_speech(path: str) -> bool:
    """Whether a clip can be an agent turn at all: the dialogue builder finds speech in it (a few
    gathered clips are silence or a tone below its speech threshold; they are left out, and counted)."""
    from livejudge.testing.dialogues import DialogueBuilder, _level, list_clips, trim

    try:
        b = DialogueBuilder(noise_dbfs=-70.0, seed=0)
        b.user(list_clips("human")[0], max_s=1.0)
        b.agent(np.clip(_level(trim(load_wav16k(path)), -24.0), -1, 1), gap_s=0.5)
    except ValueError:
        return False
    return True


def score_call(call, args_cli, judge, session_config) -> dict:
    """Score one call as ``livejudge score`` does; returns the result document's summary."""
    from livejudge.session import Session, stream_call

    session = Session(session_config, judge=judge, info={"sample_rate_in": call.sample_rate_in,
                                                         "channels": call.channels, "kind": "score"})
    stream_call(session, call, speed=None)
    doc = session.close()
    return doc["summary"] | {"judge_info": doc.get("judge_info")}


def summarise(items: list[dict]) -> dict:
    """n, mean P(human), accuracy at 0.5, coverage, for dialogues of one label."""
    ps = [d["p"] for d in items if d["p"] is not None]
    out = {"n": len(items), "n_scored": len(ps),
           "mean_p_human": round(float(np.mean(ps)), 3) if ps else None,
           "mean_evidence_coverage": round(float(np.mean([d["coverage"] or 0.0 for d in items])), 3)}
    if ps:
        human = items[0]["label"] == "human"
        ok = [(p >= 0.5) == human for p in ps]
        out["acc_at_0.5"] = round(float(np.mean(ok)), 3)
    return out


sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_lofo import FIT_OK, _git_head, floor2  # noqa: E402  (licences that allow fitting; rounding down)


def corpus_table(rows: list[dict]) -> str:
    """The markdown table of docs/corpus.md, from the manifest: one line per (repo, system)."""
    groups: dict = defaultdict(list)
    for r in rows:
        groups[(r["repo"], r["commit"][:10], r["label"], r["family"], r["system"], r.get("licence", ""),
                r.get("licence_note", "").split(";")[0])].append(r)
    lines = ["| repo | commit | label | family | system | clips | seconds | paths (pattern) | licence | may FIT a shipped head? |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (repo, commit, label, fam, sysn, lic, note), rs in sorted(groups.items()):
        dirs = sorted({str(Path(r["source_path"]).parent) for r in rs})
        pat = dirs[0] + ("/…" if len(dirs) == 1 else f"/… (+{len(dirs) - 1} dirs)")
        fit = "yes" if lic in FIT_OK else "no: measure only"
        # a public corpus's recording hosted elsewhere keeps its own licence (judge_lofo.FIT_OK)
        shown = f"{lic} ({note.split(' (')[0]}; repo: {rs[0]['licence_note'].rsplit('(', 1)[-1].rstrip(')')})" \
            if note else lic
        lines.append(f"| {repo} | {commit} | {label} | {fam} | {sysn} | {len(rs)} | "
                     f"{sum(float(r['duration_s']) for r in rs):.0f} | `{pat}` | {shown} | {fit} |")
    return "\n".join(lines)


def write_caveat(head_dir: Path, results: dict, source: str) -> str:
    """Write the wild measurement into the head's config as ``training.validity.caveat`` (shown
    after its validity line): first the share of machine dialogues called human (P(human) >= 0.5),
    rounded up, then pooled ROC-AUC per condition, the number of neural families, and the
    people/machines mean P(human), rounded down. Returns the caveat. "Neural speech families":
    TTS, voice conversion and speech-language-model dialogue, as gathered (docs/corpus.md). When
    some of the measured families are among the head's training families (a head refitted on
    wild rows, measured on the measure-only sources: other sources and systems of those
    families), the caveat says so instead of calling them families it never met. The machine
    family (at least ``MIN_FAMILY_DIALOGUES`` scored dialogues) with the highest mean P(human) is
    named with it when that is at least the people's (first condition): the voices it takes for
    people. ``source`` (the CLI gives the result file's name) is stored beside the caveat as
    ``validity.caveat_source``, not in the line, which the meter must show whole at 80×24."""
    conds = results["conditions"]
    first = next(iter(conds.values()))
    fams = sorted({k.split(":", 1)[1] for k, v in first["by_family"].items()
                   if k.startswith("machine:") and k.split(":", 1)[1] not in RESYNTH and v.get("mean_p_human") is not None})
    cfg_path = head_dir / "config.json"
    cfg = json.loads(cfg_path.read_text())
    # a family held out by vendor group in LOFO ("commercial-neural-tts:openai") is still that family
    fitted = {f.split(":", 1)[0] for f in cfg.get("training", {}).get("families", [])}
    never = [f for f in fams if f not in fitted]
    aucs = ", ".join(f"{floor2(c['pooled_auc_machines_vs_people'])} {name}" for name, c in conds.items())
    where = (f"{len(fams)} neural speech families it never met" if len(never) == len(fams) else
             f"{len(fams)} neural families from sources never fitted on, {len(never)} never met")
    people = first["people"]["mean_p_human"]
    # families (enough dialogues to read) whose voices it rates as human as the people, or more:
    # where a user's agent most likely sounds (commercial voices), said in the same line
    humanlike = sorted(((v["mean_p_human"], k.split(":", 1)[1]) for k, v in first["by_family"].items()
                        if k.startswith("machine:") and k.split(":", 1)[1] not in RESYNTH
                        and v.get("mean_p_human") is not None and v.get("n_scored", 0) >= MIN_FAMILY_DIALOGUES
                        and v["mean_p_human"] >= people), reverse=True)[:1]
    like = "".join(f", {f} {floor2(p)}" for p, f in humanlike)  # short: the meter shows the line whole at 80x24
    # the share of machine dialogues it calls human (P(h) >= 0.5), rounded UP: an error rate never rounds down
    # leads the line: it is the figure to read first (a trial's eye stopped at "ROC-AUC 0.82", found
    # beside "NOT valid"; the share came ~170 characters in, inside parentheses)
    acc_m = first["machines"].get("acc_at_0.5")
    called = ("" if acc_m is None else
              f"{np.ceil((1.0 - float(acc_m)) * 100 - 1e-9) / 100:.2f} of machine dialogues called human (P≥0.5); ")
    caveat = (f"NOT valid in the wild: {called}ROC-AUC {aucs} on {where} "
              f"(P(h): people {floor2(people)}, machines "
              f"{floor2(first['machines']['mean_p_human'])}{like})")
    v = cfg.setdefault("training", {}).setdefault("validity", {})
    v["caveat"] = caveat
    v["caveat_source"] = source  # beside the line, not in it: the meter shows the line whole at 80x24
    cfg_path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return caveat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", type=Path, nargs="+", default=[Path("/work/exp/wild/manifest.csv")],
                    help="one or more manifests (pooled)")
    ap.add_argument("--exclude-family", action="append", default=[], metavar="FAMILY",
                    help="leave a family out (repeatable; e.g. resynthesis: real recordings through a vocoder)")
    ap.add_argument("--sealed", type=Path, default=Path("benchmarks/results/sealed_split.json"),
                    help="the sealed split: its families and human groups are never measured here "
                         "(only judge_lofo.py --final reads them)")
    ap.add_argument("--json", type=Path, default=Path("benchmarks/results/judge_wild.json"),
                    help="where the result is written (default %(default)s)")
    ap.add_argument("--agent-speech-s", type=float, default=20.0,
                    help="agent audio per dialogue, seconds (whole call ≈ 1.6× this)")
    ap.add_argument("--user-max-s", type=float, default=4.0, help="longest caller turn, seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--conditions", default="wideband,telephone",
                    help="comma-separated line conditions: wideband, telephone (8 kHz μ-law), "
                         "mp3-KBPS (the agent's clips through an MP3 round trip at KBPS kbit/s); default %(default)s")
    ap.add_argument("--limit", type=int, default=None, help="at most this many dialogues (smoke runs)")
    ap.add_argument("--head", default=None, metavar="DIR",
                    help="measure this head instead of the shipped default (as `livejudge score --head DIR`)")
    ap.add_argument("--measure-only", action="store_true",
                    help="only the sources whose licence does not allow fitting (never in any head's training): "
                         "unseen SOURCES and systems for any head; their families may still be ones a head was fitted on")
    ap.add_argument("--write-caveat", default=None, metavar="HEAD_DIR",
                    help="with --from-json: write the stored measurement into HEAD_DIR's config as its validity caveat")
    ap.add_argument("--from-json", type=Path, default=None, help="a stored result of this script (no scoring)")
    ap.add_argument("--people-from", type=Path, default=None, metavar="RESULT.json",
                    help="a stored result of this script, of the same head (checked by its weights digest): its "
                         "people dialogues join this run's per condition, so a batch of machines alone gets a "
                         "ROC-AUC against them (a two-run figure: each people dialogue keeps 'people_from')")
    ap.add_argument("--corpus-table", action="store_true",
                    help="print the sources table of docs/corpus.md from the manifest and stop")
    a = ap.parse_args(argv)
    conditions = {c: parse_condition(c) for c in a.conditions.split(",")}  # refused before anything loads
    if a.corpus_table:
        try:
            print(corpus_table([r for m in a.manifest for r in read_manifest(m, need_audio=False)]))
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            sys.stderr.close()
        return 0
    if a.write_caveat:
        if a.from_json is None:
            raise SystemExit("--write-caveat needs --from-json RESULT.json (a stored run of this script)")
        print(write_caveat(Path(a.write_caveat), json.loads(a.from_json.read_text()), a.from_json.name))
        return 0

    from livejudge.commands.cli import build_parser
    from livejudge.commands.runner import judge_config, judge_from_config, session_config
    from livejudge.judge.training.evaluate import roc_auc

    cli = build_parser().parse_args(["score", "call.wav"] + (["--head", a.head] if a.head else []))  # the defaults a user gets
    judge = judge_from_config(judge_config(cli))
    if judge is None:
        raise SystemExit("the default judge did not load here (see the line above); nothing to measure")
    config = session_config(cli, "every")

    rows = [r for m in a.manifest for r in read_manifest(m)]
    if a.measure_only:
        rows = [r for r in rows if r.get("licence") not in FIT_OK]
    sealed = json.loads(a.sealed.read_text()) if a.sealed.exists() else {"families": [], "groups": []}
    skip = set(a.exclude_family) | set(sealed["families"]) | set(sealed["groups"])
    if skip & {r["family"] for r in rows}:
        print(f"left out: {sorted(skip & {r['family'] for r in rows})} (sealed or --exclude-family)", file=sys.stderr)
    rows = [r for r in rows if r["family"] not in skip]
    silent = [r["path"] for r in rows if not has_speech(r["path"])]
    if silent:
        print(f"left out {len(silent)} clips without speech the builder can find: {silent[:3]}...", file=sys.stderr)
        rows = [r for r in rows if r["path"] not in set(silent)]
    plans = plan_dialogues(rows, a.agent_speech_s)
    if a.limit:
        plans = plans[: a.limit]
    print(f"{len(rows)} clips -> {len(plans)} dialogues "
          f"({sum(p['label'] == 'human' for p in plans)} with a person as agent)", file=sys.stderr)

    results: dict = {"command": "OMP_NUM_THREADS=1 nice -n 10 python benchmarks/judge_wild.py "
                                + " ".join(argv if argv is not None else sys.argv[1:]),
                     "commit": _git_head(), "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "manifest": " + ".join(map(str, a.manifest)), "n_clips": len(rows), "seed": a.seed,
                     "left_out_families": sorted(skip), "left_out_silent_clips": silent,
                     "agent_speech_s": a.agent_speech_s, "user_max_s": a.user_max_s,
                     "unit": "summary.mean_p_human of `livejudge score` defaults "
                             f"(window {config.window_s} s every {config.interval_s} s, judge mode every)",
                     "conditions": {}}
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD

    # which head, by its weights (refit_v6/rule.py checks it): --head's, or the shipped default's
    # (a run without --head recorded none, and v23's rule refused it: 2026-12-06)
    head_dir = a.head or (DEFAULT_WHISPER_HEAD if (judge.info() or {}).get("head") == "whisper-fitted" else None)
    if head_dir:
        from livejudge.judge.training.blend import weights_digest

        results["head_weights_sha256_16"] = weights_digest(head_dir)
        frame_file = Path(head_dir) / "frame_cnn.safetensors"
        if frame_file.is_file():  # which frame readout (v12's networks differ from 0.3.0's, its linear weights do not)
            results["frame_readout_sha256_16"] = hashlib.sha256(frame_file.read_bytes()).hexdigest()[:16]
    people_from = None
    if a.people_from is not None:  # people of a stored run of this very head (same protocol and settings)
        people_from = json.loads(a.people_from.read_text())
        for key in ("head_weights_sha256_16", "frame_readout_sha256_16"):
            if people_from.get(key) != results.get(key):
                raise SystemExit(f"--people-from {a.people_from}: its {key} is {people_from.get(key)}, this head's "
                                 f"{results.get(key)}: people dialogues of another head cannot be pooled")
        missing = [c for c in conditions if c not in people_from.get("conditions", {})]
        if missing:
            raise SystemExit(f"--people-from {a.people_from}: no {', '.join(missing)} condition stored")
        for key in ("agent_speech_s", "user_max_s", "seed", "unit"):
            if people_from.get(key) != results.get(key):
                raise SystemExit(f"--people-from {a.people_from}: its {key} differs ({people_from.get(key)!r} vs "
                                 f"{results.get(key)!r}): not the same protocol")
        results["people_from"] = {"file": str(a.people_from), "command": people_from.get("command"),
                                  "commit": people_from.get("commit")}
    t_all = time.perf_counter()
    for cond, (telephone, mp3_kbps) in conditions.items():
        dialogues = []
        t0 = time.perf_counter()
        for i, plan in enumerate(plans):
            d = build(plan, i, a.seed, telephone, a.user_max_s, mp3_kbps)
            s = score_call(d.call, cli, judge, config)
            results.setdefault("judge_info", s["judge_info"])
            langs = [c.get("lang") or "en" for c in plan["clips"]]
            dialogues.append({"label": plan["label"], "family": plan["family"], "system": plan["system"],
                              "english": all(x == "en" for x in langs),
                              "clips": [c["path"] for c in plan["clips"]],
                              "duration_s": round(len(d.call.user) / 16000, 1),
                              "agent_talk_s": s["agent_talk_s"], "p": s["mean_p_human"],
                              "coverage": s["evidence_coverage"], "windows": s["judged_windows"]})
        dt = time.perf_counter() - t0
        n_scored_here = len(dialogues)
        if people_from is not None:
            dialogues += [dict(d, people_from=a.people_from.name) for d in people_from["conditions"][cond]["dialogues"]
                          if d["label"] == "human"]
        by_sys: dict = defaultdict(list)
        by_fam: dict = defaultdict(list)
        for d in dialogues:
            by_sys[(d["label"], d["family"], d["system"])].append(d)
            by_fam[(d["label"], d["family"])].append(d)
        scored = [d for d in dialogues if d["p"] is not None]
        pooled = [d for d in scored if d["family"] not in RESYNTH]
        auc = roc_auc([d["p"] for d in pooled], [1 if d["label"] == "human" else 0 for d in pooled])
        auc_all = roc_auc([d["p"] for d in scored], [1 if d["label"] == "human" else 0 for d in scored])
        en = [d for d in pooled if d["english"]]
        auc_en = roc_auc([d["p"] for d in en], [1 if d["label"] == "human" else 0 for d in en])
        humans = [d for d in scored if d["label"] == "human"]
        fam_auc = {}
        for (label, fam), ds in by_fam.items():
            if label == "machine":
                ms = [d for d in ds if d["p"] is not None]
                v = roc_auc([d["p"] for d in humans + ms], [1] * len(humans) + [0] * len(ms))
                fam_auc[fam] = None if v is None else round(v, 3)
        results["conditions"][cond] = {
            "pooled_auc_machines_vs_people": None if auc is None else round(auc, 3),
            "pooled_auc_incl_codec_resynthesis": None if auc_all is None else round(auc_all, 3),
            "pooled_auc_english_agents_only": None if auc_en is None else round(auc_en, 3),
            "people": summarise([d for d in dialogues if d["label"] == "human"]),
            "machines": summarise([d for d in dialogues if d["label"] == "machine" and d["family"] not in RESYNTH]),
            "by_family": {f"{lab}:{fam}": summarise(ds) | ({"auc_vs_all_people": fam_auc[fam]} if lab == "machine" else {})
                          for (lab, fam), ds in sorted(by_fam.items())},
            "by_system": {f"{lab}:{fam}:{sysn}": summarise(ds) for (lab, fam, sysn), ds in sorted(by_sys.items())},
            "dialogues": dialogues,
            "seconds": round(dt, 1),
            "audio_seconds": round(sum(d["duration_s"] for d in dialogues), 1),
        }
        print(f"[{cond}] {n_scored_here} dialogues scored in {dt:.0f} s"
              + (f" (+{len(dialogues) - n_scored_here} people dialogues from {a.people_from.name})"
                 if people_from is not None else ""), file=sys.stderr)
    results["seconds_total"] = round(time.perf_counter() - t_all, 1)
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(results, indent=1))
    print_table(results)
    print(f"\nwritten {a.json}")
    return 0


def print_table(results: dict) -> None:
    conds = list(results["conditions"])
    first = results["conditions"][conds[0]]

    def cell(c, key, grp="by_family"):
        s = results["conditions"][c][grp].get(key) if grp else results["conditions"][c][key]
        if not s or s.get("mean_p_human") is None:
            return f"{'-':>14}"
        return f"{s['mean_p_human']:>6.2f} {s.get('acc_at_0.5', float('nan')):>6.2f} "

    print(f"\n{'group':46} {'n':>3}  " + "  ".join(f"{c[:14]:>14}" for c in conds))
    print(f"{'':46} {'':>3}  " + "  ".join(f"{'P(hum)   acc':>14}" for _ in conds))
    for key, s in first["by_family"].items():
        print(f"{key[:46]:46} {s['n']:>3}  " + "  ".join(cell(c, key) for c in conds))
    print("  by system:")
    for key, s in first["by_system"].items():
        print(f"  {key.split(':', 1)[1][:44]:44} {s['n']:>3}  " + "  ".join(cell(c, key, "by_system") for c in conds))
    print(f"{'ALL PEOPLE':46} {first['people']['n']:>3}  " + "  ".join(cell(c, 'people', None) for c in conds))
    print(f"{'ALL MACHINES (neural TTS)':46} {first['machines']['n']:>3}  "
          + "  ".join(cell(c, 'machines', None) for c in conds))
    for key, name in (("pooled_auc_machines_vs_people", "pooled ROC-AUC machines vs people"),
                      ("pooled_auc_english_agents_only", "  same, English-speaking agents only"),
                      ("pooled_auc_incl_codec_resynthesis", "  same, codec re-synthesis counted machine")):
        print(f"{name:46} {'':>3}  " + "  ".join(f"{str(results['conditions'][c][key]):>14}" for c in conds))


if __name__ == "__main__":
    sys.exit(main())
