# Candidate labelled speech clips of NEURAL TTS and speech-LM systems not yet in the corpus (round 9),
# from public GitHub repositories, gathered to MEASURE ONLY (never to fit). Same conventions as
# commercial_tts_5.py .. commercial_tts_8.py: each regex is matched (re.search) against
# `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]). No rule sets ``split_s``: clips
# over 16 s are cut by the gatherer's ``split_over_s`` (8 s pieces at pauses, at most 4). The option
# ``lang`` marks the non-English clips (Step-Audio, Spark-TTS).
# Evidence, licences, match counts, durations and doubts: see tts_9.md
#
# This round looked for systems NOT already in /work/exp/v23/systems_used.txt: NaturalSpeech 3,
# NaturalSpeech (1), UniAudio, SimpleSpeech 2, E3-TTS, ARDiT, DiTTo-TTS, Step-Audio, Spark-TTS.
# Every clip is a MACHINE output; the prompts / ground-truth recordings the demo pages put beside
# them, and every baseline system already measured (VALL-E(-X), VoiceCraft, NaturalSpeech 2,
# ChatTTS, HierSpeech++, XTTS, Voicebox, ...) or reserved/sealed, are NOT matched by any rule.
#
# SOURCES               : empty. The whole batch is measure-only by design (the brief: to measure a
#                         human-vs-machine judge on systems no head has seen), whatever the licence.
# MEASURE_ONLY_SOURCES  : every source; rows are written "measure-only (<licence>)".
#
# NOTES for the gatherer:
# * CAP_PER_SYSTEM = 14 per (family, system) per source: every rule set below matches at most 14
#   files per system and source, so the cap drops nothing.
# * NaturalSpeech 3 comes from two repositories (Microsoft's own demo page, 14 files; the SimpleSpeech 2
#   demo page's comparison column, 13 files): different sentences and conditions, same system name.
# * No gatherer name "<owner>__<path>" collides with another batch's clip (checked against
#   /work/exp/wild/clips), and no path matches two rules.

SOURCES: list = []

