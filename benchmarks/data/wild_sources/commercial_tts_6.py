# Candidate labelled speech clips of COMMERCIAL neural TTS (round 6), from public GitHub
# repositories. Same conventions as commercial_tts_5.py: each regex is matched (re.search)
# against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: clips
# over 16 s are cut by the gatherer's ``split_over_s`` (8 s pieces at pauses, at most 4).
# Evidence, licences, match counts, durations and doubts: see commercial_tts_6.md
#
# SOURCES               : the LICENSE file at the named commit is in judge_lofo.FIT_OK (MIT or
#                         Apache-2.0 here), the repo's own code names the engine, and the generating
#                         service (Google Cloud TTS, Deepgram Aura) does not make output non-commercial.
# MEASURE_ONLY_SOURCES  : good audio whose generator's free tier may be non-commercial (Hume).
#
# NOTES for the gatherer:
# * The gatherer names a clip "<owner>__<path>" with the suffix set to .wav, so two sources with the
#   same owner and the same path (after the suffix change) would overwrite each other. The rules
#   below were chosen so that no two clips share that name (deepgram/*: output.wav, output_1.wav,
#   your_output_file.wav and examples/agent/...; GoogleCloudPlatform: distinct paths).
# * deepgram/deepgram-js-sdk output.wav and deepgram/deepgram-go-sdk output_*.wav have a WAV header
#   written before the data size was known (size fields 0; js also has byte rate 2x too high), so
#   ffprobe's format duration is wrong (js: 5.9 s shown, 11.8 s decoded). Decode with ffmpeg (the
#   gatherer's to_wav16k does) and trust the decoded length.
# * SCLIP: 8 of the 68 preview files are a 1.0 s 44.1 kHz RIFF placeholder (same bytes) and 16 more
#   are byte-identical copies under another voice name; the regex lists only the 44 distinct
#   24 kHz MP3 blobs, one name per blob.

