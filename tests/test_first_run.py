"""First-run defects a new user hit (issue 12 item 6), each pinned by a test."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]


def test_empty_wav_is_a_one_line_error_exit_2(tmp_path):
    p = tmp_path / "empty.wav"
    sf.write(str(p), np.zeros((0, 2), dtype="float32"), 16000)
    out = subprocess.run([sys.executable, "-m", "livejudge.commands.cli", "score", str(p), "--judge", "none"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no audio samples" in lines[0] and "Traceback" not in out.stderr


def test_barge_in_count_agrees_with_the_list():
    from livejudge.session import Session, SessionConfig, stream_call
    from livejudge.testing.dialogues import example_dialogue

    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every"))
    stream_call(s, d.call)
    r = s.close()
    sm = r["summary"]
    assert sm["barge_in_count"] == len(r["barge_ins"]) == len(d.truth.barge_ins) == 3
    assert sm["user_barge_in_count"] == sum(b["by"] == "user" for b in r["barge_ins"]) == 2
    # the agent's one start inside user speech: the user ends 0.3 s later, within the verdicts'
    # talk_over_grace_s, so it is an early start (their human-like outcome), not a talk-over
    assert sum(b["by"] == "agent" for b in r["barge_ins"]) == 1
    assert sm["agent_early_start_count"] == sm["verdict_talk_over_early_start_count"] == 1
    assert sm["agent_talk_over_count"] == sm["verdict_talk_over_talk_over_count"] == 0


def _fake_project(tmp_path: Path, demo_exit: int) -> Path:
    proj = tmp_path / "proj"
    (proj / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "demo.sh", proj / "scripts" / "demo.sh")
    bin_ = proj / ".venv" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "python").write_text("#!/bin/sh\nexit 0\n")  # pip installs become no-ops
    (bin_ / "livejudge").write_text(f"#!/bin/sh\necho \"demo $*\"\nexit {demo_exit}\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    return proj


@pytest.mark.parametrize("demo_exit", [0, 1])
def test_demo_script_ends_with_how_to_use_the_environment(tmp_path, demo_exit):
    proj = _fake_project(tmp_path, demo_exit)
    out = subprocess.run(["bash", str(proj / "scripts" / "demo.sh"), "--json", "x.json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == demo_exit  # the demo's own exit code is kept
    assert "demo --json x.json" in out.stdout
    assert ". .venv/bin/activate" in out.stderr and "python examples/pipecat_embed.py" in out.stderr
    assert ".venv/bin/livejudge" in out.stderr  # the no-activation alternative


def test_package_points_to_nothing_outside_the_project():
    offenders = []
    for p in list((ROOT / "livejudge").rglob("*.py")) + list((ROOT / "examples").rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        if "/work/" in text or "shared/notes" in text:
            offenders.append(str(p.relative_to(ROOT)))
    assert offenders == []
    assert (ROOT / "docs" / "qwen-omni-offline.md").exists()
    assert "docs/qwen-omni-offline.md" in (ROOT / "livejudge" / "testing" / "qwen.py").read_text()


def test_demo_script_installs_only_when_the_venv_or_pyproject_changed(tmp_path):
    """pip ran on every demo.sh run (12 s of blank screen): now once per new .venv or changed
    pyproject.toml (a stamp file in .venv), and each run says which it is doing."""
    proj = _fake_project(tmp_path, 0)
    log = tmp_path / "pip.log"
    (proj / ".venv" / "bin" / "python").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nexit 0\n")
    (proj / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['numpy']\n")

    def run():
        out = subprocess.run(["bash", str(proj / "scripts" / "demo.sh")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stderr, (log.read_text().count("pip install") if log.exists() else 0)

    err, n = run()
    assert n == 1 and "installing livejudge[" in err
    err, n = run()
    assert n == 1 and "up to date" in err  # nothing reinstalled
    (proj / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['numpy', 'rich']\n")
    err, n = run()
    assert n == 2 and "pyproject.toml changed" in err
    (proj / ".venv" / ".livejudge-installed").unlink()  # as a fresh .venv has no stamp
    err, n = run()
    assert n == 3


def test_readme_and_demo_script_agree_on_the_setup_time():
    """demo.sh says its install takes "about a minute", the README said "a few minutes" (a new
    user's trial: both are right, for a reinstall and for a new .venv): the README names the
    script's own estimate and says which install it fits."""
    import re

    script = (ROOT / "scripts" / "demo.sh").read_text()
    readme = " ".join((ROOT / "README.md").read_text().split())
    estimate = re.search(r"installing livejudge\[[^]]*\] into \.venv \([^)]*; ([^)]*)\)", script).group(1)
    assert f'"{estimate}"' in readme, estimate
    assert "building a new `.venv` takes a few minutes" in readme
