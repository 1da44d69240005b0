"""``python -m livejudge.judge.training.prior [OUT_DIR] [--fit]``: write the acoustic backbone's
documented-prior head (or its fitted variant). The flags are parsed here, in the commands room;
``livejudge.judge.training.prior`` builds the heads (issue 21).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from livejudge.judge.model.head import save_head
from livejudge.judge.training.prior import DEFAULT_DIR, fitted_head, write_prior


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m livejudge.judge.training.prior",
                                 description="Write the documented-prior head of the acoustic backbone.")
    ap.add_argument("out_dir", nargs="?", default=str(DEFAULT_DIR), help="output directory (default: %(default)s)")
    ap.add_argument("--fit", action="store_true",
                    help="write the variant whose classifier is fitted on the seen clips (needs an OUT_DIR)")
    args = ap.parse_args(argv)
    if args.fit:
        if Path(args.out_dir).resolve() == DEFAULT_DIR.resolve():
            ap.error("--fit needs an OUT_DIR other than the shipped prior's directory")
        head, cfg = fitted_head()
        p = save_head(args.out_dir, head, cfg)
        print(f"wrote {p} (provenance: trained classifier on the prior's ODL)")
        return 0
    p = write_prior(args.out_dir)
    print(f"wrote {p} (provenance: prior, not trained)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
