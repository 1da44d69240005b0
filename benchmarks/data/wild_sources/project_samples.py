# Candidate labelled speech clips from public TTS PROJECT repositories.
# Each regex is matched (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr)
# Evidence, licences, match counts and doubts: see candidates_proj.md

SOURCES = [
    # ------------------------------------------------------------------ YourTTS (gh-pages demo of the project repo)
    {"repo": "Edresson/YourTTS", "commit": "a74087534696806b0bedbf5fd4a4ab8bbb1bbc87",
     "licence": "CC-BY-NC-ND-4.0",
     "rules": [
         # final YourTTS model (Exp.4 + SCL, the MOS model): zero-shot TTS for unseen LibriTTS / VCTK speakers
         (r"^audios_demo/Exp\.4/model\+SCL_MOS/English_LibriTTS_SECS/(\d+)_\d+\.wav$",
          "machine", "vits-zero-shot", "YourTTS", "libritts-\\1"),
         (r"^audios_demo/Exp\.4/model\+SCL_MOS/English_VCTK_SECS/(p\d+)_\d+\.wav$",
          "machine", "vits-zero-shot", "YourTTS", "vctk-\\1"),
         # Exp.5: zero-shot and 1-minute fine-tuned YourTTS for two Common Voice English speakers
         (r"^audios_demo/Exp\.5/English/.*EN-F\.wav_\d+\.wav$",
          "machine", "vits-zero-shot", "YourTTS", "yourtts-cv-EN-F"),
         (r"^audios_demo/Exp\.5/English/.*EN-M\.wav_\d+\.wav$",
          "machine", "vits-zero-shot", "YourTTS", "yourtts-cv-EN-M"),
         # Exp.6: YourTTS zero-shot voice conversion, English->English; speaker = target voice
         (r"^audios_demo/Exp\.6/EN-EN/[FM]-[FM]/generated/p\d+_to_(p\d+)_sample_p\d+_\d+\.wav$",
          "machine", "voice-conversion", "YourTTS-VC", "vctk-\\1"),
         # human ground truth / reference recordings
         (r"^audios_demo/GT/Libri-TTS/(\d+)_[mf]/[^/]+\.wav$",
          "human", "human-read-audiobook", "LibriTTS-GT", "libritts-\\1"),
         (r"^audios_demo/GT/VCTK/(p\d+)/[^/]+\.wav$",
          "human", "human-read-studio", "VCTK-GT", "vctk-\\1"),
         (r"^audios_demo/reference/(\d+)_\d+_\d+_\d+\.wav$",
          "human", "human-read-audiobook", "YourTTS-prompt", "libritts-\\1"),
         (r"^audios_demo/reference/(p\d+)_\d+\.wav$",
          "human", "human-read-studio", "YourTTS-prompt", "vctk-\\1"),
         (r"^audios_demo/Exp\.6/EN-EN/[FM]-[FM]/reference/(p\d+)_\d+\.wav$",
          "human", "human-read-studio", "YourTTS-VC-prompt", "vctk-\\1"),
         (r"^audios_demo/GT/Speaker_Adaptation/female-en-\d+/wavs?/[^/]+\.wav$",
          "human", "human-read-studio", "CommonVoice-GT", "yourtts-cv-EN-F"),
         (r"^audios_demo/GT/Speaker_Adaptation/male-en-\d+/wavs?/[^/]+\.wav$",
          "human", "human-read-studio", "CommonVoice-GT", "yourtts-cv-EN-M"),
         (r"^audios_demo/reference/EN-(F|M)\.wav$",
          "human", "human-read-studio", "YourTTS-prompt", "yourtts-cv-EN-\\1"),
     ]},

    # ------------------------------------------------------------------ Grad-TTS (huawei-noah/Speech-Backbones)
    {"repo": "huawei-noah/Speech-Backbones", "commit": "7782c7a223dd25df47b4538698ee9756774e2924",
     "licence": "MIT",
     "rules": [
         (r"^Grad-TTS/out/sample_(\d+)\.wav$",
          "machine", "diffusion-tts", "Grad-TTS", "LJSpeech"),
         (r"^DiffVC/example/(\d+)_\d+_\d+_\d+\.wav$",
          "human", "human-read-audiobook", "DiffVC-example-input", "libritts-\\1"),
     ]},

    # ------------------------------------------------------------------ FastSpeech2 (ming024)
    {"repo": "ming024/FastSpeech2", "commit": "d4e79eb52e8b01d24703b2dfc0385544092958f3",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech/LJ\d+-\d+_synthesized\.wav$",
          "machine", "nar-mel-neural-vocoder", "FastSpeech2-ming024", "LJSpeech"),
         (r"^demo/LibriTTS/(\d+)_\d+_\d+_\d+_synthesized\.wav$",
          "machine", "nar-mel-neural-vocoder", "FastSpeech2-ming024", "libritts-\\1"),
         (r"^demo/LJSpeech/LJ\d+-\d+_ground-truth\.wav$",
          "human", "human-read-audiobook", "LJSpeech-GT", "LJSpeech"),
         (r"^demo/LibriTTS/(\d+)_\d+_\d+_\d+_ground-truth\.wav$",
          "human", "human-read-audiobook", "LibriTTS-GT", "libritts-\\1"),
     ]},

    # ------------------------------------------------------------------ fish-speech, early 2023 version (BSD-3 at that commit)
    {"repo": "fishaudio/fish-speech", "commit": "79eeafcf2dd231713f6a892c429c726508256eeb",
     "licence": "BSD-3-Clause",
     "rules": [
         (r"^docs/assets/audios/(7)_output\.wav$",
          "machine", "ar-codec-lm", "fish-speech-v0.1", "libritts-200"),
         (r"^docs/assets/audios/(8|9)_output\.wav$",
          "machine", "ar-codec-lm", "fish-speech-v0.1", "fish-v01-random-\\1"),
         (r"^docs/assets/audios/(7)_input\.wav$",
          "human", "human-read-audiobook", "fish-speech-prompt", "libritts-200"),
     ]},

    # ------------------------------------------------------------------ fish-speech / OpenAudio S1, Sept 2025 (Apache-2.0 at that commit)
    {"repo": "fishaudio/fish-speech", "commit": "c0bbe329b9c9c7dfca78f058c61323da65d0d204",
     "licence": "Apache-2.0",
     "rules": [
         (r"^docs/assets/audio/en/(angry|audio|audio2|laugh|shout)\.wav$",
          "machine", "ar-codec-lm", "OpenAudio-S1 (fish-speech)", "fish-s1-\\1"),
     ]},

    # ------------------------------------------------------------------ TensorFlowTTS (gh-pages of the project repo)
    {"repo": "TensorSpeech/TensorFlowTTS", "commit": "aa32b26239365d2beeea32b2432faac3fcb2d2b6",
     "licence": "Apache-2.0",
     "rules": [
         (r"^wavs/ljspeech/tacotron2/(melgan|melgan\.stft|mb\.melgan)/[^/]+\.wav$",
          "machine", "ar-mel-neural-vocoder", "TFTTS-Tacotron2", "LJSpeech"),
         (r"^wavs/ljspeech/compared_fs2/tacotron2/\d+\.wav$",
          "machine", "ar-mel-neural-vocoder", "TFTTS-Tacotron2", "LJSpeech"),
         (r"^wavs/ljspeech/fs_v\d/mb\.melgan/[^/]+\.wav$",
          "machine", "nar-mel-neural-vocoder", "TFTTS-FastSpeech+MB-MelGAN", "LJSpeech"),
         (r"^wavs/ljspeech/compared_fs2/fastspeech/\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "TFTTS-FastSpeech", "LJSpeech"),
         (r"^wavs/ljspeech/compared_fs2/fastspeech2/\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "TFTTS-FastSpeech2", "LJSpeech"),
         # vocoder copy-synthesis from ground-truth mels
         (r"^wavs/ljspeech/(melgan|melgan\.stft|mb\.melgan)/LJ\d+-\d+\.wav$",
          "machine", "other-neural", "TFTTS-MelGAN-family-copysynth", "LJSpeech"),
         (r"^wavs/ljspeech/gt/LJ\d+-\d+\.wav$",
          "human", "human-read-audiobook", "LJSpeech-GT", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ keonlee9420 implementations (all MIT, demo/ folders)
    {"repo": "keonlee9420/Comprehensive-Transformer-TTS", "commit": "dca252cae50a18464ce2410aa85a21c557c72d7a",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech_v0\.2\.1/900000/LJ\d+-\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "Comprehensive-Transformer-TTS", "LJSpeech"),
         (r"^demo/VCTK_v0\.2\.1/900000/(p\d+|s5)-\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "Comprehensive-Transformer-TTS", "vctk-\\1"),
     ]},
    {"repo": "keonlee9420/PortaSpeech", "commit": "51bd8277bdf5974726cf8613b553b548ab17f65e",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech/(normal|small)/\d+k/[^/]+\.wav$",
          "machine", "nar-mel-neural-vocoder", "PortaSpeech", "LJSpeech"),
     ]},
    {"repo": "keonlee9420/DiffGAN-TTS", "commit": "bd312c3a0e7f02d3ce379aef11061f93105deb74",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech/(naive|shallow)_diffusion_\d+k/LJ\d+-\d+\.wav$",
          "machine", "diffusion-tts", "DiffGAN-TTS", "LJSpeech"),
         (r"^demo/VCTK/(?:naive|shallow)_diffusion_\d+k/(p\d+)-\d+\.wav$",
          "machine", "diffusion-tts", "DiffGAN-TTS", "vctk-\\1"),
     ]},
    {"repo": "keonlee9420/WaveGrad2", "commit": "e38a0c465e69ac0d5fb79b7a89541af4359ab7b9",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech/\d+/[^/]+\.wav$",
          "machine", "diffusion-tts", "WaveGrad2", "LJSpeech"),
     ]},
    {"repo": "keonlee9420/StyleSpeech", "commit": "d11cb07b3e891a18c2a6d1e80fa0f18a389de446",
     "licence": "MIT",
     "rules": [
         # results/<i>_<text>.wav was synthesised with references/<i>_<spk>_... as style reference
         (r"^demo/LibriTTS/results/0_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-19"),
         (r"^demo/LibriTTS/results/1_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-26"),
         (r"^demo/LibriTTS/results/2_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-27"),
         (r"^demo/LibriTTS/results/3_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-32"),
         (r"^demo/LibriTTS/results/4_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-39"),
         (r"^demo/LibriTTS/results/5_[^/]+\.wav$", "machine", "nar-mel-neural-vocoder", "Meta-StyleSpeech", "libritts-40"),
         (r"^demo/LibriTTS/references/\d+_(\d+)_\d+_\d+_\d+\.wav$",
          "human", "human-read-audiobook", "Meta-StyleSpeech-prompt", "libritts-\\1"),
     ]},
    {"repo": "keonlee9420/Comprehensive-Tacotron2", "commit": "1eff7f08c41a2127bbe300b6d66ce5c966422b25",
     "licence": "MIT",
     "rules": [
         (r"^demo/LJSpeech/380000/LJ\d+-\d+\.wav$",
          "machine", "ar-mel-neural-vocoder", "Comprehensive-Tacotron2", "LJSpeech"),
         # file name = <val-basename>_<speaker_id>; all carry _p225 -> grouped under one speaker (conservative)
         (r"^demo/VCTK/535000/(?:p\d+|s5)_\d+_(p\d+)\.wav$",
          "machine", "ar-mel-neural-vocoder", "Comprehensive-Tacotron2", "vctk-\\1"),
     ]},

    # ------------------------------------------------------------------ Mimic 3 voice samples (VITS-based)
    {"repo": "MycroftAI/mimic3-voices", "commit": "b239a9084e21fbaa7ac78ea6e31f5de1c31c8f42",
     "licence": "CC-BY-SA-4.0",
     "rules": [
         (r"^samples/en_US/vctk_low/sample_(p\d+|s5)\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "vctk-\\1"),
         (r"^samples/en_US/cmu-arctic_low/sample_([a-z]+)\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "cmuarctic-\\1"),
         (r"^samples/en_US/hifi-tts_low/sample_(\d+)\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "hifitts-\\1"),
         (r"^samples/en_US/m-ailabs_low/sample_([a-z_]+)\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "mailabs-\\1"),
         (r"^samples/en_US/ljspeech_low/sample\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "LJSpeech"),
         (r"^samples/en_UK/(apope)_low/sample\.wav$",
          "machine", "gan-e2e-vits", "Mimic3", "mimic3-\\1"),
     ]},

    # ------------------------------------------------------------------ MARS5-TTS (gh-pages of the project repo)
    {"repo": "Camb-ai/MARS5-TTS", "commit": "52601616748fa396ea2f377ee400f086a27371db",
     "licence": "AGPL-3.0",
     "rules": [
         (r"^demo_egs/(eg\d+)_(?!ref)[^/]+\.(?:flac|wav)$",
          "machine", "ar-codec-lm", "MARS5", "mars5-\\1"),
         (r"^demo_egs/comparisons/(cant_anymore|seen_mars)/mars5?\.flac$",
          "machine", "ar-codec-lm", "MARS5", "mars5-cmp-\\1"),
         (r"^demo_egs/comparisons/(cant_anymore|seen_mars)/metavoice\.wav$",
          "machine", "ar-codec-lm", "MetaVoice-1B", "mars5-cmp-\\1"),
         (r"^demo_egs/comparisons/(cant_anymore|seen_mars)/el\.wav$",
          "machine", "other-neural", "ElevenLabs", "mars5-cmp-\\1"),
         (r"^demo_egs/(eg\d+)_ref\.(?:flac|wav|mp3)$",
          "human", "human-acted-emotional", "MARS5-prompt", "mars5-\\1"),
         (r"^demo_egs/comparisons/(cant_anymore|seen_mars)/reference\.wav$",
          "human", "human-acted-emotional", "MARS5-prompt", "mars5-cmp-\\1"),
     ]},

    # ------------------------------------------------------------------ FastSpeech (xcmyz)
    {"repo": "xcmyz/FastSpeech", "commit": "1e1a61b5015c951caa551b7fab4080339d697c7c",
     "licence": "MIT",
     "rules": [
         (r"^sample/135000_\d+_waveglow\.wav$",
          "machine", "nar-mel-neural-vocoder", "FastSpeech-xcmyz+WaveGlow", "LJSpeech"),
         (r"^sample/135000_\d+\.wav$",
          "machine", "other-neural", "FastSpeech-xcmyz+GriffinLim", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ VITS2 (p0p4k)
    {"repo": "p0p4k/vits2_pytorch", "commit": "1f4f3790568180f8dec4419d5cad5d0877b034bb",
     "licence": "MIT",
     "rules": [
         (r"^resources/test\.wav$",
          "machine", "gan-e2e-vits", "VITS2-p0p4k", "LJSpeech"),
         (r"^resources/vctk(?:_onnx)?_test\.wav$",
          "machine", "gan-e2e-vits", "VITS2-p0p4k", "vits2-vctk-sid4"),
         (r"^resources/sid_src_3_to_tgt_(\d)\.wav$",
          "machine", "voice-conversion", "VITS2-p0p4k-VC", "vits2-vctk-sid\\1"),
     ]},

    # ------------------------------------------------------------------ Matcha-TTS (docs branch of the project repo: listening-test stimuli)
    {"repo": "shivammehta25/Matcha-TTS", "commit": "5a7f220662a971190c942d4ff62a08afe2ac30e6",
     "licence": "MIT",
     "rules": [
         (r"^stimuli/(?:sample_from_test|number_of_ode_solver)/MAT-\d+_\d+\.wav$",
          "machine", "flow-matching", "Matcha-TTS", "LJSpeech"),
         (r"^stimuli/(?:sample_from_test|number_of_ode_solver)/GCFM-\d+_\d+\.wav$",
          "machine", "flow-matching", "GradTTS-CFM (Matcha baseline)", "LJSpeech"),
         (r"^stimuli/(?:sample_from_test|number_of_ode_solver)/GRAD-\d+_\d+\.wav$",
          "machine", "diffusion-tts", "Grad-TTS", "LJSpeech"),
         (r"^stimuli/sample_from_test/FS2_\d+\.wav$",
          "machine", "nar-mel-neural-vocoder", "FastSpeech2", "LJSpeech"),
         (r"^stimuli/sample_from_test/VITS_\d+\.wav$",
          "machine", "gan-e2e-vits", "VITS", "LJSpeech"),
         (r"^stimuli/sample_from_test/VOC_\d+\.wav$",
          "machine", "other-neural", "HiFi-GAN copy-synthesis (vocoded GT)", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ VALL-E reimplementation (lifeiteng)
    {"repo": "lifeiteng/vall-e", "commit": "9c69096d603ce13174fb5cb025f185e2e9b36ac7",
     "licence": "Apache-2.0",
     "rules": [
         (r"^egs/ljspeech/demos/\d+\.wav$",
          "machine", "ar-codec-lm", "VALL-E-lifeiteng", "LJSpeech"),
         (r"^egs/ljspeech/prompts/LJ\d+-\d+_24K\.wav$",
          "human", "human-read-audiobook", "VALL-E-prompt", "LJSpeech"),
         (r"^egs/libritts/prompts/(\d+)_\d+_\d+_\d+\.wav$",
          "human", "human-read-audiobook", "VALL-E-prompt", "libritts-\\1"),
     ]},
    {"repo": "lifeiteng/vall-e", "commit": "cd8caa7fcd2253818e2a885635c026ff738f3fe0",
     "licence": "Apache-2.0",
     "rules": [
         # README at this commit: both made with --audio-prompts ./prompts/61_70970_000007_000001.wav (nano config)
         (r"^egs/libritts/infer/demo_vall[ef]_PostNorm_epoch10/\d+\.wav$",
          "machine", "ar-codec-lm", "VALL-E/VALL-F-nano-lifeiteng", "libritts-61"),
         (r"^egs/libritts/prompts/(61)_\d+_\d+_\d+\.wav$",
          "human", "human-read-audiobook", "VALL-E-prompt", "libritts-\\1"),
     ]},

    # ------------------------------------------------------------------ FastSpeech2 (rishikksh20)
    {"repo": "rishikksh20/FastSpeech2", "commit": "b0e5b931e1f66a3594e03aa5aa7bfc511eaff23c",
     "licence": "Apache-2.0",
     "rules": [
         (r"^sample/sample_\d+k_(?:melgan|waveglow)\.wav$",
          "machine", "nar-mel-neural-vocoder", "FastSpeech2-rishikksh20", "LJSpeech"),
         (r"^sample/sample2?_58k\.wav$",
          "machine", "other-neural", "FastSpeech2-rishikksh20 (vocoder unstated)", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ first commit of mozilla/TTS (now coqui-ai/TTS): Tacotron + Griffin-Lim
    {"repo": "coqui-ai/TTS", "commit": "7f0ce12ed18858effb9e7a16de01d5a42f9b76c5",
     "licence": "none found",
     "rules": [
         (r"^samples/result_60000_\d+\.wav$",
          "machine", "other-neural", "Tacotron1-GriffinLim (early mozilla/TTS)", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ WaveGrad vocoder (ivanvovk)
    {"repo": "ivanvovk/WaveGrad", "commit": "721c37c216132a2ef0a16adc38439f993998e0b7",
     "licence": "BSD-3-Clause",
     "rules": [
         (r"^generated_samples/\d+iters\.wav$",
          "machine", "other-neural", "WaveGrad-vocoder (diffusion vocoder, LJSpeech mels)", "LJSpeech"),
     ]},

    # ------------------------------------------------------------------ Kyubyong/tacotron sanity-check samples (Tacotron1 + Griffin-Lim)
    {"repo": "Kyubyong/tacotron", "commit": "bdab7f64b0441926ad9947126d08e60d25ba5bda",
     "licence": "Apache-2.0",
     "rules": [
         (r"^samples_s/model_epoch_36_gs_36000_\d+\.wav$",
          "machine", "other-neural", "Tacotron1-GriffinLim (Kyubyong)", "kyubyong-audiotreasure-bible-reader"),
     ]},
]
