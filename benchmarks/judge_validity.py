"""Validity of the CPU judge (acoustic backbone + shipped head) on held-out speakers and voices.

Builds two-party dialogues (user: CMU clips; agent: a human or a TTS voice), runs the whole
pipeline on each call (``snapshot_of_call``: VAD → turns → transitions; then ``Judge``), and
reports ROC-AUC of P(human), accuracy at 0.5, per-dimension separation (mean score human vs
machine and the score's own ROC-AUC), and every dialogue the judge gets wrong with its top
contributions.

Held out (nothing in the shipped head was set from them):
  * human agents: ``librivox_two_cities`` (a LibriVox reader not used for the prior's measured
    references), cut into utterances at its pauses; ALSA's test voice
    (/usr/share/sounds/alsa/*.wav, Debian ``alsa-utils``) and the TIDIGITS utterance of Debian
    ``pocketsphinx-testdata`` when installed.
  * machine agents: TTS systems and voices rendered here that are not among the shipped clips:
    espeak-ng voices/variants other than the shipped en-us/en-gb (``apt-get install espeak-ng``),
    flite's kal/awb/rms/slt (``apt-get install flite``), festival's kal diphone and slt HTS
    voices (``apt-get install festival festvox-kallpc16k festvox-us-slt-hts``). Missing tools
    are skipped and listed.
  The "seen" group (Austen/CMU humans, shipped espeak clips) is reported separately.

Timing conditions (``--timing``):
  * ``voice`` (default): both classes answer after the same gaps, U(0.2, 1.2) s, so only the
    agent's voice can separate them;
  * ``published``: human gaps U(0.1, 1.0) s, machine gaps U(0.96, 2.72) s (SPEARBench Table III:
    human mean latency 742 ms, S2S means 959–2724 ms).
Both classes get the same random noise floor (−70 … −50 dBFS) and level (−30 … −18 dBFS RMS).

``--telephone`` passes every agent turn (both classes) through an 8 kHz channel.

``--asr`` transcribes every agent turn with ``livejudge.judge.features.asr.WhisperTranscriber`` (blocking,
``snapshot_of_call(call, transcriber=...)``; the bundled/local Whisper model, optional extra
livejudge[asr]) so the text dimensions get evidence; without it the text dimensions stay
gated ("needs transcripts"). Both classes speak the same reply texts (``REPLIES``) except the
held-out human readers (their own read text), so the text features see scripted replies.

Run:  python benchmarks/judge_validity.py [--timing voice|published] [--head DIR] [--seed 0] [--telephone] [--asr]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPLIES = [
    "Sure, I can help with that. Your order shipped yesterday and should arrive on Friday.",
    "Okay, let me check. The next train to Boston leaves at four fifteen from platform two.",
    "That sounds frustrating. Have you tried restarting the router and waiting a minute?",
    "Yes, the museum is open until eight tonight, and entry is free after six.",
    "I found three Italian places nearby. The closest one is about ten minutes away on foot.",
    "Your appointment is confirmed for Tuesday at nine thirty. Anything else?",
    "Well, it depends on the size of the room, but two coats of paint is usually enough.",
    "The forecast says light rain in the morning, clearing up by the afternoon.",
    "Right, so you would like to move the meeting to next week. Which day works best?",
    "I am not completely sure, but I think the library closes early on Sundays.",
    "Good question. The battery usually lasts about a day with normal use.",
    "No problem at all. I have cancelled the subscription, and you will get a confirmation email.",
]
USER_CLIPS = ["cmu_cards_005", "cmu_goforward", "cmu_numbers", "cmu_something", "cmu_cards_002",
              "cmu_cards_001", "cmu_cards_003", "cmu_cards_004"]

# (system, voice id, command builder) — none of these is among the shipped espeak clips
ESPEAK_VOICES = ["en-gb-scotland", "en-029", "en-gb-x-rp", "en-us+f3", "en-us+m4", "en-gb-x-gbclan",
                 "en-us+klatt", "en-gb+f4"]
FLITE_VOICES = ["kal", "awb", "rms", "slt"]
FESTIVAL_VOICES = ["voice_kal_diphone", "voice_cmu_us_slt_arctic_hts"]


@dataclass
class Agent:
    """One agent of the corpus: its turns (float32 16 kHz), class and group."""

    name: str
    human: bool
    group: str  # "held-out" or "seen"
    system: str
    turns: list


def _read_wav(path: str | Path) -> np.ndarray:
    from livejudge.audio import load_audio, resample, to_mono

    data, rate = load_audio(path)
    return resample(to_mono(data), rate)


def _render(cmd: list[str], out: Path) -> np.ndarray | None:
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)
        return _read_wav(out)
    except (subprocess.SubprocessError, OSError, ValueError):
        return None


def tts_agents(texts: list[str], tmp: Path, rng: np.random.Generator) -> tuple[list[Agent], list[str]]:
    """Render held-out TTS voices; returns (agents, skipped systems)."""
    agents, skipped = [], []
    if shutil.which("espeak-ng"):
        for v in ESPEAK_VOICES:
            turns = []
            for i, t in enumerate(texts):
                out = tmp / f"es_{v}_{i}.wav"
                rate = str(int(rng.integers(140, 190)))
                x = _render(["espeak-ng", "-v", v, "-s", rate, "-w", str(out), t], out)
                if x is not None:
                    turns.append(x)
            if turns:
                agents.append(Agent(f"espeak-ng {v}", False, "held-out", "espeak-ng", turns))
    else:
        skipped.append("espeak-ng")
    if shutil.which("flite"):
        for v in FLITE_VOICES:
            turns = []
            for i, t in enumerate(texts):
                out = tmp / f"fl_{v}_{i}.wav"
                x = _render(["flite", "-voice", v, "-t", t, "-o", str(out)], out)
                if x is not None:
                    turns.append(x)
            if turns:
                agents.append(Agent(f"flite {v}", False, "held-out", "flite", turns))
    else:
        skipped.append("flite")
    if shutil.which("text2wave"):
        for v in FESTIVAL_VOICES:
            turns = []
            for i, t in enumerate(texts):
                out = tmp / f"fe_{v}_{i}.wav"
                txt = tmp / f"fe_{i}.txt"
                txt.write_text(t)
                x = _render(["text2wave", "-eval", f"({v})", str(txt), "-o", str(out)], out)
                if x is not None:
                    turns.append(x)
            if turns:
                agents.append(Agent(f"festival {v.replace('voice_', '')}", False, "held-out", "festival", turns))
    else:
        skipped.append("festival")
    return agents, skipped


def split_utterances(x: np.ndarray, min_s: float = 1.5, max_s: float = 6.0) -> list[np.ndarray]:
    """Cut a long reading into utterances at its pauses (energy segments merged across < 0.35 s)."""
    from livejudge.judge.features.acoustic import energy_segments

    segs = energy_segments(x, merge_s=0.35)
    out, cur = [], None
    for a, b in segs:
        if cur is None:
            cur = [a, b]
        elif b - cur[0] <= max_s:
            cur[1] = b
        else:
            out.append(cur)
            cur = [a, b]
    if cur:
        out.append(cur)
    return [x[int(a * 16000):int(b * 16000)] for a, b in out if b - a >= min_s]


def human_agents() -> tuple[list[Agent], list[str]]:
    from livejudge.testing.dialogues import load_clip

    agents, skipped = [], []
    utts = split_utterances(load_clip("librivox_two_cities"))
    # two "agents" from the same held-out reader (different utterances)
    agents.append(Agent("librivox two_cities A", True, "held-out", "LibriVox reader", utts[0::2]))
    agents.append(Agent("librivox two_cities B", True, "held-out", "LibriVox reader", utts[1::2]))
    alsa = sorted(Path("/usr/share/sounds/alsa").glob("[FRS]*_*.wav"))
    if alsa:
        xs = [_read_wav(p) for p in alsa]
        # each turn: two or three of the short phrases ("Front Center", ...) with 0.3 s between
        turns = []
        for i in range(0, len(xs) - 1, 2):
            turns.append(np.concatenate([xs[i], np.zeros(4800, np.float32), xs[i + 1]]))
        agents.append(Agent("alsa test voice", True, "held-out", "ALSA test voice", turns))
    else:
        skipped.append("alsa-utils sounds")
    tid = Path("/usr/share/pocketsphinx/test/data/tidigits")
    raws = sorted(tid.glob("*.raw")) if tid.exists() else []
    if raws:
        from livejudge.audio import pcm16_to_float32

        x = pcm16_to_float32(raws[0].read_bytes())
        agents.append(Agent("tidigits speaker", True, "held-out", "TIDIGITS", [x]))
    else:
        skipped.append("pocketsphinx-testdata tidigits")
    # seen: the clips the prior's measured references came from, and the shipped espeak clips
    agents.append(Agent("librivox austen (seen)", True, "seen", "LibriVox reader",
                        [load_clip(f"librivox_austen_{k}") for k in ("0870", "0880", "0890", "0920", "0930")]))
    agents.append(Agent("cmu speakers (seen)", True, "seen", "CMU",
                        [load_clip(c) for c in ("cmu_cards_005", "cmu_numbers", "cmu_goforward", "cmu_something")]))
    return agents, skipped


def seen_machine() -> list[Agent]:
    from livejudge.testing.dialogues import load_clip

    return [Agent("espeak shipped clips (seen)", False, "seen", "espeak-ng",
                  [load_clip(f"espeak_reply_0{i}") for i in range(1, 6)]
                  + [load_clip(f"espeak_austen_{k}") for k in ("0870", "0890", "0920")])]


def build_dialogue(agent: Agent, k: int, rng: np.random.Generator, timing: str, n_turns: int = 3,
                   telephone: bool = False):
    """One call: n_turns user→agent exchanges; returns the DialogueBuilder's Dialogue.

    ``telephone``: the agent's turns pass through 8 kHz (resampled down and up: 4 kHz band), as
    on a phone line, for both classes.
    """
    from livejudge.audio import resample
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(noise_dbfs=float(rng.uniform(-70, -50)), seed=int(rng.integers(1 << 30)))
    order = rng.permutation(len(agent.turns))
    picks = [agent.turns[order[i % len(order)]] for i in range(n_turns)]
    level = float(rng.uniform(-30, -18))
    for i, x in enumerate(picks):
        b.user(USER_CLIPS[int(rng.integers(len(USER_CLIPS)))], gap_s=float(rng.uniform(0.3, 0.9)) if i else None)
        if timing == "published":
            gap = rng.uniform(0.1, 1.0) if agent.human else rng.uniform(0.96, 2.72)
        else:
            gap = rng.uniform(0.2, 1.2)
        y = np.asarray(x, dtype=np.float32)
        if telephone:
            y = resample(resample(y, 16000, 8000), 8000, 16000)
        rms = float(np.sqrt(np.mean(y.astype(np.float64) ** 2)) + 1e-9)
        b.agent((y * (10 ** (level / 20) / rms)).clip(-1, 1).astype(np.float32), gap_s=float(gap))
    return b.build()


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC-AUC = P(score of a random positive > score of a random negative), ties count ½ (Mann–Whitney U)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    gt = (pos[:, None] > neg[None, :]).sum()
    eq = (pos[:, None] == neg[None, :]).sum()
    return float((gt + 0.5 * eq) / (len(pos) * len(neg)))


def corpus(seed: int, timing: str, dialogues_per_human: int = 4, dialogues_per_machine: int = 2,
           telephone: bool = False):
    """(list of (agent, Dialogue), skipped) for every agent of the corpus."""
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as td:
        tts, skipped_tts = tts_agents(REPLIES, Path(td), rng)
    humans, skipped_h = human_agents()
    agents = humans + tts + seen_machine()
    items = []
    for a in agents:
        n = dialogues_per_human if a.human else dialogues_per_machine
        for k in range(n):
            items.append((a, build_dialogue(a, k, rng, timing, telephone=telephone)))
    return items, skipped_tts + skipped_h


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Validity of the CPU judge on held-out speakers and TTS voices.")
    ap.add_argument("--timing", choices=("voice", "published"), default="voice",
                    help="gap distributions of the two classes (default: %(default)s, same for both)")
    ap.add_argument("--head", default=None, help="head directory (default: the shipped acoustic-fitted)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    ap.add_argument("--telephone", action="store_true", help="pass every agent turn through an 8 kHz channel")
    ap.add_argument("--asr", action="store_true",
                    help="transcribe agent turns with WhisperTranscriber (livejudge[asr]) so text dimensions count")
    ap.add_argument("--asr-model", default=None, help="local Whisper model directory (default: env var or bundled)")
    args = ap.parse_args(argv)
    from livejudge.judge.model.judge import load_judge, top_contributors
    from livejudge.session import snapshot_of_call

    judge = load_judge("acoustic", head=args.head)
    transcriber = None
    if args.asr:
        from livejudge.judge.features.asr import WhisperTranscriber

        transcriber = WhisperTranscriber(args.asr_model)
    items, skipped = corpus(args.seed, args.timing, telephone=args.telephone)
    print(f"judge: {judge.info()['summary']}; timing condition: {args.timing}; seed {args.seed}"
          + ("; agent audio through an 8 kHz channel" if args.telephone else "")
          + (f"; agent turns transcribed ({transcriber.model_dir})" if transcriber else "; no transcripts"))
    if skipped:
        print("skipped (not installed):", ", ".join(skipped))
    rows = []
    for a, d in items:
        r = judge.judge([snapshot_of_call(d.call, transcriber=transcriber)])[0]
        rows.append((a, r))
    dims = [d for d in judge.dimensions]
    for group in ("held-out", "seen", "all"):
        sel = [(a, r) for a, r in rows if group == "all" or a.group == group]
        y = np.array([a.human for a, _ in sel])
        p = np.array([r.p_human for _, r in sel])
        if y.all() or (~y).all():
            continue
        acc = float(np.mean((p >= 0.5) == y))
        print(f"\n[{group}] {int(y.sum())} human-agent and {int((~y).sum())} machine-agent dialogues: "
              f"ROC-AUC {roc_auc(p, y):.3f}, accuracy at 0.5 {acc:.3f}, "
              f"mean P(human) human {p[y].mean():.3f} / machine {p[~y].mean():.3f}")
    print("\nper system (held-out and seen):")
    systems = sorted({(a.name, a.human, a.group) for a, _ in rows}, key=lambda t: (not t[1], t[2], t[0]))
    for name, human, group in systems:
        ps = [r.p_human for a, r in rows if a.name == name]
        print(f"  {'human  ' if human else 'machine'} {group:<9} {name:<40} P(human) {np.mean(ps):.3f}  "
              f"(min {np.min(ps):.3f}, max {np.max(ps):.3f}, n {len(ps)})")
    print("\nper-dimension separation (held-out): mean score human / machine, score ROC-AUC")
    sel = [(a, r) for a, r in rows if a.group == "held-out"]
    y = np.array([a.human for a, _ in sel])
    for d in dims:
        s = np.array([r.dimensions[d].score for _, r in sel])
        gated = np.mean([r.dimensions[d].gated for _, r in sel])
        if gated == 1.0:
            reason = sel[0][1].dimensions[d].reason
            print(f"  {d:<30} gated ({reason})")
            continue
        print(f"  {d:<30} {s[y].mean():.2f} / {s[~y].mean():.2f}   AUC {roc_auc(s, y):.3f}"
              + (f"   gated in {gated:.0%}" if gated > 0 else ""))
    print("\nwhere the judge is wrong (P(human) on the wrong side of 0.5):")
    wrong = [(a, r) for a, r in rows if (r.p_human >= 0.5) != a.human]
    if not wrong:
        print("  none")
    for a, r in wrong:
        top = ", ".join(f"{d} {c:+.2f}" for d, c in top_contributors(r, 4))
        print(f"  {'human' if a.human else 'machine'} agent {a.name} ({a.group}): P(human) {r.p_human:.3f}; "
              f"top contributions (+ = machine-like): {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
