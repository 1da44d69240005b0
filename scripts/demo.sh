#!/usr/bin/env bash
# Sets up a virtual environment (.venv) and runs the main job: a live judged conversation
# with the example voice agent (livejudge demo), on the embedded CPU judge, with transcripts
# for the text dimensions (the asr extra ships a small English Whisper model).
#   bash scripts/demo.sh [livejudge demo args...]
# livejudge is installed into .venv, not on your PATH: the script ends by saying how to use it.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# no torch: the core and the CPU judge run on numpy (torch is the [train] and [gpu] extras)
.venv/bin/python -m pip install -q -e ".[pipecat,asr,report]"
code=0
.venv/bin/livejudge demo "$@" || code=$?
cat >&2 <<MSG

livejudge is installed in $(pwd)/.venv. To use it from this shell, activate that environment:

    . .venv/bin/activate
    livejudge score examples/example_call.wav --report report.html
    python examples/pipecat_embed.py

(or call .venv/bin/livejudge and .venv/bin/python directly, without activating)
MSG
exit "$code"
