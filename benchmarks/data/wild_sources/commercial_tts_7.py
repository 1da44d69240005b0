# Candidate labelled speech clips of COMMERCIAL neural TTS (round 7), from public GitHub
# repositories. Same conventions as commercial_tts_5.py / commercial_tts_6.py: each regex is matched
# (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: clips
# over 16 s are cut by the gatherer's ``split_over_s`` (8 s pieces at pauses, at most 4).
# Evidence, licences, match counts, durations and doubts: see commercial_tts_7.md
#
# SOURCES               : the LICENSE file at the named commit is MIT, MIT-0, Apache-2.0 or BSD-3-Clause,
#                         the repo's own code/commit names the engine (and the voice), and the generating
#                         service (Amazon Polly, OpenAI TTS, IBM Watson TTS) does not make output
#                         non-commercial.
# MEASURE_ONLY_SOURCES  : good audio of a commercial engine, but no LICENSE file in the repository.
#
# NOTES for the gatherer:
# * "MIT-0" (aws-samples/amazon-polly-reads-the-page) is NOT in judge_lofo.FIT_OK as that set stands
#   today ({"CC0-1.0", "MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "CC-BY-4.0",
#   "public-domain"}); the brief said MIT-0 is now accepted, so FIT_OK needs "MIT-0" added, or these
#   two clips are silently measure-only.
# * CAP_PER_SYSTEM = 14 per (family, system) per source: DeepVista-AI/claude-vibes matches 25 files and
#   ayutaz/CosyVoice 18, so in sorted path order the gatherer would keep only sounds/done/* (14 of 15)
#   and drop en_male_fable_technical + all 3 en_male_onyx_* respectively, unless the cap is raised for
#   these sources (the clips are short: 0.9-2.9 s and 6-8 s).
# * No two matched files share a basename within one repository (gemini-hlsw/observe has two entries at
#   two commits; their paths and basenames differ), so gatherer names "<owner>__<path>" never collide.

