# Candidate labelled speech clips of CONVERSATIONAL / spontaneous-style / dialogue / podcast
# neural TTS (the kind the read-style training corpus lacks), from public GitHub repositories.
# Each regex is matched (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]); options (added by the gatherer's
# user, not the search): the long dialogues are cut into 8 s pieces at pauses, up to max_segments
# Evidence, licences, match counts and doubts: see conversational_tts.md
#
# SOURCES               : licence allows fitting a model (MIT / Apache-2.0 at the named commit).
# MEASURE_ONLY_SOURCES  : no licence, non-commercial licence, or a redistribution ban; use only
#                         to MEASURE the judge, never to fit it.

SOURCES = [
    # ------------------------------------------------------------------ Match-TTSG (KTH), demo page on the `docs` branch
    # Joint speech+gesture synthesis trained on the Trinity Speech-Gesture Dataset (TSGD): one
    # male speaker talking SPONTANEOUSLY (fillers, hesitations) -> spontaneous-style neural TTS.
    # Licence: LICENSE on the default branch (main 1dd5eee...) = "MIT License, Copyright (c) 2023
    # Shivam Mehta"; the docs branch (GitHub Pages of the same repo) carries no own licence file.
    # Page labels: MA-50/MA-500 = Match-TTSG (flow matching, 50/500 ODE solver steps),
    # SM-50/SM-500 = the page's "SM" condition (a second flow-matching variant from the paper),
    # DIFF = Diff-TTSG baseline (diffusion), NAT = natural recording (TSGD, licence unclear -> not listed).
    {"repo": "shivammehta25/Match-TTSG", "commit": "b46f0a875c2f2ab8940594df220a5c1f911e0ef7",
     "licence": "MIT",
     "rules": [
         (r"^stimuli/audio-only/MAT_(50|500)_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "Match-TTSG", "tsgd-male"),
         (r"^stimuli/audio-only/SM_(50|500)_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "Match-TTSG-SM", "tsgd-male"),
         (r"^stimuli/audio-only/DIFF_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "Diff-TTSG", "tsgd-male"),
         (r"^stimuli/long-sentences/MA-50-\d\.wav$",
          "machine", "conversational-neural-tts", "Match-TTSG", "tsgd-male"),
         (r"^stimuli/long-sentences/SM-50-\d\.wav$",
          "machine", "conversational-neural-tts", "Match-TTSG-SM", "tsgd-male"),
     ]},

    # ------------------------------------------------------------------ MOSS-TTSD v0 (OpenMOSS), text-to-spoken-DIALOGUE
    # Two-speaker dialogue/podcast generation. Demo audio existed only up to this commit (removed
    # before LICENSE was committed on the same day, 417aeb0); at this commit README.md carries the
    # badge "License-Apache 2.0" linking to the repo, and the repo LICENSE (added hours later) is
    # Apache-2.0. README table "MOSS-TTSD-v0" column lists each file. Only the English rows:
    # "Asteroid TTS Talk" (demo3) and voice clones "Elon Musk and Jensen Huang" (voiceclone4),
    # "Trump and Obama" (voiceclone5). Prompts (real people) and MoonCast outputs are NOT listed here.
    {"repo": "OpenMOSS/MOSS-TTSD", "commit": "ca3df27dda036e059f854f5c0251c87b4cc4f66e",
     "licence": "Apache-2.0",
     "rules": [
         (r"^asset/demo_audio/demo3_mossttsd\.mp3$",
          "machine", "conversational-neural-tts", "MOSS-TTSD-v0", "moss-en-dialogue-asteroid", {"split_s": 8, "max_segments": 12}),
         (r"^asset/demo_audio/voiceclone4_mossttsd\.mp3$",
          "machine", "conversational-neural-tts", "MOSS-TTSD-v0", "moss-clone-musk-huang", {"split_s": 8, "max_segments": 12}),
         (r"^asset/demo_audio/voiceclone5_mossttsd\.mp3$",
          "machine", "conversational-neural-tts", "MOSS-TTSD-v0", "moss-clone-trump-obama", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ podcast_tts (puntorigen), ChatTTS podcast generator
    # MEASURE ONLY since 2026-12-04 (scripts/gather_wild_corpus_3.py MEASURE_ONLY: CC-BY-NC-4.0 engine weights).
    # LICENSE: "MIT License, Copyright (c) 2024 Pablo Schaffner". Files are outputs of
    # examples/example.py (example-dialog.mp3, no music), example2.py (example-podcast.mp3) and
    # example3.py (example-podcast3.mp3); all use PodcastTTS(speed=5) whose default engine is
    # "chattts" (podcast_tts/core.py). The two *podcast* files have a music bed ducked under speech.
    {"repo": "puntorigen/podcast_tts", "commit": "d0b3e0da77932c68a5b887fcc271766ef3ac2366",
     "licence": "MIT",
     "rules": [
         (r"^example-(dialog|podcast|podcast3)\.mp3$",
          "machine", "conversational-neural-tts", "ChatTTS", "chattts-\\1", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ Muyan-TTS (MYZY-AI), podcast TTS
    # "Muyan-TTS is a trainable TTS model designed for podcast applications ... pre-trained on over
    # 100,000 hours of podcast audio" (README at this commit, section "## Demo" embeds demo1-3);
    # "Muyan-TTS only supports English input" (README at HEAD). LICENSE at this commit: Apache-2.0.
    # Demo files were removed two days later (d3619d1 "remove demo assets").
    {"repo": "MYZY-AI/Muyan-TTS", "commit": "c4e396341cd77fcbe938e3e9f703a4a97df46bbd",
     "licence": "Apache-2.0",
     "rules": [
         (r"^assets/demo([123])\.wav$",
          "machine", "conversational-neural-tts", "Muyan-TTS", "muyan-demo\\1"),
     ]},

    # ------------------------------------------------------------------ NotebookLlama (meta-llama/llama-recipes, now llama-cookbook)
    # README: "[Listen to audio from the example here](./resources/_podcast.mp3)" and "Step 4:
    # Text-To-Speech Workflow: Use parler-tts/parler-tts-mini-v1 and bark/suno to generate a
    # conversational podcast". Root LICENSE at this commit: "MIT License, Copyright (c) Meta Platforms".
    {"repo": "meta-llama/llama-recipes", "commit": "faae2fd877995430906e1d0904131ecdaa89a604",
     "licence": "MIT",
     "rules": [
         (r"^end-to-end-use-cases/NotebookLlama/resources/_podcast\.mp3$",
          "machine", "conversational-neural-tts", "Parler-TTS-mini-v1+Bark", "notebookllama-podcast", {"split_s": 8, "max_segments": 12}),
     ]},
    # ------------------------------------------------------------------ SoulX-Podcast (Soul AI Lab), demo page repo
    # soulx-podcast/LICENSE in this repo = Apache License 2.0 (the demo page's own folder).
    # Page section "Multi-Speaker Podcast Generation", column "SoulX-Podcast Generated Audio":
    # raw/samples/podcast_en1.wav and podcast_en2.wav are the two English two-speaker podcasts.
    # Their prompts raw/prompt/en_*_prompt_spk*.wav are real podcast speech of unknown licence -> not listed;
    # all other samples are Mandarin / Chinese dialects -> not listed.
    {"repo": "Soul-AILab/Soul-AILab.github.io", "commit": "3906055bb53204874db391ef511baffb918e64ab",
     "licence": "Apache-2.0",
     "rules": [
         (r"^soulx-podcast/raw/samples/podcast_(en[12])\.wav$",
          "machine", "conversational-neural-tts", "SoulX-Podcast", "soulx-podcast-\\1", {"split_s": 8, "max_segments": 12}),
     ]},
]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ "Bark Infinity" prompts (Jonathan Fly), PR #125 to suno-ai/bark
    # LICENSE at this commit: "Attribution-NonCommercial 4.0 International" (Bark was CC-BY-NC
    # until May 2023) -> measure only. README: "Every audio clip saves a speaker.npz file with the
    # voice ... (named the same as the .wav file)" -> each prompts/*.wav is a Bark generation.
    # Only English speech clips whose blobs are present in the snapshot; music/singing excluded,
    # english_clear1.wav excluded (same blob as en_speaker_11.wav).
    {"repo": "suno-ai/bark", "commit": "2fda7de9a0ee439e8c5a0e78c1bc1b20ba54bb2b",
     "licence": "CC-BY-NC-4.0",
     "rules": [
         (r"^bark/assets/prompts/(cartoon_extreme|classic_robot_tts|cool_duo|en_british|en_deadpan"
          r"|en_female_intense|en_female_performing_play_awesome_but_noisy|en_female_professional_reader"
          r"|en_female_slow_talker|en_german_professor|en_interesting_tone|en_male_nervous_subdued"
          r"|en_male_professional_reader\.|en_man_giving_ted_talk|en_narrator_deep_but_distortion"
          r"|en_narrator_light_bg|en_old_movie_actor|en_public_speaker|en_quiet_intense"
          r"|en_sharp_tone_but_noisy|en_speaker_11|en_tv_commercial|snarky_but_noisy"
          r"|snarky_narrator_but_noisy|timid_jane)\.wav$",
          "machine", "conversational-neural-tts", "Bark", "bark-\\1"),
     ]},

    # ------------------------------------------------------------------ Conversational TTS with multi-scale relational graphs (THU-HCSI, MM2022), gh-pages
    # No licence file in any branch. FastSpeech 2 trained on DailyTalk; 4 systems per utterance.
    # The "-0-context.wav" files are DailyTalk recordings (human, CC-BY-SA-4.0).
    {"repo": "thuhcsi/mm2022-conversational-tts", "commit": "293bb2628a493fe171df90a8abfff1a31ffe729a",
     "licence": "NOASSERTION",
     "rules": [
         # only the four generated clips that last >= 2 s (the other 20 are 0.6-1.9 s)
         (r"^static/78-3-63-(B)-1-vanilla\.wav$",
          "machine", "conversational-neural-tts", "FastSpeech2-DailyTalk", "dailytalk-\\1"),
         (r"^static/78-3-63-(B)-3-dialoguegcn\.wav$",
          "machine", "conversational-neural-tts", "FastSpeech2-DailyTalk-DialogueGCN", "dailytalk-\\1"),
         (r"^static/(?:76-0-14|78-3-63)-(B)-4-proposed\.wav$",
          "machine", "conversational-neural-tts", "MSRGCN-CTTS", "dailytalk-\\1"),
         (r"^static/\d+-\d+-\d+-[A-Z]-0-context\.wav$",
          "human", "human-conversational", "DailyTalk-context", "dailytalk-dialogue"),
     ]},

    # ------------------------------------------------------------------ Diff-TTSG (KTH), demo page on the `docs` branch
    # No licence file at repo root in any commit (only vendored hifigan/ and text/ MIT files).
    {"repo": "shivammehta25/Diff-TTSG", "commit": "da94d86125af66f6de5dd16e9a34d5a7d4f660ab",
     "licence": "NOASSERTION",
     "rules": [
         (r"^stimuli/audio-only/TTSG_\d_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "Diff-TTSG", "tsgd-male"),
         (r"^stimuli/audio-only/Grad-TTS_\d_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "Grad-TTS-TSGD", "tsgd-male"),
         (r"^stimuli/audio-only/ISG_\d_C\d_\d_eval_\d+\.wav$",
          "machine", "conversational-neural-tts", "ISG-Tacotron2-TSGD", "tsgd-male"),
         (r"^stimuli/audio-only/GT_\d_C\d_\d_eval_\d+\.wav$",
          "human", "human-spontaneous", "TSGD-GT", "tsgd-male"),
     ]},

    # ------------------------------------------------------------------ "Probabilistic duration model ... spontaneous speech" (anonymous Interspeech demo)
    # No licence. Stimuli of FS2 / VITS / Matcha-TTS, each with deterministic (DET) and
    # flow-matching (FM) durations, on LJ Speech, RyanSpeech (read) and TSGD2, AptSpeech (spontaneous).
    {"repo": "doubleblindinterspeech/prob_dur", "commit": "4ccc61354d7c7cd12f9e61805d0e0aad2c6a3a10",
     "licence": "NOASSERTION",
     "rules": [
         (r"^stimuli/FS2/(TSGD2|AptS)/(DET|FM)_\d+\.wav$",
          "machine", "conversational-neural-tts", "FS2-probdur", "\\1"),
         (r"^stimuli/VITS/(TSGD2|AptS)/(DET|FM)_\d+\.wav$",
          "machine", "conversational-neural-tts", "VITS-probdur", "\\1"),
         (r"^stimuli/Matcha/(TSGD2|AptS)/(DET|FM)_\d+\.wav$",
          "machine", "conversational-neural-tts", "Matcha-probdur", "\\1"),
         (r"^stimuli/Matcha/(LJ|RS)/(DET|FM)_\d+\.wav$",
          "machine", "flow-matching", "Matcha-probdur", "\\1"),
         (r"^stimuli/VITS/(LJ|RS)/(DET|FM)_\d+\.wav$",
          "machine", "gan-e2e-vits", "VITS-probdur", "\\1"),
         (r"^stimuli/FS2/(LJ|RS)/(DET|FM)_\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "FS2-probdur", "\\1"),
     ]},

]
