# Candidate labelled speech clips of COMMERCIAL neural TTS (round 8), from public GitHub
# repositories. Same conventions as commercial_tts_5.py .. commercial_tts_7.py: each regex is matched
# (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: clips
# over 16 s are cut by the gatherer's ``split_over_s`` (8 s pieces at pauses, at most 4).
# Evidence, licences, match counts, durations and doubts: see commercial_tts_8.md
#
# This round looked for the hosted engines with no fit-OK clips yet (ElevenLabs, Cartesia, PlayHT,
# Rime, LMNT, Murf, WellSaid, Resemble, Speechify, Hume, Inworld, Unreal Speech, OpenAI
# gpt-4o-mini-tts, ...). The only fit-OK audio found is the VENDORS' OWN output in the vendors' own
# permissively licensed repositories: a vendor publishing its own engine's output under MIT/CC0 raises
# no question of a free-tier "non-commercial" clause.
#
# SOURCES               : the LICENSE file at the named commit is MIT, CC0-1.0 or Apache-2.0 (elevenlabs/ui: the
#                         file is LICENSE.md), the repository (the engine's vendor's own) names the engine
#                         and voice in its code / README / commit message, and the vendor published its
#                         own output.
# MEASURE_ONLY_SOURCES  : good audio of a commercial engine, but no LICENSE file at the commit, or a
#                         third party's output of an engine whose free tier is non-commercial (plan unknown).
#
# NOTES for the gatherer:
# * smallest-inc/waves-examples @ 0ecb1e6 appears TWICE, once in SOURCES (Smallest.ai's own Lightning
#   output, CC0) and once in MEASURE_ONLY_SOURCES (the ElevenLabs clips of the same MOS comparison,
#   made by Smallest.ai with an ElevenLabs account of unknown plan). The paths differ, so no file is in
#   both; a test that maps a row to its source must match the row's source_path against the rules,
#   not only (repo, commit).
# * CAP_PER_SYSTEM = 14 per (family, system) per source: every rule below matches at most 14 files per
#   system (inworld-ai/tts: 14 voices x 2 models, one sentence per voice, chosen so that the cap drops
#   nothing).
# * No two matched files share a basename within one repository, and no gatherer name
#   "<owner>__<path>" collides with another batch's clip (checked against /work/exp/wild/clips).