SOURCES = [
    # ------------------------------------------------------------------ aws-samples/amazon-polly-reads-the-page, Amazon Polly NEURAL (Joanna, Matthew)
    # LICENSE at this commit: "Copyright Amazon.com, Inc. or its affiliates. All Rights Reserved. /
    # Permission is hereby granted, free of charge, ... to deal in the Software without restriction" with
    # no attribution clause = MIT-0 (README "## License": "This library is licensed under the MIT-0
    # License. See the LICENSE file."; pregen scripts carry "SPDX-License-Identifier: MIT-0").
    # Engine: pregen/run_polly.sh: `aws polly start-speech-synthesis-task --engine neural --language-code
    # $LANG --output-format mp3 ... --text-type ssml --voice-id $VOICE`; pregen/example/gen_default.sh and
    # gen_custom.sh: `./run_polly.sh example/tmp.ssml en-US Joanna ../web/polly/PRTPStaticDefault compass`
    # (and Matthew; and ../web/polly/PRTPStaticCustom). The SSML is the text of web/PRTPStatic*.html
    # ("PollyReadsThePage Normal Test Page. PollyReadsThePage is a test page for audio readout with
    # highlights. ..." then short articles). Only one file per basename is listed (Joanna.mp3 and
    # Matthew.mp3 exist under three page variants): Default/Joanna and Custom/Matthew.
    {"repo": "aws-samples/amazon-polly-reads-the-page", "commit": "c13301c2a72805fac8cc47afdf32dec3a8905770",
     "licence": "MIT-0",
     "rules": [
         (r"^web/polly/PRTPStaticDefault/en-US/(Joanna)\.mp3$",
          "machine", "commercial-neural-tts", "Amazon-Polly-neural", "polly-\\1-neural"),
         (r"^web/polly/PRTPStaticCustom/en-US/(Matthew)\.mp3$",
          "machine", "commercial-neural-tts", "Amazon-Polly-neural", "polly-\\1-neural"),
     ]},

    # ------------------------------------------------------------------ gemini-hlsw/observe, Amazon Polly GENERATIVE (Ruth)
    # LICENSE at this commit: "Copyright (c) 1998-2018 Association of Universities for Research in
    # Astronomy, Inc. (AURA) / All rights reserved. ... Redistribution and use in source and binary forms,
    # with or without modification, are permitted provided that ... 1) ... 2) ... 3) The names of AURA ...
    # may not be used to endorse or promote products ..." = the BSD-3-Clause text (every source header:
    # "For license information see LICENSE or https://opensource.org/licenses/BSD-3-Clause").
    # Engine: modules/web/client/src/main/scala/observe/ui/utils/Audio.scala: "// Speech files were
    # generated with Amazon Polly. Settings: Generative, Ruth", followed by @JSImport of
    # "@resources/sounds/soundactivated.mp3", "sequencepaused.mp3", "acquisitionprompt.mp3",
    # "sequencecomplete.mp3", "sequenceerror.mp3" (beep-22.mp3 is a 0.2 s beep, not listed; the .webm files
    # are the same sounds re-encoded, not listed). Short UI announcements (1.3-3.2 s).
    {"repo": "gemini-hlsw/observe", "commit": "184f54a68371b35fd4c352fa3d9aad8ea6fa70b4",
     "licence": "BSD-3-Clause",
     "rules": [
         (r"^modules/web/client/src/main/resources/sounds/(acquisitionprompt|sequencecomplete|sequenceerror|sequencepaused|soundactivated)\.mp3$",
          "machine", "commercial-neural-tts", "Amazon-Polly-generative", "polly-Ruth-generative"),
     ]},
    # Same repo, the commit that added the sounds ("audible alerts", Raul Piaggio, 2025-04-19): Audio.scala
    # there has the same Polly comment and `case BreakpointReached extends Audio(BreakpointReachedMp3, ...)`;
    # breakpointreached.mp3 was deleted in 5494170 ("allow deactivating sound, breakpoint as pause").
    # LICENSE at this commit: same AURA BSD-3-Clause text.
    {"repo": "gemini-hlsw/observe", "commit": "f39e5fc599bf9527068937162159f0985938b45c",
     "licence": "BSD-3-Clause",
     "rules": [
         (r"^modules/web/client/src/main/resources/sounds/breakpointreached\.mp3$",
          "machine", "commercial-neural-tts", "Amazon-Polly-generative", "polly-Ruth-generative"),
     ]},

    # ------------------------------------------------------------------ DeepVista-AI/claude-vibes, OpenAI tts-1 (fable)
    # LICENSE at this commit: "MIT License / Copyright (c) 2026 DeepVista AI".
    # Engine: scripts/generate-sounds.sh: "# Generate all sound effects using OpenAI TTS ... # Default: fable
    # (British male)"; VOICE="${1:-fable}"; OpenAI().audio.speech.create(model='tts-1', voice='$VOICE',
    # input=...).write_to_file('$path') with `generate done done_boss "All done, boss."` ... `generate error
    # error_not_ideal "Not ideal. We hit a snag."` (26 phrases). README "## Sound credits": "Pre-generated
    # with OpenAI TTS (fable voice). Sounds are included in the repo". The sounds were added once, in the
    # initial commit 281c33c, and never regenerated. done_boom.mp3 (0.50 s) is excluded (< 0.8 s).
    # Voice-assistant-style one-liners, 0.86-2.88 s.
    {"repo": "DeepVista-AI/claude-vibes", "commit": "7b14b64287050e1f22293cce8381fa65803cf7d7",
     "licence": "MIT",
     "rules": [
         (r"^sounds/(?:done|permission|error)/(?!done_boom\.mp3$)[a-z_]+\.mp3$",
          "machine", "commercial-neural-tts", "OpenAI-tts-1", "openai-fable"),
     ]},

    # ------------------------------------------------------------------ ayutaz/CosyVoice, OpenAI tts-1 (6 voices)
    # LICENSE at this commit: "Apache License Version 2.0, January 2004" (the fork keeps upstream
    # CosyVoice's LICENSE; the fork's owner added these files). Commit 8a1442a (yousan, 2026-01-13) "Add
    # English prompt audio files ... - Generate 18 English prompt audio files using OpenAI TTS - 3 female
    # voices (nova, shimmer, alloy) - 3 male voices (echo, fable, onyx) - 3 text variations each";
    # scripts/generate_test_prompts.py: client.audio.speech.create(model="tts-1", voice=voice, input=text,
    # response_format="wav") -> asset/prompts/en_{gender}_{voice}_{text_name}.wav, texts "Hello, my name is
    # Sarah. I'm excited to help you with your project today. ...", "Once upon a time, in a small village by
    # the sea, ...", "The new software update includes several performance improvements ...".
    # The commit is on branches feature/onnx-unity-export and feature/unity-sentis-onnx, not main.
    {"repo": "ayutaz/CosyVoice", "commit": "e1db57684a50b7af2758c95b6ef9dc2ef3e3528f",
     "licence": "Apache-2.0",
     "rules": [
         (r"^asset/prompts/en_(?:female|male)_(alloy|echo|fable|nova|onyx|shimmer)_(?:greeting|story|technical)\.wav$",
          "machine", "commercial-neural-tts", "OpenAI-tts-1", "openai-\\1"),
     ]},

    # ------------------------------------------------------------------ watson-developer-cloud/text-to-speech-nodejs, IBM Watson TTS V3 (neural)
    # LICENSE at this commit: "Apache License Version 2.0, January 2004" (IBM's own demo repository).
    # Commit b44e593 (2019-06-27) "chore(Audio Examples): add audio examples / with the addition of the v3
    # voices, we have generated some example audio output that we want to reference in the blog" (lisa_*,
    # michael_*, plus German/Italian/Portuguese/Spanish files not listed); commit 7fb82fc (2020-03-10)
    # "chore(samples): add new samples" (sample_Emily_01, sample_Erika_03, sample_Henry_02, sample_Kevin_04;
    # sample_Olivia_03 via the merge f06b40d). voices.js: 'en-US_LisaV3Voice' ... 'American English (en-US):
    # LisaV3 (female, enhanced dnn)', MichaelV3, OliviaV3, HenryV3, KevinV3, EmilyV3 (all "enhanced dnn").
    # sample_Erika_03 is de-DE_ErikaV3 (German) and is not listed.
    {"repo": "watson-developer-cloud/text-to-speech-nodejs", "commit": "0d50d43bf91eeb8c8d1a06729fe579f223ec5d58",
     "licence": "Apache-2.0",
     "rules": [
         (r"^public/audio/lisa_1[78]\.wav$",
          "machine", "commercial-neural-tts", "IBM-Watson-TTS-V3", "ibm-en-US-Lisa-v3"),
         (r"^public/audio/michael_(?:05|25)\.wav$",
          "machine", "commercial-neural-tts", "IBM-Watson-TTS-V3", "ibm-en-US-Michael-v3"),
         (r"^public/audio/sample_(Emily|Henry|Kevin|Olivia)_0\d\.wav$",
          "machine", "commercial-neural-tts", "IBM-Watson-TTS-V3", "ibm-en-US-\\1-v3"),
     ]},
]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ johnfrog76/connected-deck, Azure neural TTS (JennyNeural, BrianNeural)
    # No LICENSE file at this commit (or in history); "license": "MIT" only in package.json and README
    # "## License / MIT" -> measure only. Engine: server/index.js synthesize(text, voice): POST
    # https://${region}.tts.speech.microsoft.com/cognitiveservices/v1 with Ocp-Apim-Subscription-Key =
    # AZURE_SPEECH_KEY, SSML <voice name="${voice}">, "X-Microsoft-OutputFormat":
    # "audio-16khz-32kbitrate-mono-mp3". Docs: "the trailer's audio is committed to this repo ...
    # <deckId>/<slideId>-<voiceId>.mp3 ... 38 files - 19 slides x 2 voices", "the repo also ships the
    # thing that made the audio: the narrate server". Slide narration (read speech), 4.0-21.8 s.
    {"repo": "johnfrog76/connected-deck", "commit": "8fc7052186403e8cb342ee6733493c9da929169d",
     "licence": "NOASSERTION (package.json/README: MIT, no LICENSE file)",
     "rules": [
         (r"^public/voices/connected-deck-trailer/[a-z0-9-]+-en-US-(JennyNeural|BrianNeural)\.mp3$",
          "machine", "commercial-neural-tts", "Azure-Neural-TTS", "azure-en-US-\\1"),
     ]},
]