MEASURE_ONLY_SOURCES = [
    # ------------------------------------------------------------------ SpeechResearch/speechresearch.github.io (Microsoft Research Asia's TTS demo pages)
    # No LICENSE file anywhere in the tree at this commit.
    # - naturalspeech3/index.html ("NaturalSpeech 3: Zero-Shot Speech Synthesis with Factorized Codec and
    #   Diffusion Models"; commit 59f3722 "naturalspeech3 init", 2024-03-05):
    #   * "Zero-Shot TTS Samples" table, column "NaturalSpeech 3": audio/samples/{1,2,3,4}.wav (the
    #     {n}_prompt.wav files beside them are the prompts: not matched);
    #   * "Comparision Results on LibriSpeech Benchmark", column "NaturalSpeech 3" (the page's own
    #     model: folder "our"): audio/zstts/librispeech/TTS/our/{1..4}.wav;
    #   * "Comparision Results on Ravdess Benchmark", column NaturalSpeech 3: audio/zstts/Ravdess/TTS/our/
    #     {1..8}.wav; 1-6 taken (the cap; our/9-16 are the emotion table, one repeated sentence: not taken);
    #   * same LibriSpeech table, column "UniAudio": audio/zstts/librispeech/TTS/uniaudio/{1..4}.wav
    #     (UniAudio's output as the NaturalSpeech 3 authors published it).
    #   The gt/, prompt/ folders and every other baseline column (voicebox, voicebox_reproduce, valle,
    #   megatts, ns2, hierspeechpp and the reserved system) are not matched.
    # - naturalspeech/index.html ("NaturalSpeech: End-to-End Text to Speech Synthesis with Human-Level
    #   Quality", 2022): table "Comparison with Recording", column "NaturalSpeech":
    #   ../audio/naturalspeech/naturalspeech_{0..4}.wav (recording_{0..4}.wav are LJSpeech recordings:
    #   not matched).
    {"repo": "SpeechResearch/speechresearch.github.io", "commit": "cf44b305452e8f13b02dbe44d41120bf56042f1f",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^naturalspeech3/audio/samples/([1-4])\.wav$",
          "machine", "diffusion-tts", "NaturalSpeech3", "ns3-demo\\1"),
         (r"^naturalspeech3/audio/zstts/librispeech/TTS/our/([1-4])\.wav$",
          "machine", "diffusion-tts", "NaturalSpeech3", "ns3-librispeech\\1"),
         (r"^naturalspeech3/audio/zstts/Ravdess/TTS/our/([1-6])\.wav$",
          "machine", "diffusion-tts", "NaturalSpeech3", "ns3-ravdess\\1"),
         (r"^naturalspeech3/audio/zstts/librispeech/TTS/uniaudio/([1-4])\.wav$",
          "machine", "ar-codec-lm", "UniAudio", "uniaudio-librispeech\\1"),
         (r"^audio/naturalspeech/naturalspeech_([0-4])\.wav$",
          "machine", "gan-e2e-vits", "NaturalSpeech", "lj"),
     ]},

    # ------------------------------------------------------------------ yangdongchao/SimpleSpeech2_demo (SimpleSpeech 2 paper demo page)
    # No LICENSE file at this commit. index.md ("SimpleSpeech 2", commit b8e7161 "v6", 2024-08-26):
    # - "Zero-Shot TTS." table, columns "NaturalSpeech 3" -> compare_baseline_mos/ns3/<item>.wav and "Ours"
    #   (SimpleSpeech 2) -> compare_baseline_mos/simplespeech2/<item>.wav: the page's 13 rows (Common Voice x4,
    #   RAVDESS "emo_0".."emo_3", Switchboard "en_*" x2, VCTK "p2*" x2, LibriTTS "prompt_18"). Two more files in
    #   each folder, common_voice_en_15265-common_voice_en_15268.wav and emo_4.wav, are not on the page: not
    #   matched.
    # - "Compared with E3TTS." column "E3TTS" -> compare_baseline_mos/e3tts/e3tts/prompt_{00,16,17,18,19}.wav
    #   (the other 15 files of that folder are not on the page: not matched).
    # - "Compared with ARDiT." column "ARDiT" -> compare_baseline_mos/ARDiT/bs/{1,2,6,7,12}.wav (bs/5, 8, 10
    #   are not on the page: not matched).
    # - "Compared with DiTTo-TTS." column "DiTTo-TTS" -> compare_baseline_mos/ditts/bs/{0..4}.wav.
    # The ref2/, gt/, prompt/ and prompt2/ folders (people), and the VALL-EX, VoiceCraft, NaturalSpeech 2,
    # ChatTTS, HierSpeech++ and XTTS columns (systems already measured) are not matched; neither are
    # SimpleSpeech 2's other-table copies (e3tts/simplespeech2, ARDiT/ours, ditts/ours), the Chinese
    # pages, the codec resyntheses or the ablations.
    {"repo": "yangdongchao/SimpleSpeech2_demo", "commit": "b8e7161330b9b991e296da94e47aef358233f8d0",
     "licence": "NOASSERTION (no LICENSE file)",
     "rules": [
         (r"^compare_baseline_mos/simplespeech2/(?!common_voice_en_15265-common_voice_en_15268|emo_4)([\w-]+)\.wav$",
          "machine", "flow-matching", "SimpleSpeech2", "ss2-\\1"),
         (r"^compare_baseline_mos/ns3/(?!common_voice_en_15265-common_voice_en_15268|emo_4)([\w-]+)\.wav$",
          "machine", "diffusion-tts", "NaturalSpeech3", "ns3-\\1"),
         (r"^compare_baseline_mos/e3tts/e3tts/(prompt_(?:00|16|17|18|19))\.wav$",
          "machine", "diffusion-tts", "E3-TTS", "e3tts-\\1"),
         (r"^compare_baseline_mos/ARDiT/bs/(1|2|6|7|12)\.wav$",
          "machine", "diffusion-tts", "ARDiT", "ardit-\\1"),
         (r"^compare_baseline_mos/ditts/bs/([0-4])\.wav$",
          "machine", "diffusion-tts", "DiTTo-TTS", "ditto-\\1"),
     ]},

    # ------------------------------------------------------------------ stepfun-ai/Step-Audio (StepFun's own repository)
    # LICENSE at this commit: Apache License 2.0. README.md "## 7. Examples" (added in d7ccf34 / 2edc35e,
    # 2025-02): "### Clone audio" table (role / prompt wav / clone wav): examples/clone_wav_{yuqian,
    # lixueqin}.wav are the clones (examples/prompt_wav_*.wav are the people's prompts: not matched);
    # "### Speed control", "### High EQ(Emotional control & Tone control)" and "### Multilingual" tables
    # (prompt = the user's turn, as text / response = audio file): speed_control{1,2}.wav,
    # tone_control.wav, emotional_control{1,2}.wav (Mandarin), multilingual2.wav (English answer about
    # "raining cats and dogs"), multilingual1.wav (Japanese). rap.wav, singing.wav and
    # multilingual_singing.wav (singing) and speakers/*_prompt.wav (prompts) are not matched.
    {"repo": "stepfun-ai/Step-Audio", "commit": "a52b94d85d418cd5bc736d696d310c990befbc79",
     "licence": "Apache-2.0",
     "rules": [
         (r"^examples/clone_wav_(yuqian|lixueqin)\.wav$",
          "machine", "ar-codec-lm", "Step-Audio-TTS-3B-clone", "clone-\\1", {"lang": "zh"}),
         (r"^examples/(speed_control[12]|tone_control|emotional_control[12])\.wav$",
          "machine", "speech-lm-dialogue", "Step-Audio-Chat", "step-audio", {"lang": "zh"}),
         (r"^examples/multilingual2\.wav$",
          "machine", "speech-lm-dialogue", "Step-Audio-Chat", "step-audio"),
         (r"^examples/multilingual1\.wav$",
          "machine", "speech-lm-dialogue", "Step-Audio-Chat", "step-audio", {"lang": "ja"}),
     ]},

    # ------------------------------------------------------------------ SparkAudio/Spark-TTS (the authors' repository)
    # LICENSE at this commit: Apache License 2.0. example/infer.sh writes its output to
    # save_dir='example/results' (cli.inference names it by timestamp) with model_dir
    # "pretrained_models/Spark-TTS-0.5B", text "身临其境，换新体验。塑造开源语音合成新范式，让智能语音更自然。" and
    # prompt example/prompt_audio.wav (the prompt: not matched); example/results/20250225113521.wav was
    # committed in 020c49b (2025-02-25 11:45 +0800, "add readme"), ten minutes after its timestamp name.
    # src/demos/*/*.wav are voice prompts for the web UI (people): not matched.
    {"repo": "SparkAudio/Spark-TTS", "commit": "2f1ea9082400547242641f5271b6f941c9f439d1",
     "licence": "Apache-2.0",
     "rules": [
         (r"^example/results/(\d+)\.wav$",
          "machine", "ar-codec-lm", "Spark-TTS-0.5B", "spark-example", {"lang": "zh"}),
     ]},
]