SOURCES = [
    # ------------------------------------------------------------------ Adityasamant011/SCLIP, Google Cloud TTS voice previews
    # LICENSE at this commit: "MIT License / Copyright (c) 2025 Sclips" (a LICENSE file at the repo root).
    # scripts/setup/generate_voice_previews.py: "from google.cloud import texttospeech" ...
    # VoiceSelectionParams(language_code=language_code, name=voice_name) for 68 en-US/GB/AU/IN
    # Neural2/Wavenet/Standard voices, PREVIEW_TEXT = "Hello, this is a preview of my voice. I hope you
    # like how I sound!", output resources/preview_cache/voice_{voice_name}.mp3 (the README there says
    # the same). DOUBT: 16 files are byte-identical to a file of another tier with the same locale and
    # letter (e.g. en-AU-Neural2-D == en-AU-Standard-D), so the tier in a file name is not reliable;
    # the system is therefore "Google-Cloud-TTS" (tier unresolved); the speaker is the file's voice name.
    # apps/sidecar/resources/preview_cache/ holds the same blobs (not listed); sessions/*/voiceovers are
    # copies of the 1 s placeholder (not listed).
    {"repo": "Adityasamant011/SCLIP", "commit": "fe16a04831608a7723b9ef385b6d894ffb7587e6",
     "licence": "MIT",
     "rules": [
         (r"^resources/preview_cache/voice_(en-AU-(?:Neural2-C|Neural2-D|Standard-A|Standard-B|Wavenet-A|Wavenet-C|Wavenet-D))\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS", "google-\\1"),
         (r"^resources/preview_cache/voice_(en-GB-(?:Neural2-C|Neural2-D|Neural2-F|Standard-A|Standard-B|Wavenet-A|Wavenet-C|Wavenet-D))\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS", "google-\\1"),
         (r"^resources/preview_cache/voice_(en-IN-(?:Neural2-A|Neural2-B|Neural2-C|Neural2-D|Standard-C|Standard-D|Wavenet-A|Wavenet-C))\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS", "google-\\1"),
         (r"^resources/preview_cache/voice_(en-US-(?:Neural2-F|Neural2-G|Neural2-H|Neural2-I|Neural2-J|Standard-A|Standard-B|Standard-C|Standard-D|Standard-E|Standard-F|Standard-G|Standard-I|Wavenet-A|Wavenet-B|Wavenet-C|Wavenet-E|Wavenet-F|Wavenet-H|Wavenet-I|Wavenet-J))\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS", "google-\\1"),
     ]},

    # ------------------------------------------------------------------ GoogleCloudPlatform/python-docs-samples, Google Cloud TTS (2019 default en-US MALE)
    # LICENSE at this commit: "Apache License Version 2.0, January 2004" (Google's own samples repo).
    # texttospeech/ssml_addresses/tts.py: client = texttospeech.TextToSpeechClient();
    # VoiceSelectionParams(language_code='en-US', ssml_gender=...MALE); AudioEncoding.MP3; main() writes
    # 'resources/example.mp3' from resources/example.txt (addresses, with <break time="2s"/> between
    # lines; at this commit example.txt still carries its "# [START tts_ssml_address_example]" comment
    # lines, which are read aloud). expected_special / expected_non_special are the test fixtures of the
    # same function ("This is a normal test." and the special-character text). Voice name not given
    # (the API's default for en-US MALE in July 2019; possibly a Standard, non-WaveNet voice).
    {"repo": "GoogleCloudPlatform/python-docs-samples", "commit": "9c30bc2bed592669c2994107eb3596ea7fa98d98",
     "licence": "Apache-2.0",
     "rules": [
         (r"^texttospeech/ssml_addresses/resources/(example|expected_non_special|expected_special)\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS-default-2019", "google-en-US-male-default-2019"),
     ]},
    # Same repo, another commit and other paths: translate/.../hybrid_glossaries/hybrid_tutorial.py
    # OCRs a French menu photo (Vision API), translates fr->en with a glossary (Translation API) and
    # speaks the English text: text_to_speech(text, outfile) with VoiceSelectionParams(language_code=
    # "en-US", ssml_gender=texttospeech.SsmlVoiceGender.MALE), outfile = "resources/example.mp3".
    # expected_standard_text.mp3 is the test's expected output of the same function.
    {"repo": "GoogleCloudPlatform/python-docs-samples", "commit": "544a25a6a2248983b1b1179047b71de4509d32f1",
     "licence": "Apache-2.0",
     "rules": [
         (r"^translate/samples/snippets/hybrid_glossaries/resources/(example|expected_standard_text)\.mp3$",
          "machine", "commercial-neural-tts", "Google-Cloud-TTS-default-2023", "google-en-US-male-default-2023"),
     ]},

    # ------------------------------------------------------------------ deepgram/deepgram-js-sdk, Deepgram Aura-2 thalia
    # LICENSE at this commit: "MIT License / Copyright (c) 2023 Deepgram". Commit "test: tracing tts ws
    # issue" adds examples/jason/index.js and output.wav: deepgram.speak.live({model: "aura-2-thalia-en",
    # encoding: "linear16", sample_rate: 48000}) sends "Hello, how can I help you today?", "Did you
    # catch the soccer last night?", "That team I was telling you about is playing in the finals this
    # weekend.", "I'm not sure what to say, but I never expected them to get that far." and writes
    # output.wav. Voice-agent style.
    {"repo": "deepgram/deepgram-js-sdk", "commit": "624802e1daf33a7e293e564d85602bd559f010eb",
     "licence": "MIT",
     "rules": [
         (r"^output\.wav$",
          "machine", "commercial-neural-tts", "Deepgram-Aura-2", "deepgram-aura-2-thalia-en"),
     ]},

    # ------------------------------------------------------------------ deepgram/deepgram-go-sdk, Deepgram Voice Agent API (Aura-2 thalia)
    # LICENSE at this commit: "MIT License". examples/agent/websocket/simple/main.go at this commit:
    # tOptions.Agent.Speak.Provider["model"] = "aura-2-thalia-en"; tOptions.Agent.Greeting = "Hello! How
    # can I help you today?"; the agent's audio is written to output_%d.wav (one file per agent turn).
    {"repo": "deepgram/deepgram-go-sdk", "commit": "b01b50f34a8a0ad6c073431037c59863c3725a9b",
     "licence": "MIT",
     "rules": [
         (r"^examples/agent/websocket/simple/output_([12])\.wav$",
          "machine", "commercial-neural-tts", "Deepgram-Aura-2", "deepgram-aura-2-thalia-en"),
     ]},

    # ------------------------------------------------------------------ deepgram/deepgram-dotnet-sdk, Deepgram Voice Agent API (Aura-2 thalia)
    # LICENSE at this commit: "MIT License". Commit "feat: generic properties for speak provider" adds
    # examples/agent/websocket/arbitrary_keys/Program.cs (Agent.Speak.Provider.Model = "aura-2-thalia-en",
    # Agent.Greeting = "Hello, how can I help you today?", Audio.Output.SampleRate = 24000) and output_1.wav
    # (the greeting, 1.6 s).
    {"repo": "deepgram/deepgram-dotnet-sdk", "commit": "de0258d095b7d339161eb600d60bfb44628ba89d",
     "licence": "MIT",
     "rules": [
         (r"^output_1\.wav$",
          "machine", "commercial-neural-tts", "Deepgram-Aura-2", "deepgram-aura-2-thalia-en"),
     ]},

    # ------------------------------------------------------------------ deepgram/deepgram-rust-sdk, Deepgram Aura-1 asteria
    # LICENSE at this commit: "MIT License". examples/text_to_speech_to_file.rs at this commit:
    # .model("aura-asteria-en"), text "Hello, how can I help you today? This is a longer sentence to
    # increase the time taken to process the audio, so that the streaming shows the full delta vs
    # downloading the whole file.", output_file = Path::new("your_output_file.wav").
    {"repo": "deepgram/deepgram-rust-sdk", "commit": "6daa8dbdc0c9ee8b6ce9297515d1a73008ce23a8",
     "licence": "MIT",
     "rules": [
         (r"^your_output_file\.wav$",
          "machine", "commercial-neural-tts", "Deepgram-Aura-1", "deepgram-aura-asteria-en"),
     ]},
]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ livekit/agents, Hume Octave TTS
    # LICENSE at this commit: "Apache License Version 2.0, January 2004". Commit "rewrite Hume TTS & add
    # to the tests" (Théo Monnom) adds hume.TTS() to tests/test_tts.py, whose docker-compose sets
    # LK_DUMP_TTS=1 and mounts ../lk_dump; the dumped file tts_livekit.plugins.hume.tts.TTS_*.wav is the
    # plugin's synthesis of tests/long_synthesize.txt ("It could not have been ten seconds, and yet it
    # seemed a long time that their hands were clasped together. ..."). Deleted in the next commit
    # (285883a). Hume's free tier (new accounts start with credits) and the plan LiveKit used are not
    # stated, and Hume's terms for free-tier output were not verified -> measure only.
    {"repo": "livekit/agents", "commit": "8762a1ee9cdf1b3c2a894dafea2a02f11684a53f",
     "licence": "Apache-2.0",
     "rules": [
         (r"^lk_dump/tts_livekit\.plugins\.hume\.tts\.TTS_[0-9a-f]{12}_[0-9_-]+\.wav$",
          "machine", "commercial-neural-tts", "Hume-Octave", "hume-default-voice"),
     ]},
]
