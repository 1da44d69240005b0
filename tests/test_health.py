"""Input health (livejudge.timing.health) on calls built from real clips: each problem is made on
purpose and must be named, and a clean call (any line condition) must give no warning."""

from __future__ import annotations

import json

import numpy as np
import pytest

from livejudge.testing import example_dialogue
from livejudge.timing.health import CLIP_SHARE, check_input


@pytest.fixture(scope="module")
def clean():
    return example_dialogue(seed=0)


@pytest.mark.parametrize("line", [dict(), dict(noise_dbfs=-47.0, noise_kind="babble"),
                                  dict(noise_dbfs=-50.0, telephone_line=True),
                                  dict(noise_dbfs=-50.0, echo_gain_db=-18.0)])
def test_clean_calls_give_no_warning(line):
    d = example_dialogue(seed=1, **line)
    assert check_input(d.call.user, d.call.agent) == []


def test_each_problem_is_named(clean):
    u, a = clean.call.user, clean.call.agent
    w = check_input(u, np.zeros_like(a))
    assert [(x.code, x.channel, x.unmeasurable) for x in w] == [("silent_channel", "agent", False)]
    assert "--agent-channel" in w[0].message
    w = check_input(np.zeros_like(u), np.zeros_like(a))
    assert [x.unmeasurable for x in w] == [True, True]
    w = check_input(u, u.copy())
    assert [(x.code, x.unmeasurable) for x in w] == [("identical_channels", True)]
    hot = np.clip(u * 100, -1, 1)  # speech driven 40 dB into full scale
    w = check_input(hot, a)
    assert [(x.code, x.channel) for x in w] == [("clipping", "user")] and w[0].value > CLIP_SHARE
    assert check_input(u * 0.5, a) == []  # loud is not clipped
    w = check_input(u, a + np.float32(0.05))
    assert [(x.code, x.channel) for x in w] == [("dc_offset", "agent")] and w[0].value == pytest.approx(0.05, abs=1e-3)
    n = len(u)
    w = check_input(u, a, lengths=(n, n // 2))
    assert [x.code for x in w] == ["length_mismatch"]
    assert check_input(u, a, lengths=(n, n - 8000)) == []  # 0.5 s short: within 1 s


def test_swapped_channels_with_speakerphone_echo():
    d = example_dialogue(seed=0, echo_gain_db=-18.0)
    assert check_input(d.call.user, d.call.agent) == []  # the usual direction of echo
    w = check_input(d.call.agent, d.call.user)  # swapped: the "agent" channel holds the echo
    assert [x.code for x in w] == ["channel_swap"] and "--user-channel 1" in w[0].message


def test_score_and_check_say_it_everywhere(tmp_path, capsys):
    from livejudge.commands.cli import main
    from livejudge.outputs.html_report import require_matplotlib

    d = example_dialogue(seed=0, echo_gain_db=-18.0)
    path = d.write(tmp_path / "swapped.wav", user_channel=1)  # the user on channel 1, read as channel 0
    out, log = tmp_path / "r.json", tmp_path / "e.jsonl"
    assert main(["score", str(path), "--judge", "none", "--json", str(out), "--events", str(log)]) == 0
    err = capsys.readouterr().err
    assert "warning: the agent channel carries an echo of the user channel" in err
    doc = json.loads(out.read_text())
    assert [w["code"] for w in doc["source"]["input_health"]] == ["channel_swap"]
    assert doc["source"]["input_health"][0]["basis"] == "HEURISTIC"
    notes = [json.loads(x) for x in log.read_text().splitlines()]
    assert any(x.get("kind") == "input_health" and x.get("code") == "channel_swap" for x in notes)
    assert main(["check", str(path)]) == 0
    assert "probably swapped" in capsys.readouterr().err
    try:
        require_matplotlib()
    except Exception:
        return
    from livejudge.outputs.html_report import render_html

    assert "Input health:" in render_html(doc) and "probably swapped" in render_html(doc)
