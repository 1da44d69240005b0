#!/usr/bin/env bash
# Sets up a virtual environment (.venv: the CPU build of torch, then livejudge with the dev extra)
# and runs the tests. Used by README and CI.
#   bash scripts/test.sh [pytest args...]        the fast loop: every test not marked slow
#   bash scripts/test.sh --all [pytest args...]  every test, slow ones too (what .ci/run runs)
# Slow = real time, subprocesses, corpus builds (@pytest.mark.slow); docs/development.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
select=(-m "not slow")
if [ "${1:-}" = "--all" ]; then
  shift
  select=()
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# the CPU build of torch first (an unpinned torch pulls a multi-GB CUDA build)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev]"
exec .venv/bin/python -m pytest -q "${select[@]}" "$@"
