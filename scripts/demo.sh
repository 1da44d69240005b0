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
if [ ! -x .venv/bin/python ]; then
  echo "demo.sh: creating the virtual environment .venv" >&2
  "$PY" -m venv .venv
fi
# no torch: the core and the CPU judge run on numpy (torch is the [train] and [gpu] extras).
# Install only when .venv is new or pyproject.toml (the dependencies) changed since the last
# install: a stamp file in .venv holds the checksum it was installed from.
STAMP=.venv/.livejudge-installed
want="$(cksum < pyproject.toml 2>/dev/null || echo no-pyproject) [pipecat,asr,report]"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  echo "demo.sh: installing livejudge[pipecat,asr,report] into .venv (new .venv or pyproject.toml changed; about a minute)..." >&2
  .venv/bin/python -m pip install -q -e ".[pipecat,asr,report]"
  printf '%s\n' "$want" > "$STAMP"
else
  echo "demo.sh: .venv is up to date (pyproject.toml unchanged since the last install); starting the demo" >&2
fi
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
