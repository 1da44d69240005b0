# Candidate demo-page sources (paper demo pages with side-by-side system outputs + human GT).
# Format: rules = (regex on path, label, family, system, speaker-expr)
# Labels checked against each page's table headers (see candidates_demo.md).
# Skipped on purpose: StyleTTS2 / MegaTTS folders (reserved systems), tone tests, files not on the page.

A = r"\.(?:wav|mp3|flac|ogg|m4a)$"

SOURCES = [
    # ---------------- OverFlow demo (docs/ of code repo) -- MIT ----------------
    {"repo": "shivammehta25/OverFlow", "commit": "3a68229364b3d7dbb31592922a3b9350ca17ce71", "licence": "MIT",
     "rules": [
        (r"^docs/audio/VOC/(ListeningTest|SamplingTemperature)/(\d+)[^/]*" + A, "machine", "resynthesis", "hifigan-vocoded-ljspeech", "LJ"),
        (r"^docs/audio/VOC/RyanVariations/(\d+)" + A, "machine", "resynthesis", "hifigan-vocoded-ryanspeech", "RyanSpeech"),
        (r"^docs/audio/OF/(ListeningTest|SamplingTemperature)/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow", "LJ"),
        (r"^docs/audio/OFND/(ListeningTest|SamplingTemperature)/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow-nodropout", "LJ"),
        (r"^docs/audio/OFZT/ListeningTest/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow-zerotemp", "LJ"),
        (r"^docs/audio/OF/RyanVariations/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow", "RyanSpeech"),
        (r"^docs/audio/OFND/RyanVariations/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow-nodropout", "RyanSpeech"),
        (r"^docs/audio/OFZT/RyanVariations/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "overflow-zerotemp", "RyanSpeech"),
        (r"^docs/audio/OF/DifferentSpeakers/([A-Za-z]+)_\d+" + A, "machine", "ar-mel-neural-vocoder", "overflow-finetuned", "overflow-\\1"),
        (r"^docs/audio/OF/Summary/([a-z_]+)_summary" + A, "machine", "ar-mel-neural-vocoder", "overflow", "overflow-\\1"),
        (r"^docs/audio/T2/ListeningTest/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "tacotron2", "LJ"),
        (r"^docs/audio/NHMM/(ListeningTest|SamplingTemperature)/[^/]+" + A, "machine", "ar-mel-neural-vocoder", "neural-hmm-tts", "LJ"),
        (r"^docs/audio/GTTS/(ListeningTest|SamplingTemperature)/[^/]+" + A, "machine", "nar-mel-neural-vocoder", "glow-tts", "LJ"),
        (r"^docs/audio/PT-GTTS/Comparison/[^/]+" + A, "machine", "nar-mel-neural-vocoder", "glow-tts-coqui-pretrained", "LJ"),
        (r"^docs/audio/FP/Comparison/[^/]+" + A, "machine", "nar-mel-neural-vocoder", "fastpitch", "LJ"),
        (r"^docs/audio/VITS/Comparison/[^/]+" + A, "machine", "gan-e2e-vits", "vits", "LJ"),
     ]},

    # ---------------- Matcha-TTS demo (branch "docs" of code repo) -- MIT ----------------
    {"repo": "shivammehta25/Matcha-TTS", "commit": "5a7f220662a971190c942d4ff62a08afe2ac30e6", "licence": "MIT",
     "rules": [
        (r"^stimuli/sample_from_test/VOC_(\d+)" + A, "machine", "resynthesis", "hifigan-vocoded-ljspeech", "LJ"),
        (r"^stimuli/(sample_from_test|number_of_ode_solver)/MAT-\d+_\d+" + A, "machine", "flow-matching", "matcha-tts", "LJ"),
        (r"^stimuli/(sample_from_test|number_of_ode_solver)/GCFM-\d+_\d+" + A, "machine", "flow-matching", "grad-tts-cfm", "LJ"),
        (r"^stimuli/(sample_from_test|number_of_ode_solver)/GRAD-\d+_\d+" + A, "machine", "diffusion-tts", "grad-tts", "LJ"),
        (r"^stimuli/sample_from_test/FS2_\d+" + A, "machine", "nar-mel-neural-vocoder", "fastspeech2", "LJ"),
        (r"^stimuli/sample_from_test/VITS_\d+" + A, "machine", "gan-e2e-vits", "vits", "LJ"),
     ]},

    # ---------------- Grad-TTS demo page -- no licence file ----------------
    {"repo": "grad-tts/grad-tts.github.io", "commit": "4aff45a672ae10fc786bab555296e20dbbddb53e", "licence": "none found",
     "rules": [
        (r"^assets/mos/(\d+)" + A, "human", "human-read-audiobook", "ljspeech-gt", "LJ"),
        (r"^assets/mos/\d+_grad-tts-\d+" + A, "machine", "diffusion-tts", "grad-tts", "LJ"),
        (r"^assets/mos/\d+_glow-tts" + A, "machine", "nar-mel-neural-vocoder", "glow-tts", "LJ"),
        (r"^assets/mos/\d+_taco2" + A, "machine", "ar-mel-neural-vocoder", "tacotron2", "LJ"),
        (r"^assets/mos/\d+_fastspeech" + A, "machine", "nar-mel-neural-vocoder", "fastspeech", "LJ"),
        (r"^assets/abstract" + A, "machine", "diffusion-tts", "grad-tts", "LJ"),
        (r"^assets/e2e/\d+" + A, "machine", "diffusion-tts", "e2e-grad-tts", "LJ"),
        (r"^assets/(generalized_vs_standard|tempo|temperature/[\d.]+|test)/[^/]+" + A, "machine", "diffusion-tts", "grad-tts", "LJ"),
     ]},

    # ---------------- HierSpeech++ demo page -- no licence file ----------------
    {"repo": "sh-lee-prml/HierSpeechpp-demo", "commit": "9a78d65e4592d1106e3f5d82ddaa03b51c20cbbc", "licence": "none found",
     "rules": [
        # zero-shot TTS with Expresso prompts
        (r"^audio/0_zeroshot_tts/expresso_tts/(ex\d+)[^/]*" + A, "human", "human-acted-emotional", "expresso-prompt", "expresso-\\1"),
        (r"^audio/0_zeroshot_tts/expresso_tts/steve-jobs-2005" + A, "human", "human-public-speech", "steve-jobs-2005-prompt", "steve-jobs"),
        (r"^audio/0_zeroshot_tts/expresso_tts_hier/(ex\d+|steve-jobs)[^/]*" + A, "machine", "vits-zero-shot", "hierspeechpp", "\\1"),
        # LibriTTS test-clean zero-shot TTS
        (r"^audio/1_zeroshot_tts/libritts_test_clean_full/(\d+)_[\d_]+" + A, "human", "human-read-audiobook", "libritts-gt", "\\1"),
        (r"^audio/1_zeroshot_tts/YourTTS_test-clean/(\d+)_[\d_]+" + A, "machine", "vits-zero-shot", "yourtts", "\\1"),
        (r"^audio/1_zeroshot_tts/hierspeech/(\d+)_[\d_]+" + A, "machine", "vits-zero-shot", "hierspeech", "\\1"),
        (r"^audio/1_zeroshot_tts/valle_clean/(\d+)_[\d_]+" + A, "machine", "ar-codec-lm", "vall-e-x", "\\1"),
        (r"^audio/1_zeroshot_tts/coquitts_test_clean/(\d+)_[\d_]+" + A, "machine", "ar-codec-lm", "xtts-v1", "\\1"),
        (r"^audio/1_zeroshot_tts/hierspeechpp_(?:lt460|lt960|eng_kor)/(\d+)_[\d_]+" + A, "machine", "vits-zero-shot", "hierspeechpp", "\\1"),
        # NaturalSpeech 2 comparison (LibriSpeech test-clean items)
        (r"^audio/2_Table11/naturalspeech2_gt/reference_(\d+)" + A, "human", "human-read-audiobook", "librispeech-gt", "ns2-item\\1"),
        (r"^audio/2_Table11/naturalspeech2_reference/reference_(\d+)" + A, "human", "human-read-audiobook", "librispeech-prompt", "ns2-item\\1"),
        (r"^audio/2_Table11/naturalspeech2_valle/reference_(\d+)" + A, "machine", "ar-codec-lm", "vall-e", "ns2-item\\1"),
        (r"^audio/2_Table11/naturalspeech2_naturalspeech2/reference_(\d+)" + A, "machine", "diffusion-tts", "naturalspeech2", "ns2-item\\1"),
        (r"^audio/2_Table11/hierspeech_for_naturalspeech(?:_spr)?/reference_(\d+)" + A, "machine", "vits-zero-shot", "hierspeechpp", "ns2-item\\1"),
        (r"^audio/3_mega/hierspeech_for_megatts/\d+_([a-z]+)_gt" + A, "machine", "vits-zero-shot", "hierspeechpp", "cartoon-\\1"),
        # VCTK zero-shot VC
        (r"^audio/GT_VCTK/(p\d+)_\d+" + A, "human", "human-read-studio", "vctk-gt", "\\1"),
        (r"^audio/4_zeroshot_vc/AutoVC/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "autovc", "\\1"),
        (r"^audio/4_zeroshot_vc/VoiceMixer/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "voicemixer", "\\1"),
        (r"^audio/4_zeroshot_vc/DiffVC/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "diffvc", "\\1"),
        (r"^audio/4_zeroshot_vc/diffhiervc/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "diff-hiervc", "\\1"),
        (r"^audio/4_zeroshot_vc/dddmvc/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "dddm-vc", "\\1"),
        (r"^audio/4_zeroshot_vc/YourTTS/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "yourtts-vc", "\\1"),
        (r"^audio/4_zeroshot_vc/HierVST/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "hiervst", "\\1"),
        (r"^audio/4_zeroshot_vc/hierspeechpp_(?:lt460|lt960|eng_kor)/p\d+_\d+_to_(p\d+)_\d+" + A, "machine", "voice-conversion", "hierspeechpp-vc", "\\1"),
        # speech super-resolution section (LibriTTS)
        (r"^audio/6_sr/gt_16k/(\d+)_[\d_]+" + A, "human", "human-read-audiobook", "libritts-gt", "\\1"),
        (r"^audio/6_sr/gt_(?:asr|ssr)/(\d+)_[\d_]+" + A, "machine", "resynthesis", "super-resolution-of-gt", "\\1"),
        (r"^audio/6_sr/syn_(?:voc|asr|ssr)/(\d+)_[\d_]+" + A, "machine", "vits-zero-shot", "hierspeechpp", "\\1"),
     ]},

    # ---------------- FlashSpeech demo page -- no licence file ----------------
    {"repo": "flashspeech/flashspeech.github.io", "commit": "dda371ecaea5f1335abbefcf4600a8e3b2e10c1b", "licence": "none found",
     "rules": [
        (r"^dataset/3s_ref/(\d+)" + A, "human", "human-read-audiobook", "librispeech-prompt", "fs-ls-\\1"),
        (r"^dataset/truth/(\d+)" + A, "human", "human-read-audiobook", "librispeech-gt", "fs-ls-\\1"),
        (r"^dataset/ns2/(\d+)" + A, "machine", "diffusion-tts", "naturalspeech2", "fs-ls-\\1"),
        (r"^dataset/valle/(\d+)" + A, "machine", "ar-codec-lm", "vall-e", "fs-ls-\\1"),
        (r"^dataset/CLAM/(\d+)" + A, "machine", "ar-codec-lm", "clam-tts", "fs-ls-\\1"),
        (r"^dataset/demo_s2/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-ls-\\1"),
        (r"^dataset_diverse_sample/demo_s3_02_diverse_v\d/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-div-\\1"),
        (r"^dataset_vb/ref/(\d+)" + A, "human", "human-read-audiobook", "librispeech-prompt", "fs-vb-\\1"),
        (r"^dataset_vb/vb/(\d+)" + A, "machine", "flow-matching", "voicebox", "fs-vb-\\1"),
        (r"^dataset_vb/ours/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-vb-\\1"),
        (r"^dataset_vc/(?:ori|ref)/(\d+)" + A, "human", "human-read-audiobook", "vc-source-or-reference", "fs-vc-\\1"),
        (r"^dataset_vc/dddm_vc/(\d+)" + A, "machine", "voice-conversion", "dddm-vc", "fs-vc-\\1"),
        (r"^dataset_vc/yourtts/(\d+)" + A, "machine", "voice-conversion", "yourtts-vc", "fs-vc-\\1"),
        (r"^dataset_vc/norm/(\d+)" + A, "machine", "voice-conversion", "flashspeech-vc", "fs-vc-\\1"),
        (r"^dataset_editing/before/(\d+)" + A, "human", "human-read-audiobook", "original-recording", "fs-edit-\\1"),
        # sections only in index_old.html (rebuttal)
        (r"^dataset_vctk/(?:ref|gt)/(\d+)" + A, "human", "human-read-studio", "vctk-gt-or-prompt", "fs-vctk-\\1"),
        (r"^dataset_vctk/pflow/(\d+)" + A, "machine", "flow-matching", "p-flow", "fs-vctk-\\1"),
        (r"^dataset_vctk/valle/(\d+)" + A, "machine", "ar-codec-lm", "vall-e", "fs-vctk-\\1"),
        (r"^dataset_vctk/ours/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-vctk-\\1"),
        (r"^dataset_emotion_maintenance/ref/(\d+)" + A, "human", "human-acted-emotional", "emotional-prompt", "fs-emo-\\1"),
        (r"^dataset_emotion_maintenance/pflow/(\d+)" + A, "machine", "flow-matching", "p-flow", "fs-emo-\\1"),
        (r"^dataset_emotion_maintenance/valle/(\d+)" + A, "machine", "ar-codec-lm", "vall-e", "fs-emo-\\1"),
        (r"^dataset_emotion_maintenance/ours/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-emo-\\1"),
        (r"^dataset_acoustic_maintenance/(?:ref|gt)/(\d+)" + A, "human", "human-read-audiobook", "noisy-prompt-or-gt", "fs-acou-\\1"),
        (r"^dataset_acoustic_maintenance/valle/(\d+)" + A, "machine", "ar-codec-lm", "vall-e", "fs-acou-\\1"),
        (r"^dataset_acoustic_maintenance/ours/(\d+)" + A, "machine", "diffusion-tts", "flashspeech", "fs-acou-\\1"),
     ]},

    # ---------------- Conan (streaming zero-shot VC) demo page -- no licence file ----------------
    {"repo": "User-tian/Conan.github.io", "commit": "44ebbe082626c8a991579f033a1891d54b54989b", "licence": "none found",
     "rules": [
        (r"^wavs/Origins/Source_Origin_(\d+)" + A, "human", "human-read-audiobook", "libritts-source", "conan-src-\\1"),
        (r"^wavs/Origins/(p\d+)_001_002_003" + A, "human", "human-read-studio", "vctk-target", "\\1"),
        (r"^wavs/Change_Spks/eg\d/(p\d+)_\d+_mic2" + A, "human", "human-read-studio", "vctk", "\\1"),
        (r"^wavs/Change_Spks/eg\d/(?:full|fastest)/(p\d+_\d+)_mic2_(p\d+_\d+)_mic2" + A, "machine", "voice-conversion", "conan", "\\1-x-\\2"),
        (r"^wavs/Change_Spks/eg2/(target|ref\d)" + A, "human", "human-read-studio", "vctk", "conan-eg2-\\1"),
        (r"^wavs/Change_Spks/eg2/(?:full|fastest)/gen(\d)" + A, "machine", "voice-conversion", "conan", "conan-eg2-ref\\1"),
        (r"^wavs/(p\d+)/Conan/\d+" + A, "machine", "voice-conversion", "conan", "\\1"),
        (r"^wavs/(p\d+)/Conan_fastest/\d+" + A, "machine", "voice-conversion", "conan-fastest", "\\1"),
        (r"^wavs/(p\d+)/StreamVC/\d+" + A, "machine", "voice-conversion", "streamvc", "\\1"),
        (r"^wavs/(p\d+)/QuickVC/\d+" + A, "machine", "voice-conversion", "quickvc", "\\1"),
        (r"^wavs/(p\d+)/DiffVC/\d+" + A, "machine", "voice-conversion", "diffvc", "\\1"),
        (r"^wavs/(p\d+)/VQMIVC/\d+" + A, "machine", "voice-conversion", "vqmivc", "\\1"),
        (r"^wavs/(p\d+)/PPGVC/\d+" + A, "machine", "voice-conversion", "ppgvc", "\\1"),
     ]},

    # ---------------- USDM (spoken-dialogue speech LM) demo page -- no licence file ----------------
    {"repo": "anonymoususdm/anonymoususdm.github.io", "commit": "416045230c3fb7f07b466e08951d470331916f48", "licence": "none found",
     "rules": [
        (r"^wavs/DailyTalk_(model_generated|ground_truth_text)/(\d+)_(user|ground_truth)" + A, "human", "human-conversational", "dailytalk", "usdm-dt-\\1-\\2-\\3"),
        (r"^wavs/DailyTalk_(model_generated|ground_truth_text)/(\d+)_usdm" + A, "machine", "speech-lm-dialogue", "usdm", "usdm-dt-\\1-\\2"),
        (r"^wavs/DailyTalk_(model_generated|ground_truth_text)/(\d+)_from_scratch" + A, "machine", "speech-lm-dialogue", "usdm-from-scratch", "usdm-dt-\\1-\\2"),
        (r"^wavs/DailyTalk_(model_generated|ground_truth_text)/(\d+)_speechgpt" + A, "machine", "speech-lm-dialogue", "speechgpt", "usdm-dt-\\1-\\2"),
        (r"^wavs/DailyTalk_(model_generated|ground_truth_text)/(\d+)_cascaded" + A, "machine", "other-neural", "cascaded-asr-llm-tts", "usdm-dt-\\1-\\2"),
        (r"^wavs/Expresso_model_generated/(\d+)_user" + A, "human", "human-conversational", "expresso", "usdm-ex-\\1-user"),
        (r"^wavs/Expresso_model_generated/(\d+)_usdm" + A, "machine", "speech-lm-dialogue", "usdm", "usdm-ex-\\1"),
        (r"^wavs/Fisher_model_generated/(\d+)_user" + A, "human", "human-telephone-conversational", "fisher", "usdm-fi-\\1-user"),
        (r"^wavs/Fisher_model_generated/(\d+)_usdm" + A, "machine", "speech-lm-dialogue", "usdm", "usdm-fi-\\1"),
        (r"^wavs/Multidialog_model_generated/(\d+)_user" + A, "human", "human-conversational", "multidialog", "usdm-md-\\1-user"),
        (r"^wavs/Multidialog_model_generated/(\d+)_(?:angry|disgusted|fearful|happy|neutral|sad|surprised)" + A, "machine", "speech-lm-dialogue", "usdm-emotion", "usdm-md-\\1"),
        (r"^wavs/Emotional_dataset_zero-shot/(\d+)_ref" + A, "human", "human-acted-emotional", "textrolspeech-emotional-ref", "usdm-emo-\\1"),
        (r"^wavs/Emotional_dataset_zero-shot/(\d+)_gen" + A, "machine", "speech-lm-dialogue", "usdm-zero-shot-tts", "usdm-emo-\\1"),
        (r"^wavs/unit-based-Voicebox/(\d+)_ground_truth" + A, "human", "human-conversational", "expresso-fisher-gigaspeech-gt", "usdm-vb-\\1"),
        (r"^wavs/unit-based-Voicebox/(\d+)_reconstructed_\d" + A, "machine", "resynthesis", "unit-voicebox-reconstruction", "usdm-vb-\\1"),
     ]},
]
