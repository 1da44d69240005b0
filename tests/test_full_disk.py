"""Outputs on a full disk (a trial mounted a 40 KiB tmpfs): nothing measured is lost, a cut event
log ends on a whole line, and the command does not exit 0 with an output it could not write."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from livejudge.commands.cli import main
from livejudge.outputs import sinks
from livejudge.testing.dialogues import example_dialogue


class _FillsAfter:
    """A raw file whose disk is full once ``limit`` bytes are in it (as a small tmpfs is)."""

    def __init__(self, raw, limit: int) -> None:
        self.raw, self.limit, self.size = raw, limit, 0

    def write(self, data) -> int:
        room = self.limit - self.size
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self.raw.write(bytes(data)[:room])  # a partial write first, then the error: half a line
        self.size += n
        return n

    def truncate(self, size: int) -> int:
        self.size = size
        return self.raw.truncate(size)

    def close(self) -> None:
        self.raw.close()

    @property
    def closed(self) -> bool:
        return self.raw.closed


@pytest.fixture(scope="module")
def call(tmp_path_factory):
    return example_dialogue(seed=0).write(tmp_path_factory.mktemp("disk") / "call.wav")


def test_an_event_log_the_disk_fills_mid_call_ends_whole_and_the_run_exits_1(call, tmp_path, monkeypatch, capsys):
    """The trial: the disk filled 294 lines into the log; score exited 0, the log's last line was
    half a line (invalid JSON), it had no summary line, and the result's errors held 99 copies of the
    sink's failure plus "… and 183 more". The log now ends on its last whole line, the failure is
    one error naming that line, the result (on another disk) is whole, and the run exits 1."""

    class Filling(sinks.JsonlSink):
        def __init__(self, path):
            super().__init__(path)
            self._f = _FillsAfter(self._f, limit=6000)

    monkeypatch.setattr(sinks, "JsonlSink", Filling)
    ev, out = tmp_path / "ev.jsonl", tmp_path / "r.json"
    code = main(["score", str(call), "--judge", "none", "--events", str(ev), "--json", str(out)])
    err = capsys.readouterr().err
    lines = ev.read_bytes().decode().splitlines(keepends=True)
    assert 5 < len(lines) and all(x.endswith("\n") for x in lines)
    records = [json.loads(x) for x in lines]  # every line whole JSON
    assert records[0]["type"] == "header" and records[-1]["type"] != "summary"
    said = (f"the event log {ev} stops after line {len(lines)} (No space left on device): the events after it "
            "were not written; the result holds the whole call")
    assert code == 1 and f"livejudge: {said}" in err
    doc = json.loads(out.read_text())
    assert doc["summary"]["latency_count"] >= 5 and doc["duration_s"] > 40
    assert [e for e in doc["errors"] if "event log" in e] == [f"sink Filling failed: {said}"], doc["errors"]


def test_an_event_log_that_cannot_be_started_is_exit_2_before_the_call(call, tmp_path, capsys):
    """`--events /dev/full` (or a full disk at the start) was a traceback from sinks.py, exit 1, and
    no --json result although that path was fine. Nothing is measured yet: one line, exit 2."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    code = main(["score", str(call), "--judge", "none", "--events", "/dev/full", "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == ("livejudge: cannot write --events /dev/full: No space left on device; "
                                       "nothing was measured")
