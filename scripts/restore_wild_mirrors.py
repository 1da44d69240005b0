"""Make the bare git mirrors that the wild-corpus gatherers read, from the stored manifests.

The wild corpus (docs/corpus.md, "Paths in recorded commands") is gathered by
``scripts/gather_wild_corpus*.py`` from commit-pinned snapshots of public repositories, kept as
bare git directories under ``MIRROR/<owner>+<name>/repo`` (``gather_wild_corpus.MIRROR``). A
development session made them with its ``fetch`` tool. Anyone with ``git`` and network access can
make the same ones with this script: it reads every ``(repo, commit)`` that the stored manifests
(``benchmarks/data/wild_manifest*.csv``) name, makes a bare clone of each repository, checks that
every recorded commit is in it, and pins the mirror's HEAD to the commit where the manifests name
only one (five sources ask the gatherer for ``HEAD``, which must be the commit they were gathered
at). Reserved repositories (``gather_wild_corpus.RESERVED``) are refused, never cloned.

    python scripts/restore_wild_mirrors.py [--mirror DIR] [--dry-run] [--url-template URL]

Then run the gatherers (``python scripts/gather_wild_corpus.py``, ``..._2.py`` …) to write the
clips and manifests; each regathered manifest should equal its stored copy row for row.
Exit codes: 0 every mirror holds its commits; 1 some repository or commit could not be had (each
named on stderr); 2 bad usage or a reserved repository in a manifest.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from gather_wild_corpus import MIRROR, RESERVED  # noqa: E402  (the gatherers' own paths and list)

DEFAULT_MANIFESTS = sorted((ROOT / "benchmarks" / "data").glob("wild_manifest*.csv"))


def commits_by_repo(manifests: list[Path]) -> dict[str, set[str]]:
    """``{owner/name: {commit, ...}}`` over the manifests' rows (columns ``repo``, ``commit``).

    Raises:
        ValueError: a row without a repository or a full 40-hex commit, naming the file and row.
    """
    out: dict[str, set[str]] = defaultdict(set)
    for m in manifests:
        with open(m, newline="", encoding="utf-8") as f:
            for i, row in enumerate(csv.DictReader(f), 2):
                repo, commit = (row.get("repo") or "").strip(), (row.get("commit") or "").strip()
                if not repo or len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit.lower()):
                    raise ValueError(f"{m}:{i}: a row needs repo and a 40-hex commit, got {repo!r} {commit!r}")
                out[repo].add(commit.lower())
    return dict(out)


def _git(gdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={gdir}", *args], capture_output=True, text=True)


def restore(repos: dict[str, set[str]], mirror: Path, url_template: str, *, dry_run: bool = False,
            log=print) -> list[str]:
    """Clone and pin every repository of ``repos`` under ``mirror``; returns the problems (one line
    each: a clone that failed, a commit not in its repository). A mirror that exists is reused
    (only its missing commits are fetched).

    Raises:
        ValueError: a reserved repository in ``repos`` (nothing is cloned then).
    """
    reserved = sorted(r for r in repos if r.lower() in RESERVED)
    if reserved:
        raise ValueError(f"reserved repositories in the manifests, never to be fetched: {', '.join(reserved)}")
    problems = []
    for repo in sorted(repos):
        gdir = mirror / repo.replace("/", "+") / "repo"
        url = url_template.format(repo=repo)
        if dry_run:
            pin = f", HEAD pinned to {next(iter(repos[repo]))[:8]}" if len(repos[repo]) == 1 else ", HEAD left as cloned"
            log(f"{repo}: {'have' if gdir.exists() else 'clone ' + url} → {gdir}, commits "
                f"{', '.join(sorted(c[:8] for c in repos[repo]))}{pin}")
            continue
        if not gdir.exists():
            gdir.parent.mkdir(parents=True, exist_ok=True)
            r = subprocess.run(["git", "clone", "--bare", "--quiet", url, str(gdir)], capture_output=True, text=True)
            if r.returncode:
                problems.append(f"{repo}: git clone {url} failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
                continue
        missing = []
        for c in sorted(repos[repo]):
            if _git(gdir, "cat-file", "-e", f"{c}^{{commit}}").returncode:
                _git(gdir, "fetch", "--quiet", url, c)  # a commit no branch holds any more
                if _git(gdir, "cat-file", "-e", f"{c}^{{commit}}").returncode:
                    missing.append(c)
        if missing:
            problems.append(f"{repo}: commit(s) not in the repository: {', '.join(missing)}")
            continue
        if len(repos[repo]) == 1:  # a source that asks for HEAD gets the commit it was gathered at
            (c,) = repos[repo]
            _git(gdir, "update-ref", "--no-deref", "HEAD", c)
        log(f"{repo}: ok ({len(repos[repo])} commit(s))")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path, default=MIRROR, help="where the gatherers read mirrors (default: %(default)s)")
    ap.add_argument("--manifest", type=Path, nargs="+", default=DEFAULT_MANIFESTS,
                    help="stored manifests naming repo and commit per clip (default: benchmarks/data/wild_manifest*.csv)")
    ap.add_argument("--url-template", default="https://github.com/{repo}.git",
                    help="clone URL, {repo} = owner/name (default: %(default)s)")
    ap.add_argument("--dry-run", action="store_true", help="list what would be cloned; clone nothing")
    args = ap.parse_args(argv)
    try:
        repos = commits_by_repo(args.manifest)
        problems = restore(repos, args.mirror, args.url_template, dry_run=args.dry_run)
    except (OSError, ValueError) as exc:
        print(f"restore_wild_mirrors: {exc}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"restore_wild_mirrors: {p}", file=sys.stderr)
    print(f"{len(repos)} repositories, {sum(len(c) for c in repos.values())} commits; "
          f"{len(problems)} problem(s)" + (" (dry run)" if args.dry_run else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
