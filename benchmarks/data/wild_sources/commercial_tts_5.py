# Candidate labelled speech clips of COMMERCIAL neural TTS (round 5), from public GitHub
# repositories. Same conventions as conversational_tts_4.py: each regex is matched (re.search)
# against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: the
# shared gatherer's split drops a clip shorter than 1.25 x split_s whole, so clips over 16 s are cut
# by scripts/gather_wild_corpus_5.py's ``split_over_s`` instead (8 s pieces at pauses, at most 4).
# Evidence, licences, match counts, durations and doubts: see commercial_tts_5.md
#
# SOURCES               : the repo licence allows fitting a model (Apache-2.0 at the named commit), and
#                         the generating service's terms do not make the output non-commercial.
# MEASURE_ONLY_SOURCES  : no licence, "all rights reserved", or a generator whose free tier is
#                         non-commercial while the plan used is unknown (ElevenLabs, Cartesia). Use
#                         these only to MEASURE the judge, never to fit it.
#
# NOTE for the gatherer: in jberkovica/uol-fp the ElevenLabs files are named *.wav but hold MP3
# data. Decode by content (ffmpeg/ffprobe), not by extension.

SOURCES = []  # none (gatherer's decision, 2026-12-04; see the .md's last section): the one fit-OK
# candidate below was deleted upstream on request (one clip describes a family photo) and is two clips;
# it is kept here, commented out, as the record of what was found.
# SOURCES = [
#     # ------------------------------------------------------------------ GoogleCloudPlatform/generative-ai, Google Cloud TTS
#     # LICENSE at this commit: "Apache License Version 2.0, January 2004" (Google's own repository).
#     # gemini/sample-apps/image-bash-jam: gemini-generic.sh with GENERATE_MP3=true pipes Gemini's
#     # answer into tts.sh, which POSTs to https://texttospeech.googleapis.com/v1/text:synthesize with
#     # {'languageCode': 'en-US', 'ssmlGender': 'FEMALE'} and no voice name; the result is copied to
#     # "$IMAGE".mp3. The README says: "it also creates an MP3 of the answer ...
#     # images/ricc-family-with-santa.jpg.mp3". The exact voice (Standard/WaveNet/Neural2) is the API's
#     # default for en-US FEMALE; not named in the repo.
#     # italian-town.jpg.mp3 is Italian (TTS_LANG='it-IT') -> not listed.
#     # The files were deleted in the next commit, cbf64be ("Removing images as asked by Lavi/Holt").
#     {"repo": "GoogleCloudPlatform/generative-ai", "commit": "d92d7fb05e8be1ed97c744588f8541e8cea668bc",
#      "licence": "Apache-2.0",
#      "rules": [
#          (r"^gemini/sample-apps/image-bash-jam/images/(ricc-family-with-santa\.jpg|ricc-logo\.png)\.mp3$",
#           "machine", "commercial-neural-tts", "Google-Cloud-TTS", "google-cloud-tts-en-US-female-default"),
#      ]},
# ]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ map9959/ai-tts-benchmark, ElevenLabs
    # LICENSE at this commit: "MIT License / Copyright (c) 2024 Michael Paciullo". benchmark.py at
    # this commit calls client.text_to_speech.convert_as_stream(voice_id=..., output_format="pcm_16000")
    # for voices David/ELdoron/Rachel/Drew and writes "elevenlabs-{voice}-{filetag}". The intro text is
    # "Hello, my name is Jane Smith! I'm an AI agent and assistant. How can I help you today?"; the id
    # text spells a random 12-character ID in the NATO alphabet. ElevenLabs plan unknown -> measure only.
    # The Cartesia and Rime files of the same commit are NOT listed: they were requested at 8 kHz
    # and wrapped as 16 kHz (convert_pcm_to_mp3 default sample_rate=16000), so they play at double
    # speed, an octave up (median F0 327 Hz and 485 Hz).
    {"repo": "map9959/ai-tts-benchmark", "commit": "940b36aad7c9c41ab98096635a63d6b272e5c5bd",
     "licence": "MIT",
     "rules": [
         (r"^elevenlabs-(David|Drew|ELdoron|Rachel)-intro\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs", "elevenlabs-\\1"),
         (r"^elevenlabs-(David|Drew|ELdoron|Rachel)-id\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs", "elevenlabs-\\1"),
     ]},

    # ------------------------------------------------------------------ jberkovica/uol-fp, OpenAI tts-1 / Google Neural2 / ElevenLabs flash v2.5
    # README at this commit, "## License": "This project is proprietary academic work ... All rights
    # reserved." -> measure only. models_analysis/scripts/03_tts_collect.py: OpenAI model 'tts-1',
    # voices alloy echo fable onyx nova shimmer (response_format="wav"); Google 'Neural2' via
    # texttospeech.googleapis.com; ElevenLabs 'eleven_flash_v2_5' (per the results CSV). The same two
    # English children's stories (644a16a4, fca6a068) are read by every voice. 36-101 s each.
    {"repo": "jberkovica/uol-fp", "commit": "d7207dcb2396d006e1dad20ef08da53942de1607",
     "licence": "NOASSERTION (README: all rights reserved)",
     "rules": [
         (r"^models_analysis/results/tts/audio_files/story_[0-9a-f]{8}_openai_(alloy|echo|fable|nova|onyx|shimmer)\.wav$",
          "machine", "commercial-neural-tts", "OpenAI-tts-1", "openai-\\1"),
         (r"^models_analysis/results/tts/audio_files/story_[0-9a-f]{8}_google_(en-(?:US|GB|AU)-Neural2-[A-J])\.wav$",
          "machine", "commercial-neural-tts", "Google-Neural2", "google-\\1"),
         (r"^models_analysis/results/tts/audio_files/story_[0-9a-f]{8}_elevenlabs_([A-Za-z0-9]{20})\.wav$",
          "machine", "commercial-neural-tts", "ElevenLabs-flash-v2.5", "elevenlabs-\\1"),
     ]},

    # ------------------------------------------------------------------ Adya662/SSML, Amazon Polly neural / generative / long-form
    # No licence file, no licence text in README -> measure only. README: "This folder contains
    # generated audio samples from **Amazon Polly** using different voices, engines, and input styles
    # (plain text vs SSML)"; grid/<engine>/<Voice>/{text,ssml}_<Voice>_<engine>.mp3 (generate.py,
    # GRID_LANGUAGE_CODE = "en-US"). 94-129 s narrations each (the same long text for every voice).
    # out/baseline/*_Joanna_neural.mp3 has the same durations as grid/neural/Joanna -> not listed.
    {"repo": "Adya662/SSML", "commit": "354bd43af372289d9b987c6f65070cf514ee6fc4",
     "licence": "NOASSERTION",
     "rules": [
         (r"^out/grid/neural/([A-Z][a-z]+)/(?:text|ssml)_\1_neural\.mp3$",
          "machine", "commercial-neural-tts", "Polly-neural", "polly-\\1"),
         (r"^out/grid/generative/([A-Z][a-z]+)/text_\1_generative\.mp3$",
          "machine", "commercial-neural-tts", "Polly-generative", "polly-\\1"),
         (r"^out/grid/long-form/([A-Z][a-z]+)/text_\1_long-form\.mp3$",
          "machine", "commercial-neural-tts", "Polly-long-form", "polly-\\1"),
     ]},

    # ------------------------------------------------------------------ meril/tts-eval, Cartesia Sonic-3 vs ElevenLabs flash v2.5
    # README: "## License / MIT" (no LICENSE file). config.yaml: cartesia model_id "sonic-3", en voice
    # 9626c31c-bec5-4cca-baa8-f8ba9e84c8bc; elevenlabs model_id "eleven_flash_v2_5", voice
    # EXAVITQu4vr4xnSDxMaL (Sarah). Cartesia's free plan is personal use only and ElevenLabs' free tier
    # is non-commercial; the plans used are unknown -> measure only. Only E* test ids (English,
    # test_cases/english.json) are listed. vercel-site/outputs/ holds the same blobs -> not listed.
    {"repo": "meril/tts-eval", "commit": "83b6972c27c1c640ba591c9dc5c04f5b801cdf2a",
     "licence": "MIT (README only)",
     "rules": [
         (r"^outputs/cartesia/cartesia_(E\d-[A-Z]+\d)\.mp3$",
          "machine", "commercial-neural-tts", "Cartesia-Sonic-3", "cartesia-9626c31c"),
         (r"^outputs/elevenlabs/elevenlabs_(E\d-[A-Z]+\d)\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-flash-v2.5", "elevenlabs-sarah"),
     ]},

    # ------------------------------------------------------------------ louieseno/open-ai-fm-script, OpenAI gpt-4o-mini-tts
    # No LICENSE file; package.json has "license": "ISC" (npm init's default). Measure only unless
    # the user accepts that field as a licence (ISC is permissive and OpenAI's terms give the output
    # to the user). src/main.ts: model: 'gpt-4o-mini-tts', input: sampleText, instructions:
    # description; output to assets/voices/<voice>.mp3. Conversational one-liners, e.g. "Hey friend!
    # I'm Alloy, and I'm here to make learning fun and easy to understand!"
    {"repo": "louieseno/open-ai-fm-script", "commit": "86fadc0f2273051aeea0ab697bdfcee4662fbf47",
     "licence": "NOASSERTION (package.json: ISC)",
     "rules": [
         (r"^assets/voices/(alloy|ash|ballad|coral|echo|fable|nova|sage|shimmer|verse)\.mp3$",
          "machine", "commercial-neural-tts", "OpenAI-gpt-4o-mini-tts", "openai-\\1"),
     ]},

    # ------------------------------------------------------------------ JacobStephens2/lector, OpenAI voices
    # No licence. README: "`openai` (default) - the hosted `gpt-4o-mini-tts`"; app.py OPENAI_MODEL =
    # "gpt-4o-mini-tts"; /sample/<voice> serves samples/<voice>.mp3. No script for these 7 files in the repo
    # (kokoro/generate_samples.py makes only the Kokoro ones, which are not listed).
    {"repo": "JacobStephens2/lector", "commit": "6ecabeb8d2f893b0fe9dd7f28207e1a54f735adc",
     "licence": "NOASSERTION",
     "rules": [
         (r"^samples/(alloy|echo|fable|nova|onyx|sage|shimmer)\.mp3$",
          "machine", "commercial-neural-tts", "OpenAI-gpt-4o-mini-tts", "openai-lector-\\1"),
     ]},

    # ------------------------------------------------------------------ JiachengPang/speech_tts, OpenAI gpt-4o-mini-tts (styled) + ElevenLabs
    # No licence. generation/tts_generation.py: query_openai(style, script, ..., model='gpt-4o-mini-tts',
    # voice=...); tts_log.jsonl gives voice per clip (alloy, ash, ballad, nova, ...). Style prompts
    # deliberately contradict the script (e.g. whisper style on "I'm literally screaming").
    # 11labs_generation.py: model_id="eleven_multilingual_v2". The audio was deleted later (155ce77).
    {"repo": "JiachengPang/speech_tts", "commit": "26e0b15f425adf256e38401cfde9c1917e54e5a8",
     "licence": "NOASSERTION",
     "rules": [
         (r"^hallucinated_sample_generation/samples/openai_([a-z]+)_\d+\.wav$",
          "machine", "commercial-neural-tts", "OpenAI-gpt-4o-mini-tts-styled", "openai-mixed-\\1"),
         (r"^hallucinated_sample_generation/samples/11labs_([a-z]+)_\d+\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-multilingual-v2", "elevenlabs-\\1"),
     ]},

    # ------------------------------------------------------------------ ttschoice/ttschoice.github.io (CHI 2020), SAME PASSAGE by TTS and by humans
    # No licence. index.md: "a large-scale evaluation of 21 voices (18 TTS, 3 human) ... Here are brief
    # clips of each of those voices reading the first two sentences of the article: 'Bill Rielly had it
    # all: ...'". Table: Google A/C "WaveNet"; Polly Joanna/Matthew/Sally synthesis model "_TBD_";
    # Voicery Nichole "_TBD_". The 3 human reads of the same text are listed as human (a matched pair).
    # OS voices (Windows, iOS, macOS, Android) and Mozilla-TTS voices are not listed (not commercial cloud TTS).
    {"repo": "ttschoice/ttschoice.github.io", "commit": "cad7e29336da1590632c7aef5d9eac2176aebc4a",
     "licence": "NOASSERTION",
     "rules": [
         (r"^voice_clips/Google (A|C)\.wav$",
          "machine", "commercial-neural-tts", "Google-WaveNet", "google-wavenet-\\1"),
         (r"^voice_clips/Polly(Joana|Matthew|Sally)\.wav$",
          "machine", "commercial-neural-tts", "Polly-2019-engine-unknown", "polly-\\1"),
         (r"^voice_clips/VoiceryNichole\.wav$",
          "machine", "commercial-neural-tts", "Voicery", "voicery-nichole"),
         (r"^voice_clips/Human([123])\.wav$",
          "human", "human-read-speech", "ttschoice-human", "ttschoice-human-\\1"),
     ]},
]
