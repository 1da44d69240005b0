# Candidate labelled speech clips of CONVERSATIONAL / podcast-style machine speech (round 4),
# from public GitHub repositories. Same conventions as conversational_tts.py:
# each regex is matched (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]); options: long dialogues
# are cut into 8 s pieces at pauses, up to max_segments.
# Evidence, licences, match counts, durations and doubts: see conversational_tts_4.md
#
# SOURCES               : repo licence allows fitting a model (MIT at the named commit) and the
#                         generating system is not under a non-commercial licence.
# MEASURE_ONLY_SOURCES  : no licence, copyleft licence, or generator terms that may be
#                         non-commercial; use only to MEASURE the judge, never to fit it.

SOURCES = [
    # ------------------------------------------------------------------ Podcast Generator (laurentftech), Google Gemini TTS
    # LICENSE at this commit: "MIT License / Copyright (c) 2025 Laurent FRANCOISE".
    # README: "generate multi-speaker podcasts from any script. It uses high-quality voices from
    # the **ElevenLabs** and **Google Gemini** APIs". The file names give the provider:
    # samples/sample2-gemini.mp3 (78.5 s two-speaker "Who am I?" dialogue, samples/script2.txt)
    # and samples/sample1.mp3 (28 s, commit b7340b6 "Sample1 / Script1 Elizabeth II", made when the
    # app supported ONLY the Gemini API: README at b7340b6 "using the Google Gemini text-to-speech API").
    # samples/gemini_voices/*.mp3: made by generate_gemini_samples.sh, "Script to generate voice
    # samples for all available Gemini voices", text "Hello, my name is %s. You can use my voice for
    # your podcast." (30 voices, 5.1-8.0 s each; English).
    # Gemini TTS is a commercial API (no weights licence; Google's Gemini API terms do not claim
    # ownership of generated output) -> family commercial-neural-tts for the short voice cards and (changed by
    # the gatherer's user, see the rule below and the .md's last section) for the multi-speaker podcasts too.
    # docs/sample2-gemini.mp3 and docs/assets/sample2-gemini.mp3 are the same blob as
    # samples/sample2-gemini.mp3 -> not listed. sample2-elevenlabs.mp3 -> MEASURE_ONLY (see below).
    {"repo": "laurentftech/Podcast_generator", "commit": "77761935d8439c80c2163dac738b74a306f9b528",
     "licence": "MIT",
     "rules": [
         (r"^samples/(sample1|sample2)(?:-gemini)?\.mp3$",
          # family commercial-neural-tts, like the voice cards (not conversational-neural-tts): one system in
          # two families would sit on both sides of a leave-one-family-out fold (gatherer's user, 2026-12-04)
          # system "Gemini-TTS-podcast" apart from the voice cards' "Gemini-TTS" (as podcastfy's two hosts are two
          # systems), so the per-system cap of 14 files does not let the 30 cards crowd out the two dialogues
          "machine", "commercial-neural-tts", "Gemini-TTS-podcast", "gemini-podcast-\\1", {"split_s": 8, "max_segments": 12}),
         (r"^samples/gemini_voices/([A-Z][a-z]+)\.mp3$",
          "machine", "commercial-neural-tts", "Gemini-TTS", "gemini-\\1"),
     ]},
]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ Podcast Generator (laurentftech), ElevenLabs
    # Same repo and commit (MIT). samples/sample2-elevenlabs.mp3 = the same script2 dialogue voiced
    # with the ElevenLabs API (65.7 s). ElevenLabs' terms give commercial rights only on paid plans
    # (free tier: non-commercial, attribution); the plan used is unknown -> measure only.
    {"repo": "laurentftech/Podcast_generator", "commit": "77761935d8439c80c2163dac738b74a306f9b528",
     "licence": "MIT",
     "rules": [
         (r"^samples/sample2-elevenlabs\.mp3$",
          "machine", "conversational-neural-tts", "ElevenLabs", "elevenlabs-podcast-sample2", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ orpheus-podcast (SebastianBoehler), Orpheus TTS podcast generator
    # NO licence file in any branch (README only: "You must respect and comply with the license terms
    # ... provided by Canopy Labs for the Orpheus models"). README: "leverages Canopy AI's Orpheus TTS
    # model to generate high-quality, multi-speaker podcasts", demo page links these examples.
    # english.wav (72.8 s) only; german.wav is German -> not listed.
    {"repo": "SebastianBoehler/orpheus-podcast", "commit": "28bdb7f1c0bd0cdb404971b472b9f965e232851d",
     "licence": "NOASSERTION",
     "rules": [
         (r"^examples/english\.wav$",
          "machine", "conversational-neural-tts", "Orpheus-TTS", "orpheus-podcast-en", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ audiobook-creator (prakharsr), Orpheus TTS multi-voice audiobook
    # LICENSE: "GNU GENERAL PUBLIC LICENSE Version 3" (copyleft) -> measure only.
    # README: "sample_orpheus_multi_voice_audiobook.m4b: The generated sample multi-voice audiobook in
    # M4B format ... with added emotion tags, generated using Orpheus TTS." (235 s, AAC 24 kHz).
    # The .mp3 twin's blob is absent from the snapshot; the Kokoro files are sealed -> not listed.
    {"repo": "prakharsr/audiobook-creator", "commit": "94a353f9aad97b46d6b6ccf1be4af8b6ff6df90c",
     "licence": "GPL-3.0",
     "rules": [
         (r"^sample_book_and_audio/sample_orpheus_multi_voice_audiobook\.m4b$",
          "machine", "ar-codec-lm", "Orpheus-TTS", "orpheus-audiobook-multivoice", {"split_s": 8, "max_segments": 12}),
     ]},
]
