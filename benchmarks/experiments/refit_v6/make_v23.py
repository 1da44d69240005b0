"""Build v23 (README.md, "v23"): the shipped 0.3.0 head with both of its tiny frame networks kept and
v22's Whisper base network added as a third member (each member's P weighted 1/3).

Usage: python make_v23.py OUT_DIR BASE_CHECKPOINT.pt [--version V] [--from DIR]

Built by ``make_v22.build`` with ``keep_tiny=2``: 0.2.0's linear head and 0.3.0's members m0 and m1
copied unchanged (digests checked), the base checkpoint exported as m2, the config's readout record
updated and the sealed validity and wild caveat cleared.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_v22 import main as make_v22_main  # noqa: E402


def main(argv=None) -> int:
    return make_v22_main(argv, keep_tiny=2, rule_name="v23", doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
