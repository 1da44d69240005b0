"""Gather machine and human speech clips from fetched public GitHub snapshots (issue 19, part 1).

Reads bare git mirrors under /work/.mirror, extracts matching audio files at a fixed commit,
converts each to 16 kHz mono 16-bit WAV under /work/exp/wild/clips/<family>/..., and writes
/work/exp/wild/manifest.csv. Data gathering only: the mirrors come from a development session's
`fetch` tool (commit-pinned snapshots of the repositories listed in docs/corpus.md), so this does
not run in CI. Needs ffmpeg on PATH (Debian: apt-get install ffmpeg). The manifest it wrote for the 2026-12-03 measurements is kept in
benchmarks/data/wild_manifest.csv (repo, commit and source path of every clip; the clips
themselves are not in the project: mixed licences, 67 MB).

RESERVED (never fetched, read or used): styletts2/styletts2.github.io,
BytedanceSpeech/bytedancespeech.github.io, speechbot/speechbot.github.io, neonbjb/tortoise-tts,
microsoft/VibeVoice, resemble-ai/Resemblyzer, Azure-Samples/cognitive-services-speech-sdk,
nu-dialogue/moshi-finetune, MbBrainz/ttslab, pyannote/pyannote-audio test data, hibari-tts.
The ttsds/ttsdb examples of StyleTTS 2, Tortoise and VibeVoice are skipped too (same systems as
the reserved outside evaluation).
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

MIRROR = Path("/work/.mirror")
OUT = Path("/work/exp/wild")
CLIPS = OUT / "clips"
CAP_PER_REPO = 64
CAP_PER_SYSTEM = 14
RESERVED = {"styletts2/styletts2.github.io", "bytedancespeech/bytedancespeech.github.io",
            "speechbot/speechbot.github.io", "neonbjb/tortoise-tts", "microsoft/vibevoice",
            "resemble-ai/resemblyzer", "azure-samples/cognitive-services-speech-sdk",
            "nu-dialogue/moshi-finetune", "mbbrainz/ttslab", "pyannote/pyannote-audio"}

# (regex on path, label, family, system, speaker group index or fixed speaker)
Rule = tuple[str, str, str, str, str]

SOURCES: list[dict] = [
    {"repo": "MobileSpeech/MobileSpeech.github.io", "commit": "HEAD", "licence": "CC0-1.0",
     "rules": [
         (r"assets/audios/waves/(\d+)/gtexample\.wav$", "human", "human-read-audiobook", "librispeech-gt", "mobilespeech-item\\1"),
         (r"assets/audios/waves/(\d+)/valle\.wav$", "machine", "ar-codec-lm", "valle-repro(mobilespeech)", "zero-shot\\1"),
         (r"assets/audios/waves/(\d+)/megatts\.wav$", "machine", "megatts", "megatts", "zero-shot\\1"),
         (r"assets/audios/waves/(\d+)/yourtts\.wav$", "machine", "vits-zero-shot", "yourtts", "zero-shot\\1"),
         (r"assets/audios/waves/(\d+)/mobilespeech\.wav$", "machine", "masked-codec-nar", "mobilespeech", "zero-shot\\1"),
         (r"assets/audios/waves/(\d+)/gtcodec\.wav$", "machine", "codec-resynthesis", "gtcodec(mobilespeech)", "resynth\\1"),
     ]},
    # the Microsoft VALL-E demo samples, kept in an old commit of Plachtaa/VALL-E-X
    {"repo": "Plachtaa/VALL-E-X", "commit": "4e6ff37665d30865f3c0713a077495bc6fa1b5a7", "licence": "MIT",
     "rules": [
         (r"demos/valle/librispeech/\d+/librispeech_([\d]+)-.*_ours\.wav$", "machine", "ar-codec-lm", "valle(msft-demo)", "libri\\1"),
         (r"demos/valle/librispeech/\d+/librispeech_([\d]+)-.*_yourtts\.wav$", "machine", "vits-zero-shot", "yourtts", "libri\\1"),
         (r"demos/valle/librispeech/\d+/librispeech_([\d]+)-.*_(gt|prompt)\.wav$", "human", "human-read-audiobook", "librispeech-gt", "libri\\1"),
         (r"demos/valle/vctk/\d+/vctk_(p\d+)_ours\.wav$", "machine", "ar-codec-lm", "valle(msft-demo)", "\\1"),
         (r"demos/valle/vctk/\d+/vctk_(p\d+)_baseline\.wav$", "machine", "vits-zero-shot", "yourtts", "\\1"),
         (r"demos/valle/vctk/\d+/vctk_(p\d+)_(gt|prompt)\.wav$", "human", "human-read-studio", "vctk-gt", "\\1"),
         (r"demos/valle/acou_env_maint/(\d+)/fisher_\d+_ours\.wav$", "machine", "ar-codec-lm", "valle(msft-demo)", "fisher\\1"),
         (r"demos/valle/acou_env_maint/(\d+)/fisher_\d+_(gt|pt)\.wav$", "human", "human-telephone-conversational", "fisher-gt", "fisher\\1",
          {"licence": "MIT (repo); Fisher audio is LDC-licensed: measure only"}),
         (r"demos/valle/emotion/(\w+)/emov_db_\w+_ours\.wav$", "machine", "ar-codec-lm", "valle(msft-demo)", "emovdb"),
         (r"demos/valle/emotion/(\w+)/emov_db_\w+_pt\.wav$", "human", "human-acted-emotional", "emov-db", "emovdb"),
     ]},
    {"repo": "14484anon/demo14484", "commit": "HEAD", "licence": "none found",
     "rules": [
         (r"wavs/(section4_2|rebuttal_vctk|appendix)/(\d+)_pflow\.wav$", "machine", "flow-matching", "p-flow", "\\1-\\2"),
         (r"wavs/(section4_2|rebuttal_vctk|appendix)/(\d+)_valle\.wav$", "machine", "ar-codec-lm", "valle-repro(p-flow)", "\\1-\\2"),
         (r"wavs/(section4_2|rebuttal_vctk)/(\d+)_(gt|reference)\.wav$", "human", "human-read-studio", "pflow-gt-ref", "\\1-\\2"),
         (r"wavs/(appendix)/(\d+)_(reference)\.wav$", "human", "human-acted-emotional", "pflow-emotional-ref", "\\1-\\2"),
     ]},
    {"repo": "espnet/espnet-tts-sample", "commit": "HEAD", "licence": "none found",
     "rules": [
         (r"data/ljspeech/ground_truth/wav/(LJ[\d-]+)\.wav$", "human", "human-read-audiobook", "ljspeech-gt", "LJ"),
         (r"data/ljspeech/(tacotron2)\.v\d/wav_WNV_\w+/(LJ[\d-]+).*\.wav$", "machine", "ar-mel-neural-vocoder", "tacotron2+wavenet(espnet)", "LJ"),
         (r"data/ljspeech/(transformer)\.v\d/wav_WNV_\w+/(LJ[\d-]+).*\.wav$", "machine", "ar-mel-neural-vocoder", "transformer-tts+wavenet(espnet)", "LJ"),
         (r"data/ljspeech/(fastspeech)\.v\d/wav_WNV_\w+/(LJ[\d-]+).*\.wav$", "machine", "nar-mel-neural-vocoder", "fastspeech+wavenet(espnet)", "LJ"),
         (r"data/libritts/audio/ground_truth/(\d+)_.*\.wav$", "human", "human-read-audiobook", "libritts-gt", "\\1"),
     ]},
    {"repo": "vs-tts123/VSTTS-Demo", "commit": "HEAD", "licence": "CC0-1.0",
     "rules": [
         (r"assets/audios/lrs3/\w+/(\w+)_\d+/\d+\.wav$", "human", "human-public-speech", "lrs3-ted", "\\1"),
         (r"assets/audios/lrs3/\w+/(\w+)_\d+/gen_wav_[0-9]\.wav$", "machine", "diffusion-variance", "vs-tts", "\\1"),
         (r"assets/audios/libritts\(\w+\)/\w+/(audio_prompt)\d?\.wav$", "human", "human-read-audiobook", "libritts-prompt(vstts)", "prompt"),
         (r"assets/audios/libritts\(\w+\)/control_with_timbre/(\d)/audio_prompt\d\.wav$", "human", "human-read-audiobook", "libritts-prompt(vstts)", "prompt\\1"),
         (r"assets/audios/libritts\(\w+\)/\w+/vstts-\w+-(normal|nromal)\.wav$", "machine", "diffusion-variance", "vs-tts", "libritts"),
         (r"assets/audios/emotion/(vstts)-\d\.wav$", "machine", "diffusion-variance", "vs-tts", "emotion"),
         (r"assets/audios/emotion/(audio_prompt)\d\.wav$", "human", "human-acted-emotional", "esd-prompt(vstts)", "emotion"),
     ]},
    {"repo": "ttsds/ttsdb", "commit": "HEAD", "licence": "none found",
     "rules": [
         (r"models/(e2-tts)/audio_examples/\w+/eng_test_\d+\.wav$", "machine", "flow-matching", "e2-tts", "daisy"),
         (r"models/(f5-tts)/audio_examples/\w+/eng_test_\d+\.wav$", "machine", "flow-matching", "f5-tts", "daisy"),
         (r"models/(fish-speech)/audio_examples/[\w-]+/(eng|deu|fra|spa|ita|nld)_test_\d+\.wav$", "machine", "ar-codec-lm", "fish-speech-s1-mini", "daisy"),
         (r"models/(gpt-sovits)/audio_examples/\w+/eng_test_\d+\.wav$", "machine", "ar-token-lm+vits", "gpt-sovits", "daisy"),
         (r"models/(hierspeech)/audio_examples/[\w.]+/eng_test_\d+\.wav$", "machine", "vits-zero-shot", "hierspeech++", "daisy"),
         (r"models/(indextts)/audio_examples/\w+/eng_test_\d+\.wav$", "machine", "ar-codec-lm", "indextts", "daisy"),
         (r"models/(maskgct)/audio_examples/default/(eng|deu|fra)_test_\d+\.wav$", "machine", "masked-codec-nar", "maskgct", "daisy"),
         (r"models/(metavoice)/audio_examples/default/eng_test_\d+\.wav$", "machine", "ar-codec-lm", "metavoice", "daisy"),
         (r"models/(openvoice)/audio_examples/default/eng\w*\.wav$", "machine", "voice-conversion-tts", "openvoice", "daisy"),
         (r"models/(pheme)/audio_examples/\w+/eng\w*\.wav$", "machine", "ar-codec-lm", "pheme", "daisy"),
         (r"models/(vevo)/audio_examples/[\w.]+/eng\w*\.wav$", "machine", "voice-conversion-tts", "vevo1.5", "daisy"),
         (r"models/(voicecraft)/audio_examples/\w+/eng\w*\.wav$", "machine", "ar-codec-lm", "voicecraft", "daisy"),
         (r"models/(whisperspeech)/audio_examples/\w+/(eng|deu|fra|spa|pol|nld|ita)\w*\.wav$", "machine", "ar-codec-lm", "whisperspeech", "daisy"),
         (r"models/(xtts)/audio_examples/v2/(eng|deu|fra|spa|ita|nld|pol|por)\w*\.wav$", "machine", "ar-codec-lm", "xtts-v2", "daisy"),
     ]},
    # per-turn audio of generated two-host podcasts; the config at that commit names OpenAI
    # tts-1-hd (voices echo/shimmer) as the default engine (not verified from the audio)
    {"repo": "souzatharsis/podcastfy", "commit": "aed2644cc907169a8abdc7583e2d367ef7730a95", "licence": "Apache-2.0",
     "rules": [
         (r"podcastfy/data/audio/tmp/tmpr8kry76g/\d+_(question)\.mp3$", "machine", "commercial-neural-tts", "podcastfy(openai-tts-1-hd?)-host-question", "\\1"),
         (r"podcastfy/data/audio/tmp/tmpr8kry76g/\d+_(answer)\.mp3$", "machine", "commercial-neural-tts", "podcastfy(openai-tts-1-hd?)-host-answer", "\\1"),
     ]},
    # conversational / public speech from a transcription tool's test audio (YouTube-sourced
    # recordings; the repo's MIT licence does not cover them: measure only)
    {"repo": "gaspardpetit/verbatim", "commit": "3b30bdda85b9ae1c98930c71409158af78143804",
     "licence": "MIT (repo); recordings third-party, no licence: measure only",
     "rules": [
         (r"audio/2ch-distinct_2spk_de_(\w+)\.m4a$", "human", "human-conversational-therapy", "therapy-session-de(mic1)", "\\1", {"channel": 0, "split_s": 8, "max_segments": 12, "lang": "de"}),
         (r"audio/2ch-acoustic_2spk_de_(BeltzSchwierigeSituation_\d)\.m4a$", "human", "human-conversational-therapy", "therapy-roleplay-de(room)", "\\1", {"split_s": 8, "max_segments": 4, "lang": "de"}),
         (r"audio/2ch-acoustic_1spk_en-de_(KennedyBerliner)\.mp3$", "human", "human-public-speech", "kennedy-1963", "\\1", {"split_s": 8, "max_segments": 6}),
     ]},
]


def git(repo_dir: Path, *args: str, binary: bool = False):
    r = subprocess.run(["git", "--git-dir", str(repo_dir), *args], capture_output=True, check=True)
    return r.stdout if binary else r.stdout.decode()


def split_at_pauses(dest: Path, seg_s: float, max_segments: int) -> list[tuple[Path, float]]:
    """Cut a long 16 kHz clip into ~seg_s pieces at the quietest 10 ms frame within ±25 % of each
    boundary (so no cut lands inside a loud syllable). Returns [(path, duration_s)]. The audio after
    the last cut, and a whole clip shorter than 1.25 × seg_s, are not kept (the latter is said on
    stderr); every stored manifest was gathered this way."""
    import numpy as np
    import soundfile as sf

    x, sr = sf.read(str(dest), dtype="float32")
    fr = sr // 100
    e = np.convolve((x[: len(x) // fr * fr].reshape(-1, fr) ** 2).mean(1), np.ones(5) / 5, "same")
    out, start, k = [], 0, 0
    while start < len(e) - int(seg_s * 50) and k < max_segments:
        lo, hi = start + int(seg_s * 75), start + int(seg_s * 125)
        if hi >= len(e):
            break
        cut = lo + int(np.argmin(e[lo:hi]))
        piece = dest.with_name(f"{dest.stem}_seg{k:02d}.wav")
        sf.write(str(piece), x[start * fr: cut * fr], sr, subtype="PCM_16")
        out.append((piece, (cut - start) / 100))
        start, k = cut, k + 1
    dest.unlink()
    if not out:  # kept as it was (the stored manifests depend on it), but no longer silent
        print(f"dropped {dest.name}: {len(x) / sr:.1f} s is shorter than 1.25 x split_s ({1.25 * seg_s:.1f} s), "
              "so no piece was cut; give its rule a smaller split_s to keep it", file=sys.stderr)
    return out


def to_wav16k(data: bytes, dest: Path, channel: int | None = None) -> float:
    import shutil

    if shutil.which("ffmpeg") is None:
        sys.exit("gather_wild_corpus: ffmpeg not found; install it (Debian: apt-get install ffmpeg) and run again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.NamedTemporaryFile() as tmp:  # a file, not a pipe: m4a keeps its index at the end
        tmp.write(data)
        tmp.flush()
        pick = ["-af", f"pan=mono|c0=c{channel}"] if channel is not None else ["-ac", "1"]
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", tmp.name, *pick, "-ar", "16000",
                        "-sample_fmt", "s16", str(dest)], check=True)
    import soundfile as sf

    return sf.info(str(dest)).duration


def gather(sources: list[dict], manifest_name: str, *, cap_per_repo: int = CAP_PER_REPO,
           skip_rx: str = r"(styletts|tortoise|vibevoice)", min_duration_s: float = 0.0,
           split_over_s: float | None = None, licence_of=None) -> list[dict]:
    """Extract every clip the sources' rules match, convert it, and write OUT/manifest_name.

    Args:
        sources: dicts with repo, commit, licence and rules (module docstring's SOURCES format).
        manifest_name: the CSV written under OUT.
        cap_per_repo: at most this many source files per repository (CAP_PER_SYSTEM per system).
        skip_rx: systems never taken (reserved or sealed), matched on the path, the rule's
            system name and its regex.
        min_duration_s: shorter clips are dropped (not counted against the caps).
        split_over_s: a clip longer than this is cut into 8 s pieces (at most 4) at pauses; a
            rule's own ``split_s`` option wins.
        licence_of: ``(src, label, system) -> (licence, note)`` for a ``licence_note`` column;
            None: the rule's or repository's licence, no note column.
    Returns:
        The manifest rows written.
    Raises:
        SystemExit: a reserved repository in ``sources``.
    """
    rows, seen = [], set()
    for src in sources:
        repo = src["repo"]
        if repo.lower() in RESERVED:
            raise SystemExit(f"reserved source in the list: {repo}")
        gdir = MIRROR / repo.replace("/", "+") / "repo"
        commit = git(gdir, "rev-parse", src["commit"]).strip()
        paths = git(gdir, "ls-tree", "-r", "--name-only", commit).splitlines()
        n = 0
        per: dict = {}
        for path in sorted(paths):
            if re.search(skip_rx, path, re.I) or (repo, path) in seen:
                continue  # reserved systems, even from another repo; a file two sources list
            for rule in src["rules"]:
                rx, label, family, system, spk = rule[:5]
                opt = rule[5] if len(rule) > 5 else {}
                m = re.search(rx, path)
                if not m:
                    continue
                if re.search(skip_rx, system, re.I) or re.search(skip_rx, rx, re.I):
                    break
                if n >= cap_per_repo or per.get((family, system), 0) >= CAP_PER_SYSTEM:
                    break
                speaker = m.expand(spk)
                stem = re.sub(r"[^\w.-]+", "_", f"{repo.split('/')[0]}__{path}")[:150]
                dest = CLIPS / family / (Path(stem).with_suffix(".wav").name)
                try:
                    dur = to_wav16k(git(gdir, "show", f"{commit}:{path}", binary=True), dest,
                                    opt.get("channel"))
                except subprocess.CalledProcessError as exc:
                    print(f"skip {repo}:{path}: {exc}", file=sys.stderr)
                    break
                if dur < min_duration_s:
                    dest.unlink()
                    break
                seen.add((repo, path))
                per[(family, system)] = per.get((family, system), 0) + 1
                lm = re.search(r"[/_](deu|fra|spa|ita|nld|pol|por|jpn|kor|zho)_test", path)
                lang = opt.get("lang") or (lm.group(1) if lm else "en")
                if "split_s" in opt:
                    pieces = split_at_pauses(dest, opt["split_s"], opt.get("max_segments", 8))
                elif split_over_s is not None and dur > split_over_s:
                    pieces = split_at_pauses(dest, 8, 4)
                else:
                    pieces = [(dest, dur)]
                lic, note = (opt.get("licence", src["licence"]), None) if licence_of is None \
                    else licence_of(src, label, system)
                for piece, d in pieces:
                    rows.append({"path": str(piece), "label": label, "family": family, "system": system,
                                 "speaker": speaker, "duration_s": round(d, 3), "lang": lang, "repo": repo,
                                 "commit": commit, "source_path": path, "licence": lic}
                                | ({} if note is None else {"licence_note": note}))
                n += 1
                break
        print(f"{repo}: {n} clips", file=sys.stderr)
    with open(OUT / manifest_name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} clips -> {OUT / manifest_name}", file=sys.stderr)
    return rows


def main() -> int:
    gather(SOURCES, "manifest.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