SOURCES = [
    # ------------------------------------------------------------------ Speechify-AI/demos, Speechify API (simba-english george; simba-3.2 geffen_32, wyatt_32)
    # LICENSE at this commit (main): "MIT License / Copyright (c) 2026 Speechify AI" (Speechify's own demo
    # monorepo). Engine:
    # - demos/captions-speech-marks/src/index.ts: client.audio.speech({input: text, voice_id: "george", ...
    #   model: "simba-english"}); commit 8ac2ca8 "Real sample.mp3 + sample.vtt + sample.json committed (42
    #   words, from a real API call)"; sample.json "text": "Speechify returns word-level timestamps ...".
    # - demos/ssml-emotion-tts/src/index.ts: SSML (<speechify:style emotion="warm">Welcome to the production
    #   incident update. ...) with voice_id "george", model "simba-english"; commit f44e449 "commits real
    #   output/ssml-emotion.mp3 from a live run".
    # - demos/audiobook-pipeline/main.py: voice_id "george", model "simba-english" (part-000.mp3 only;
    #   chapter-01.mp3 is the same 23.64 s chapter re-muxed from its single part, not listed).
    # - demos/vercel-ai-sdk: README "output/hello.mp3 - synthesized with pure defaults (already committed,
    #   real API output): model simba-3.2, voice geffen_32"; src/provider-swap.ts: speechify.speech(
    #   "simba-3.2"), voice "wyatt_32", text "Same code, different provider. Only the model line changed."
    #   -> swap.mp3 (commit 79ff40d "Committed outputs are real API audio").
    # The fixtures/spacewalk.wav files are voice-cloning INPUTS of unknown origin: not listed.
    {"repo": "Speechify-AI/demos", "commit": "36511212f1c87ee03748e35239708a14d36a1783",
     "licence": "MIT",
     "rules": [
         (r"^demos/(?:captions-speech-marks/output/sample|ssml-emotion-tts/output/ssml-emotion|audiobook-pipeline/output/chapter-01/part-000)\.mp3$",
          "machine", "commercial-neural-tts", "Speechify-simba-english", "speechify-george"),
         (r"^demos/vercel-ai-sdk/output/hello\.mp3$",
          "machine", "commercial-neural-tts", "Speechify-simba-3.2", "speechify-geffen_32"),
         (r"^demos/vercel-ai-sdk/output/swap\.mp3$",
          "machine", "commercial-neural-tts", "Speechify-simba-3.2", "speechify-wyatt_32"),
     ]},

    # ------------------------------------------------------------------ inworld-ai/inworld-api-examples, Inworld TTS (inworld-tts-1.5-mini, Ashley)
    # LICENSE at this commit: "MIT License / Copyright (c) 2026 Inworld AI". Commit af75d9d (Shuang-Inworld,
    # shuangliang@inworld.ai, 2026-03-05, "Repo optimization") added tts/js/synthesis_websocket_output.ogg
    # together with tts/js/example_websocket.js, whose main() writes outputFile =
    # 'synthesis_websocket_output.ogg' from wss://api.inworld.ai/tts/v1/voice:streamBidirectional with
    # create: {voice_id: 'Ashley', model_id: 'inworld-tts-1.5-mini', audio_config: {audio_encoding:
    # 'OGG_OPUS', sample_rate_hertz: 24000}} and send_text "Okay so like, I'm 19 and I just started trying
    # to do this whole online streaming thing...". One clip, 6.8 s.
    {"repo": "inworld-ai/inworld-api-examples", "commit": "af75d9df35d234080137018073fa57d277db1c71",
     "licence": "MIT",
     "rules": [
         (r"^tts/js/synthesis_websocket_output\.ogg$",
          "machine", "commercial-neural-tts", "Inworld-TTS-1.5-mini", "inworld-Ashley"),
     ]},

    # ------------------------------------------------------------------ smallest-inc/waves-examples, Smallest.ai Lightning (emily, raj, sanya, mithali, chetan)
    # LICENSE at this commit: "Creative Commons Legal Code / CC0 1.0 Universal" (Smallest.ai's own examples
    # repository). Commit 0ecb1e6 (2025-01-07, "mos calculation"): mos/README.md "generate and evaluate
    # text-to-speech (TTS) samples from Smallest.ai and ElevenLabs"; mos/src/generate.py: from smallest
    # import Smallest ... client.synthesize(text, voice=voice_id, save_as=save_path) ->
    # generated/smallest/{sample_id}.wav; requirements smallest-ai==1.3.4 (the SDK's "lightning" model);
    # voices and texts in mos/data/sample_data.csv (emily "Clever cats carefully crafted colorful
    # collages ...", raj, sanya, mithali, chetan); results/generation_results.csv: all True. Voices are
    # Indian-English. The mos/ folder exists only at this commit.
    {"repo": "smallest-inc/waves-examples", "commit": "0ecb1e6a4ff9fa9a44f44fd966ed14dc226e4a43",
     "licence": "CC0-1.0",
     "rules": [
         (r"^mos/generated/smallest/sample_0000\.wav$",
          "machine", "commercial-neural-tts", "Smallest-Lightning", "smallest-emily"),
         (r"^mos/generated/smallest/sample_0001\.wav$",
          "machine", "commercial-neural-tts", "Smallest-Lightning", "smallest-raj"),
         (r"^mos/generated/smallest/sample_0002\.wav$",
          "machine", "commercial-neural-tts", "Smallest-Lightning", "smallest-sanya"),
         (r"^mos/generated/smallest/sample_0003\.wav$",
          "machine", "commercial-neural-tts", "Smallest-Lightning", "smallest-mithali"),
         (r"^mos/generated/smallest/sample_0004\.wav$",
          "machine", "commercial-neural-tts", "Smallest-Lightning", "smallest-chetan"),
     ]},

    # ------------------------------------------------------------------ elevenlabs/ui, ElevenLabs TTS with timestamps (model and voice not stated)
    # LICENSE.md at this commit: "MIT License / Copyright (c) 2025 Eleven Labs Inc." (ElevenLabs' own UI
    # component library). Commit 80c808b (2025-10-28, "docs: add transcript-viewer docs, add demo audio and
    # alignments") added apps/www/public/sounds/transcript-viewer/transcript-viewer-audio.mp3 with
    # transcript-viewer-alignment.json, which is the ElevenLabs /with-timestamps alignment object
    # ({characters, characterStartTimesSeconds, characterEndTimesSeconds}) of the text " ElevenLabs allows
    # you to generate audio timings -- now you can easily visualize them too! "; the component docs speak
    # of "ElevenLabs tags (e.g. [Excited])". MP3 44.1 kHz 128 kb/s (ElevenLabs' default format). 5.7 s.
    {"repo": "elevenlabs/ui", "commit": "80c808b733ccca8c121bb3bfe77fd4939707d935",
     "licence": "MIT",
     "rules": [
         (r"^apps/www/public/sounds/transcript-viewer/transcript-viewer-audio\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-TTS", "elevenlabs-unknown-voice"),
     ]},

    # ------------------------------------------------------------------ playht/pyht, PlayHT API (Play3.0 / PlayHT2.0; default voice "female-cs")
    # LICENSE at this commit: "Apache License Version 2.0, January 2004" (PlayHT's own Python SDK). output.wav
    # (24 kHz PCM, 1.67 s) was committed by a PlayHT engineer (Bryan Anderson, bryan@play.ht) in 155acad
    # "Add WebSockets API; remove text preprocessing ..."; the only writer of output.wav is demo/main.py
    # (save_audio: open("output.wav", "wb") ...), which streams from client.get_stream_pair(options,
    # voice_engine=...) with voice_engine "Play3.0", "Play3.0-ws" or "PlayHT2.0" (by flag) and --voice
    # default "s3://voice-cloning-zero-shot/d9ff78ba-d016-47f6-b0ef-dd630f59414e/female-cs/manifest.json".
    # The text (a --text argument) and the engine flag used are not recorded. An earlier output.wav
    # (c8cc319, 0.95 s) has the same path, so the gatherer could keep only one; the later one is listed.
    {"repo": "playht/pyht", "commit": "155acad87aa280bd8bb169aee1fb3ce0002cc58c",
     "licence": "Apache-2.0",
     "rules": [
         (r"^output\.wav$",
          "machine", "commercial-neural-tts", "PlayHT-Play3.0-or-2.0", "playht-female-cs"),
     ]},
]


MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ inworld-ai/tts (gh-pages), Inworld TTS-1 and TTS-1-Max, 14 voices
    # NO LICENSE file at this commit (the gh-pages branch has none; the repository's main branch has "MIT
    # License / Copyright (c) 2025 [Inworld AI]") -> measure only. docs/index.html: "We introduce Inworld
    # TTS-1, a set of two Transformer-based autoregressive text-to-speech (TTS) models. ... TTS-1-Max ...
    # TTS-1"; the files are named <Voice>_<lang>_<first letters of text>_<markup>_<model>_<timestamp>.wav.
    # Listed: the English plain (no audio markup) sentences of the 2025-07-22 13:17-13:19 set, one per
    # voice and model (Edward's "Didyouhear" and Sarah's "ohnoTheevi" left out so each model has exactly
    # 14 voices). Voices: Alex, Ashley, Deborah, Edward, Elizabeth, Hades, Julia, Mark, Olivia, Sarah,
    # Shaun, Theodore, Timothy, Wendy.
    {"repo": "inworld-ai/tts", "commit": "77abf557d87f199c3d005a2ae501c240075d2a99",
     "licence": "NOASSERTION (no LICENSE file on the gh-pages branch; main branch: MIT)",
     "rules": [
         (r"^docs/audiodemos/([A-Z][a-z]+)_en_(?!Didyouhear|ohnoTheevi)[A-Za-z]+__inworld-tts-1_2025072213\d+\.wav$",
          "machine", "commercial-neural-tts", "Inworld-TTS-1", "inworld-\\1"),
         (r"^docs/audiodemos/([A-Z][a-z]+)_en_(?!Didyouhear|ohnoTheevi)[A-Za-z]+__inworld-tts-1-max_2025072213\d+\.wav$",
          "machine", "commercial-neural-tts", "Inworld-TTS-1-Max", "inworld-\\1"),
     ]},

    # ------------------------------------------------------------------ smallest-inc/waves-examples, ElevenLabs (5 voice ids) made by Smallest.ai
    # LICENSE at this commit: CC0-1.0, but the clips are ElevenLabs output made by a third party with an
    # account of unknown plan (ElevenLabs' free tier is non-commercial) -> measure only, as round 5 did.
    # mos/src/generate.py: ElevenLabs(api_key=...).generate(text=text, voice=voice_id) (elevenlabs==1.50.3,
    # no model given: the SDK's default) -> generated/elevenlabs/{sample_id}.mp3; voice ids
    # NFG5qt843uXKj4pFvR7C, SGbOfpm28edC83pZ9iGb, Uyx98Ek4uMNmWN7E28CD, JYesEroFZfIV2tXHwRem,
    # m5qndnI7u4OAdXhH0Mr5 (sample_data.csv), the same five texts as the Smallest clips.
    {"repo": "smallest-inc/waves-examples", "commit": "0ecb1e6a4ff9fa9a44f44fd966ed14dc226e4a43",
     "licence": "CC0-1.0",
     "rules": [
         (r"^mos/generated/elevenlabs/sample_0000\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-SDK-default-model", "elevenlabs-NFG5qt843uXKj4pFvR7C"),
         (r"^mos/generated/elevenlabs/sample_0001\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-SDK-default-model", "elevenlabs-SGbOfpm28edC83pZ9iGb"),
         (r"^mos/generated/elevenlabs/sample_0002\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-SDK-default-model", "elevenlabs-Uyx98Ek4uMNmWN7E28CD"),
         (r"^mos/generated/elevenlabs/sample_0003\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-SDK-default-model", "elevenlabs-JYesEroFZfIV2tXHwRem"),
         (r"^mos/generated/elevenlabs/sample_0004\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-SDK-default-model", "elevenlabs-m5qndnI7u4OAdXhH0Mr5"),
     ]},

    # ------------------------------------------------------------------ elevenlabs/elevenlabs-docs, ElevenLabs Eleven v3 Text to Dialogue
    # NO LICENSE file at this commit or in history -> measure only. fern/docs/pages/capabilities/
    # text-to-dialogue.mdx: "The ElevenLabs Text to Dialogue API creates natural sounding expressive
    # dialogue from text using the Eleven v3 model", with audio players for fern/assets/audio/dialogue.mp3
    # ("Dialogue example"), dialogue-emotive.mp3 ("[giggling] That's really funny!" ...),
    # dialogue-interruption.mp3 ("[cautiously] Hello, is this seat-" / "[jumping in] Free? ...") and
    # dialogue-ellipses.mp3 ("[indecisive] Hi, can I get uhhh..." ...). Two voices per clip, mixed.
    {"repo": "elevenlabs/elevenlabs-docs", "commit": "3557f0b1bec8ec0233e48d03cc496f03c4396dcb",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^fern/assets/audio/dialogue(?:-ellipses|-emotive|-interruption)?\.mp3$",
          "machine", "commercial-neural-tts", "ElevenLabs-v3-dialogue", "elevenlabs-v3-two-voices"),
     ]},

    # ------------------------------------------------------------------ rimelabs/docs, Rime TTS (docs demos, model mostly not stated)
    # NO LICENSE file at this commit -> measure only. Rime's own documentation site: docs/punctuation.mdx
    # tables of <audio src="/sounds/docs/whatdoyoumeanperiod.wav"> "what do you mean." ...
    # iithinkitsprettycool(dash).wav "i- i think it's pretty cool", soitskindafunny{,comma,period}.wav;
    # docs/spell.mdx: sounds/docs/jonathan.mp3 "the name is spelled spell(jonathan)." (examples use speaker
    # astra / tibur); docs/openclaw.mdx: "| Rime TTS | Default TTS |" with audio/rime_podcast.mp3 (the
    # edge_default_podcast.mp3 beside it is the non-Rime default and is not listed). The punctuation page
    # was deleted in b56be6f; this is the last commit before. gorbulets.wav and wait_*.wav do not decode.
    {"repo": "rimelabs/docs", "commit": "fb7faab5f7bc2ded243a58cd98559a90cf1123de",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^sounds/docs/(?:whatdoyoumean(?:period|question|interrobang|exclamq|qq)|iithinkitsprettycool(?:dash)?|soitskindafunny(?:comma|period)?)\.wav$",
          "machine", "commercial-neural-tts", "Rime-TTS-docs", "rime-docs-punctuation"),
         (r"^sounds/docs/jonathan\.mp3$",
          "machine", "commercial-neural-tts", "Rime-TTS-docs", "rime-docs-spell"),
         (r"^audio/rime_podcast\.mp3$",
          "machine", "commercial-neural-tts", "Rime-TTS-docs", "rime-docs-podcast"),
     ]},

    # ------------------------------------------------------------------ vercel/modelfusion, LMNT (voice Henry), made by a third party
    # LICENSE at this commit: "MIT License / Copyright (c) 2023 Lars Grammel", but LMNT plans carry a
    # commercial_use_allowed flag (docs.lmnt.com account-info), so a free plan may not allow commercial use;
    # the plan is unknown -> measure only. Commit 954145c (2023-09-07, "Add LMNT to synthesizeSpeech docs")
    # added examples/basic/lmnt-speech-example.mp3, written by examples/basic/src/model-provider/lmnt/
    # lmnt-synthesize-speech-example.ts: synthesizeSpeech(new LmntSpeechSynthesisModel({voice:
    # "034b632b-df71-46c8-b440-86a42ffc3cf3", // Henry}), "Good evening, ladies and gentlemen! Exciting news
    # on the airwaves tonight as The Rolling Stones unveil 'Hackney Diamonds,' ..."). 18.7 s (deleted in
    # the next commit a91aff6, "Delete speech example.").
    {"repo": "vercel/modelfusion", "commit": "954145c43b1ced0d0626adaae5f126ee03037cb8",
     "licence": "MIT",
     "rules": [
         (r"^examples/basic/lmnt-speech-example\.mp3$",
          "machine", "commercial-neural-tts", "LMNT", "lmnt-Henry"),
     ]},
]
