#!/usr/bin/env bash
# Sets up a virtual environment (.venv) and runs the test suite. Used by README and CI.
#   bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# the CPU build of torch first (an unpinned torch pulls a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev]"
exec .venv/bin/python -m pytest -q "$@"
