"""Outputs that go to stdout or a device: the result alone on stdout, write failures said.

A new user's hardening trial: ``--json -`` with the display on "auto" (plain lines when stdout is
piped) put the meter's lines before the JSON on stdout, so ``livejudge replay … --json - | jq``
failed; a full disk behind ``--json - > out.json`` exited 0 with half a document and no word;
and, as root, ``--json /dev/full`` renamed a regular file over the device node and said "result
written"."""

from __future__ import annotations

import errno
import io
import json
import stat
from pathlib import Path

import pytest

from livejudge.commands.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"


@pytest.mark.parametrize("cmd", [["score"], ["replay", "--speed", "max"]])
def test_json_to_stdout_is_the_result_alone_whatever_the_display(cmd, capsys):
    assert main([cmd[0], str(EXAMPLE), *cmd[1:], "--judge", "none", "--asr", "off", "--display", "plain",
                 "--json", "-"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)  # the whole of stdout parses: no meter line before or after it
    assert doc["summary"]["latency_count"] >= 1
    assert "[verdict]" in cap.err or "latency" in cap.err  # the plain lines went to stderr instead


class _FullStdout(io.StringIO):
    def write(self, s):  # noqa: D401 - a disk that is full
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_write_to_stdout_is_said_and_the_result_kept(monkeypatch, capsys, tmp_path):
    import tempfile

    from livejudge.commands.runner import EXIT_FAILED

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr("sys.stdout", _FullStdout())
    code = main(["score", str(EXAMPLE), "--judge", "none", "--asr", "off", "--display", "none", "--json", "-"])
    err = capsys.readouterr().err
    assert code == EXIT_FAILED, err
    line = [x for x in err.splitlines() if "cannot write the result to stdout (No space left on device)" in x]
    assert len(line) == 1, err
    kept = Path(line[0].rsplit("written to ", 1)[1].split(" instead")[0])
    assert kept.parent == tmp_path and json.loads(kept.read_text())["summary"]["latency_count"] >= 1


def test_a_device_path_is_written_in_place_not_replaced():
    from livejudge.outputs.guard import write_text_atomic

    assert write_text_atomic("/dev/null", "{}\n") == Path("/dev/null")
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)  # still the device, not a regular file
    if Path("/dev/full").exists() and stat.S_ISCHR(Path("/dev/full").stat().st_mode):
        with pytest.raises(OSError) as e:
            write_text_atomic("/dev/full", "{}\n")
        assert e.value.errno == errno.ENOSPC
        assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)


@pytest.mark.parametrize("flag", ["--events", "--report", "--junit"])
def test_dash_for_a_file_only_output_is_refused_before_any_work(flag, tmp_path, capsys, monkeypatch):
    """`--events -` wrote a file named "-" in the working directory (a trial); only --json writes to stdout."""
    monkeypatch.chdir(tmp_path)
    assert main(["score", str(EXAMPLE), "--judge", "none", "--asr", "off", flag, "-"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"livejudge: {flag} - is not supported ({flag} writes a file; only --json - writes to stdout): "
                   "give a file path"], err
    assert not (tmp_path / "-").exists()
