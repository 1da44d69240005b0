"""``python -m livejudge.judge.training.corpus build OUT_DIR | sources``: build the human/machine
speech training corpus (``livejudge.judge.training.corpus``). The flags are parsed here, in the
commands room (issue 21).
"""

from __future__ import annotations

import argparse
import sys

from livejudge.judge.training import corpus_dsp
from livejudge.judge.training.corpus import ALL_SOURCES, ENGINES, build


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m livejudge.judge.training.corpus",
                                 description="Build the human/machine speech training corpus.",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="render and collect clips into OUT_DIR",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    b.add_argument("out_dir")
    b.add_argument("--sources", default=",".join(ALL_SOURCES), help="comma-separated subset of sources")
    b.add_argument("--limit", type=int, default=None, help="max human clips and max clips per TTS voice")
    b.add_argument("--jobs", type=int, default=2, help="worker processes")
    b.add_argument("--max-voices", type=int, default=None, help="max voices per TTS engine")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--pkg-dir", default=None, help="folder of downloaded PyPI archives and Debian .debs with speech data")
    b.add_argument("--no-cache", action="store_true", help="render everything again (ignore OUT_DIR/.cache)")
    sub.add_parser("sources", help="list sources and whether they can run here")
    a = ap.parse_args(argv)
    if a.cmd == "sources":
        for name, e in ENGINES.items():
            why = e.available()
            print(f"{name:10s} {'ok' if not why else 'missing'}  {why or e.version()}")
        print(f"{'gsm':10s} {'ok' if corpus_dsp.gsm_available() else 'missing'}")
        print(f"{'codec2':10s} {'ok' if corpus_dsp.codec2_available() else 'missing'}")
        print(f"{'world':10s} {'ok' if corpus_dsp.world_available() else 'missing'}")
        return 0
    srcs = tuple(s.strip() for s in a.sources.split(",") if s.strip())
    try:
        build(a.out_dir, srcs, a.limit, a.jobs, a.seed, a.pkg_dir, a.max_voices, use_cache=not a.no_cache)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
