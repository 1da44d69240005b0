"""scripts/restore_wild_mirrors.py: the bare mirrors the wild-corpus gatherers read, rebuilt from
the stored manifests' (repo, commit) pairs (docs/corpus.md, "Paths in recorded commands")."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import restore_wild_mirrors as rw  # noqa: E402


def _git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _repo(tmp_path: Path, name: str) -> tuple[Path, list[str]]:
    """A local repository with two commits; returns its path and the commits, oldest first."""
    r = tmp_path / "remote" / name
    r.mkdir(parents=True)
    _git("init", "-q", cwd=r)
    commits = []
    for i in range(2):
        (r / "a.wav").write_bytes(bytes([i]) * 10)
        _git("add", "a.wav", cwd=r)
        _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{i}", cwd=r)
        commits.append(_git("rev-parse", "HEAD", cwd=r))
    return r, commits


def _manifest(path: Path, rows: list[tuple[str, str]]) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "label", "repo", "commit"])
        for repo, commit in rows:
            w.writerow(["x.wav", "machine", repo, commit])
    return path


def test_mirrors_are_cloned_and_pinned_to_the_recorded_commit(tmp_path):
    remote, commits = _repo(tmp_path, "demo")
    m = _manifest(tmp_path / "m.csv", [("someone/demo", commits[0])])
    mirror = tmp_path / "mirror"
    url = f"file://{tmp_path}/remote/{{name}}"
    code = rw.main(["--mirror", str(mirror), "--manifest", str(m), "--url-template", url.replace("{name}", "demo")])
    assert code == 0
    gdir = mirror / "someone+demo" / "repo"
    # HEAD is the commit the manifest names, not the remote's newer HEAD (a source asking for HEAD)
    assert _git(f"--git-dir={gdir}", "rev-parse", "HEAD") == commits[0] != commits[1]
    # the dry run says which mirrors get HEAD pinned (one recorded commit) and which keep it
    two = _manifest(tmp_path / "two.csv", [("someone/demo", commits[0]), ("someone/demo", commits[1])])
    logs: list[str] = []
    rw.restore(rw.commits_by_repo([m]), mirror, "file:///x/{repo}", dry_run=True, log=logs.append)
    assert logs[-1].endswith(f"HEAD pinned to {commits[0][:8]}") and logs[-1].startswith("someone/demo: have")
    rw.restore(rw.commits_by_repo([two]), mirror, "file:///x/{repo}", dry_run=True, log=logs.append)
    assert logs[-1].endswith("HEAD left as cloned")
    # a second run reuses the mirror
    assert rw.main(["--mirror", str(mirror), "--manifest", str(m), "--url-template", "file:///nowhere/{repo}"]) == 0


def test_a_missing_commit_or_repository_is_named_and_exits_1(tmp_path, capsys):
    _repo(tmp_path, "demo")
    m = _manifest(tmp_path / "m.csv", [("someone/demo", "0" * 40), ("someone/gone", "1" * 40)])
    code = rw.main(["--mirror", str(tmp_path / "mirror"), "--manifest", str(m),
                    "--url-template", f"file://{tmp_path}/remote/demo"])
    err = capsys.readouterr().err
    assert code == 1 and "someone/demo: commit(s) not in the repository: " + "0" * 40 in err


def test_a_reserved_repository_is_refused_before_anything_is_cloned(tmp_path, capsys):
    m = _manifest(tmp_path / "m.csv", [("someone/demo", "2" * 40), ("neonbjb/tortoise-tts", "3" * 40)])
    assert rw.main(["--mirror", str(tmp_path / "mirror"), "--manifest", str(m)]) == 2
    assert "reserved repositories in the manifests, never to be fetched: neonbjb/tortoise-tts" in capsys.readouterr().err
    assert not (tmp_path / "mirror").exists()
    bad = tmp_path / "bad.csv"
    bad.write_text("repo,commit\nsomeone/x,HEAD\n")
    with pytest.raises(ValueError, match="40-hex commit"):
        rw.commits_by_repo([bad])


def test_the_stored_manifests_name_no_reserved_repository():
    repos = rw.commits_by_repo(rw.DEFAULT_MANIFESTS)
    assert len(repos) > 50 and not [r for r in repos if r.lower() in rw.RESERVED]
