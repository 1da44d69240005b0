"""ASR speed and accuracy of ``WhisperTranscriber`` (livejudge[asr]) on the shipped clips.

Target (issue 6): ASR keeps up with real time on 2 cores, i.e. the per-turn compute over the
turn's duration (real-time factor, RTF) stays below 1 in aggregate, so the single worker never
falls behind a talking agent.

Run:  python benchmarks/asr_speed.py [--cores 2] [--threads 1] [--model DIR] [--no-prompt] [--live]

Prints, per clip (each clip = one turn): duration, compute time, RTF, WER against the known
transcript (Austen clips: livejudge/data/audio/README.md; espeak clips: make_machine.sh), and the
recognised text. Then short-turn fixed cost (Whisper pads every input to 30 s of features),
aggregate RTF, filler retention with and without the filler prompt (when espeak-ng is present to
render fillers), and the text-feature time for one window's transcripts.
``--live`` also streams the 60 s example dialogue through a Session in real time and reports
turns dropped and the delay from a turn's end to its transcript.
The process is pinned to ``--cores`` cores (Linux); Whisper uses ``--threads`` of them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REFS = {
    "librivox_austen_0870": "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
    "librivox_austen_0880": "he was not an ill disposed young man",
    "librivox_austen_0890": "unless to be rather cold hearted and rather selfish is to be ill disposed",
    "librivox_austen_0920": "had he married a more a amiable woman he might have been made still more respectable than he was",
    "librivox_austen_0930": "he might even have been made amiable himself",
    "espeak_austen_0870": "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
    "espeak_austen_0880": "he was not an ill disposed young man",
    "espeak_austen_0890": "unless to be rather cold hearted and rather selfish is to be ill disposed",
    "espeak_austen_0920": "had he married a more amiable woman he might have been made still more respectable than he was",
    "espeak_austen_0930": "he might even have been made amiable himself",
    "espeak_reply_01": "That's a great question! I'd be happy to help you with that. Here are three options you might consider.",
    "espeak_reply_02": "Absolutely. I completely understand. Let me look into that for you right away.",
    "espeak_reply_03": "I'm sorry for the confusion. To summarize, the store opens at nine and closes at six.",
    "espeak_reply_04": "Sure. The weather tomorrow will be sunny, with a high of twenty two degrees.",
    "espeak_reply_05": "Thank you for your patience. Is there anything else I can help you with today?",
}

FILLER_SENTENCES = (
    "Um, so, uh, I think the store opens at nine, um, or maybe ten.",
    "Well, uh, I mean, you know, it's, um, kind of hard to say.",
    "Uh, let me see, um, the train leaves at, uh, half past four.",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2, help="cores the process may use (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="CTranslate2 threads (default: %(default)s, as ASRConfig)")
    ap.add_argument("--model", default=None, help="local faster-whisper model directory (default: env or bundled)")
    ap.add_argument("--no-prompt", action="store_true", help="decode without the filler prompt")
    ap.add_argument("--live", action="store_true", help="also stream the 60 s example dialogue in real time")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))[: args.cores]
        os.sched_setaffinity(0, set(cpus))

    import soundfile as sf

    from livejudge.audio import SAMPLE_RATE, resample
    from livejudge.events import Turn, TurnTranscript
    from livejudge.judge.features.asr import ASRConfig, FILLER_PROMPT, WhisperTranscriber, load_whisper, find_whisper_model, word_error_rate
    from livejudge.judge.features.text import analyse_text, count_fillers, count_words, warm_up
    from livejudge.testing.dialogues import list_clips, load_clip

    cfg = ASRConfig(cpu_threads=args.threads, initial_prompt=None if args.no_prompt else FILLER_PROMPT)
    model_dir = find_whisper_model(args.model)
    t0 = time.perf_counter()
    whisper = load_whisper(model_dir, cfg)
    print(f"model {model_dir}  load {time.perf_counter() - t0:.2f} s  cores {args.cores}  threads {args.threads}  "
          f"prompt {cfg.initial_prompt!r}")
    tr = WhisperTranscriber(config=cfg, whisper=whisper)
    warm = load_clip("cmu_cards_001")
    tr.transcribe(Turn("agent", 0, 1), warm)  # first call pays one-off set-up

    print(f"\n{'clip':24s} {'dur s':>6s} {'comp s':>7s} {'RTF':>6s} {'WER':>6s}  text")
    rows = []
    texts: list[TurnTranscript] = []
    for kind in ("human", "machine"):
        for name in list_clips(kind):
            x = load_clip(name)
            dur = len(x) / SAMPLE_RATE
            t = time.perf_counter()
            out = tr.transcribe(Turn("agent", 0.0, dur), x)
            comp = time.perf_counter() - t
            wer = word_error_rate(REFS[name], out.text) if name in REFS else float("nan")
            rows.append((name, dur, comp, wer, len(REFS.get(name, "").split())))
            texts.append(TurnTranscript("agent", float(len(texts)), float(len(texts)) + dur, out.text, out.n_words))
            print(f"{name:24s} {dur:6.2f} {comp:7.3f} {comp / dur:6.3f} {wer:6.3f}  {out.text[:70]}")
    tot_d = sum(r[1] for r in rows)
    tot_c = sum(r[2] for r in rows)
    print(f"\naggregate RTF over {len(rows)} turns ({tot_d:.1f} s of speech): {tot_c / tot_d:.3f}"
          f"  (compute/audio; < 1 keeps up with real time)")
    print(f"per-turn RTF median {statistics.median(r[2] / r[1] for r in rows):.3f}, "
          f"max {max(r[2] / r[1] for r in rows):.3f}")
    for group, pref in (("LibriVox Austen (human)", "librivox_austen"), ("espeak Austen (machine)", "espeak_austen"),
                        ("espeak replies (machine)", "espeak_reply")):
        sel = [r for r in rows if r[0].startswith(pref)]
        n = sum(r[4] for r in sel)
        print(f"WER {group:26s} {sum(r[3] * r[4] for r in sel) / n:.3f}  ({n} reference words)")

    print("\nshort turns (fixed cost: Whisper encodes 30 s of features whatever the length):")
    src = load_clip("librivox_two_cities")
    for d in (0.5, 1.0, 2.0, 5.0, 10.0, 20.0):
        x = src[: int(d * SAMPLE_RATE)]
        times = []
        for _ in range(3):
            t = time.perf_counter()
            tr.transcribe(Turn("agent", 0, d), x)
            times.append(time.perf_counter() - t)
        c = statistics.median(times)
        print(f"  {d:5.1f} s turn: {c:.3f} s compute, RTF {c / d:.3f}")

    if shutil.which("espeak-ng"):
        print("\nfiller retention (espeak-ng renderings of sentences with fillers; synthetic speech, "
              "not a measurement on human fillers):")
        with tempfile.TemporaryDirectory() as tmp:
            clips = []
            for i, s in enumerate(FILLER_SENTENCES):
                p = os.path.join(tmp, f"f{i}.wav")
                subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", p, s], check=True)
                y, sr = sf.read(p, dtype="float32")
                clips.append((s, resample(y, sr, SAMPLE_RATE)))
            for label, prompt in (("with filler prompt", FILLER_PROMPT), ("without prompt", None)):
                t2 = WhisperTranscriber(config=ASRConfig(cpu_threads=args.threads, initial_prompt=prompt), whisper=whisper)
                kept = said = 0
                for s, y in clips:
                    o = t2.transcribe(Turn("agent", 0, len(y) / SAMPLE_RATE), y)
                    kept += count_fillers(o.text)
                    said += count_fillers(s)
                print(f"  {label:20s}: {kept}/{said} fillers transcribed")
    else:
        print("\nfiller retention: skipped (espeak-ng not installed)")

    t = time.perf_counter()
    warm_up()
    print(f"\ntext features: loading VADER and py3langid once: {time.perf_counter() - t:.2f} s")
    reps = 20
    window = texts[-10:]  # the espeak turns
    t = time.perf_counter()
    for _ in range(reps):
        analyse_text(window)
    words = sum(count_words(x.text) for x in window)
    print(f"text features for one window ({len(window)} turns, {words} words): "
          f"{(time.perf_counter() - t) / reps * 1e3:.2f} ms per window")

    if args.live:
        from livejudge.session import Session, SessionConfig, stream_call
        from livejudge.testing.dialogues import example_dialogue

        d = example_dialogue(seed=0)
        lags: list[float] = []
        t_start = [0.0]

        class LagSink:
            def on_event(self, ev):
                if isinstance(ev, TurnTranscript):
                    lags.append(time.perf_counter() - t_start[0] - ev.offset_s)

            def on_close(self, result):
                pass

        live = WhisperTranscriber(config=cfg, whisper=whisper)
        s = Session(SessionConfig(), sinks=[LagSink()], transcriber=live)
        t_start[0] = time.perf_counter()
        stream_call(s, d.call, speed=1.0)
        s.close()
        st = live.stats()
        print(f"\nlive (real-time stream of {d.call.duration_s:.0f} s, {st.submitted} agent turns): "
              f"dropped {st.dropped}, RTF {st.real_time_factor:.3f}, delay from turn end to transcript "
              f"median {statistics.median(lags):.2f} s, max {max(lags):.2f} s "
              f"(includes the VAD hangover and turn settling)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
