# Candidate labelled speech clips of NEURAL TTS, voice-conversion and speech-LM systems not yet in the
# corpus (round 10), from public GitHub repositories, gathered to MEASURE ONLY (never to fit). Same
# conventions as tts_9.py: each regex is matched (re.search) against
# `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: clips
# over 16 s are cut by the gatherer's ``split_over_s`` (8 s pieces at pauses, at most 4). The option
# ``lang`` marks the non-English clips (FireRedTTS).
# Evidence, licences, match counts, durations and doubts: see tts_10.md
#
# This round looked for systems NOT already in /work/exp/systems_used_all.txt: E1 TTS, CosyVoice (1),
# FireRedTTS (1), MVoice (Make-A-Voice), SPEAR-TTS, NANSY and Lina-Speech.
# Every clip is a MACHINE output; the prompts / ground-truth recordings the demo pages put beside
# them, and every baseline system already measured (VALL-E(-X), VoiceCraft, YourTTS, PPG-VC, Voicebox,
# FlashSpeech, CLaM-TTS, NaturalSpeech 2/3, UniAudio, DiTTo-TTS, ARDiT, Parler-TTS mini, ...) or
# reserved/sealed (StyleTTS 2, MegaTTS 2, GenerSpeech and other FastSpeech-style systems), are NOT
# matched by any rule.
#
# SOURCES               : empty. The whole batch is measure-only by design (the brief: to measure a
#                         human-vs-machine judge on systems no head has seen), whatever the licence.
# MEASURE_ONLY_SOURCES  : every source; rows are written "measure-only (<licence>)".
#
# NOTES for the gatherer:
# * CAP_PER_SYSTEM = 14 per (family, system) per source: every rule set below matches at most 14
#   files per system and source, so the cap drops nothing.
# * No gatherer name "<owner>__<path>" collides with another batch's clip (checked against
#   /work/exp/wild/clips), and no path matches two rules.

SOURCES: list = []

# The 14 LibriSpeech test-clean items (speaker_chapter_...) of the E1 TTS page's "Prompted Generation"
# table taken for both of its systems (the first 14 of its 20 columns in sorted order).
_E1_ITEMS = ("1089_134686_000002_000001|1188_133604_000024_000000|1320_122612_000020_000001|"
             "1995_1837_000021_000002|2300_131720_000020_000008|237_126133_000029_000000|"
             "2830_3979_000018_000000|3570_5695_000004_000011|4077_13754_000017_000001|"
             "4446_2275_000030_000000|4970_29093_000049_000001|5105_28241_000021_000000|"
             "5683_32866_000028_000000|6829_68769_000091_000001")

MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ e1tts/e1tts.github.io (E1 TTS paper's online supplement)
    # LICENSE at this commit: CC0 1.0 Universal. index.html ("E1 TTS: Simple and Fast Non-Autoregressive
    # TTS", Liu, Wang, Zhu, Bi, Li; CUHK-Shenzhen / NetEase Fuxi; commit c1378ff "first commit",
    # 2024-09-16): table "Prompted Generation" (LibriSpeech test-clean, 3 s prompt), rows
    # "E1 TTS (DMD)" -> samples/prompt/e1tts/<item>.wav and "CosyVoice" -> samples/prompt/cosyvoice/<item>.wav.
    # Not matched: rows "Prompt" (prompt/prompt), "Ground Truth" (prompt/ground_truth), "StyleTTS 2"
    # (reserved), "ARDiT (B=1, DMD)" (ARDiT already measured), "Token Reconstruct (DMD)" (a resynthesis);
    # the inpainting, "Hard Samples" (robust/), celebrity (celeb/) and comparison (demo_compare/: CLaM-TTS,
    # FlashSpeech, NaturalSpeech 2/3, MegaTTS 2, UniAudio, VALL-E, Voicebox, DiTTo) tables.
    {"repo": "e1tts/e1tts.github.io", "commit": "c1378ffde3186dafcd7c00aaee19fd41d297d095",
     "licence": "CC0-1.0",
     "rules": [
         (rf"^samples/prompt/e1tts/(?=(?:{_E1_ITEMS})\.wav$)(\d+)_",
          "machine", "diffusion-tts", "E1-TTS-DMD", "libri-\\1"),
         (rf"^samples/prompt/cosyvoice/(?=(?:{_E1_ITEMS})\.wav$)(\d+)_",
          "machine", "ar-codec-lm", "CosyVoice", "libri-\\1"),
     ]},

    # ------------------------------------------------------------------ FireRedTeam/fireredteam.github.io (FireRed team's demo site)
    # No LICENSE file at this commit. demos/firered_tts/index.html ("FireRedTTS: A Foundation
    # Text-To-Speech Framework for Industry-Level Generative Speech Applications"; commit f054155
    # "update demo page", 2024-09-25), section "Human-Like Speech Generation": tables "Emotions"
    # (angry / happy / sad) and "Paralingustics" (word / char repetition, elongation, hissing, dental
    # click, breath, laugh, speak with a laugh, emphasis, filled pause, confirmation, realization,
    # surprise), column "Generated": audios/HumanLike_samples/<name>.wav, 16 files, Mandarin. The two
    # shortest (filled_pause 2.24 s, surprise 2.36 s) are left out to stay within 14.
    # Not matched: the zero-shot / few-shot cloning tables (prompts and people's recordings beside the
    # outputs), the prompt-denoising ablation and the streaming ablation (_gt are recordings).
    {"repo": "FireRedTeam/fireredteam.github.io", "commit": "f054155e2454a71a1c34ad474a69b4e984d868c2",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^demos/firered_tts/audios/HumanLike_samples/(?!filled_pause|surprise)(\w+)\.wav$",
          "machine", "conversational-neural-tts", "FireRedTTS", "firered-humanlike", {"lang": "zh"}),
     ]},

    # ------------------------------------------------------------------ Make-A-Voice/Make-A-Voice.github.io (MVoice / Make-A-Voice demo page)
    # No LICENSE file at this commit. index.html ("MVoice: Multilingual Unified Voice Generation With
    # Discrete Representation at Scale", anonymous authors; the paper was published as Make-A-Voice;
    # commit f761e17 "Add files via upload", 2023-10-08); helper.js fills each table from
    # data/<table>/<i><suffix> in column order:
    # - "Comparison with VALL-E" (i < 7; Text, Prompt, VALL-E, MVoice (ours)): data/valle/{0..6}_ours.wav;
    # - "Comparison with SPEAR-TTS" (i < 4; Text, Prompt, SPEAR-TTS, MVoice (ours)):
    #   data/speartts/{0..3}_ours.wav and the SPEAR-TTS column data/speartts/{0..3}_speartts.wav;
    # - "Text to Speech" (i < 8; Text, GT, GenerSpeech, YourTTS, MVoice (ours)): data/tts/{0,5,7}_ours.wav
    #   (the three longest; 7 + 4 + 3 = 14 MVoice files);
    # - "Voice Conversion" (i < 8; Source Audio, Prompt, NANSY, ppg-vc, MVoice (ours)):
    #   the NANSY column data/vc/{0..7}_nansy.wav.
    # Not matched: _gt, _prompt, _source (people); VALL-E, YourTTS, ppg-vc, Voicebox (already measured);
    # GenerSpeech (FastSpeech-style, sealed family); the singing, cross-lingual, ablation, style,
    # emotion and noise tables.
    {"repo": "Make-A-Voice/Make-A-Voice.github.io", "commit": "f761e1718d1eed6c87da16059196409dd6c82cec",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^data/valle/([0-6])_ours\.wav$",
          "machine", "ar-codec-lm", "MVoice (Make-A-Voice)", "mvoice-valle\\1"),
         (r"^data/speartts/([0-3])_ours\.wav$",
          "machine", "ar-codec-lm", "MVoice (Make-A-Voice)", "mvoice-spear\\1"),
         (r"^data/tts/([057])_ours\.wav$",
          "machine", "ar-codec-lm", "MVoice (Make-A-Voice)", "mvoice-tts\\1"),
         (r"^data/speartts/([0-3])_speartts\.wav$",
          "machine", "ar-codec-lm", "SPEAR-TTS", "spear\\1"),
         (r"^data/vc/([0-7])_nansy\.wav$",
          "machine", "voice-conversion", "NANSY", "nansy-vc\\1"),
     ]},

    # ------------------------------------------------------------------ theodorblackbird/theodorblackbird.github.io (Lina-Speech demo page)
    # No LICENSE file at this commit. src/blog/demo_lina.md ("Lina-Speech demo page", Lemerle,
    # Vanderbyl, Srivastav, Obin, Roebel; IRCAM; 2024-10-22; tip 7ecb3ed 2024-10-27), rendered from
    # src/_data/*_manifest.json:
    # - "Initial State Tuning Against Parler - Expresso Dataset", column "Lina-Speech (Initial State
    #   Tuning)": src/assets/demo_lina/expresso/<id>_lina.wav, 9 files (expressive styles: whisper,
    #   happy, confused, sad, enunciated, default, emphasis);
    # - "Initial State Tuning Against Parler - LibriTTS", same column: ltts_gpt/{1,3,5,22,31}_lina.wav
    #   (5 of 7, to stay within 14).
    # Not matched: *_example.wav / *_prompt.wav / *_target.wav / ist/*/original.wav (people); the Parler
    # Mini column (Parler-TTS mini, part of an earlier batch's Parler-TTS-mini-v1+Bark podcast); the
    # VoiceCraft, StyleTTS 2 and VALL-E X columns; the initial-state-tuning table (celebrity voices);
    # the older src/assets/demo_alpha page (an earlier 60M "Lina" prototype).
    {"repo": "theodorblackbird/theodorblackbird.github.io", "commit": "7ecb3edbf7c044bc19ace9d90fc555258984a8b4",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^src/assets/demo_lina/expresso/(\d+)_lina\.wav$",
          "machine", "ar-codec-lm", "Lina-Speech", "lina-expresso\\1"),
         (r"^src/assets/demo_lina/ltts_gpt/(1|3|5|22|31)_lina\.wav$",
          "machine", "ar-codec-lm", "Lina-Speech", "lina-libritts\\1"),
     ]},
]
