"""The CLI parses once into the frozen configs of ``livejudge.config`` (issue 21): each flag lands
in its field, the configs cannot be changed after parsing, and commands that share a flag
parse it the same way."""

import dataclasses

import pytest

from livejudge.commands.attach import source_config
from livejudge.commands.cli import build_parser, call_config
from livejudge.commands.runner import judge_config, output_config, session_config
from livejudge.config import CallConfig, JudgeConfig, OutputConfig, SourceConfig
from livejudge.errors import CLIError


def parse(*argv):
    return build_parser().parse_args(list(argv))


def test_score_flags_land_in_their_fields():
    args = parse("score", "call.wav", "--user-channel", "1", "--agent-channel", "0", "--echo-gate", "off",
                 "--judge", "acoustic", "--head", "H", "--device", "cpu", "--asr", "on", "--asr-model", "M",
                 "--judge-url", "http://127.0.0.1:1/judge", "--json", "r.json", "--events", "e.jsonl",
                 "--report", "r.html", "--fail-if", "latency_p90_s>1.2", "--fail-if", "p_human_mean<0.3",
                 "--junit", "j.xml", "--window-s", "20", "--merge-pause-s", "0.5")
    assert call_config(args) == CallConfig(file="call.wav", user_channel=1, agent_channel=0, echo_gate="off")
    assert judge_config(args) == JudgeConfig(kind="acoustic", head="H", device="cpu", asr="on", asr_model="M",
                                             url="http://127.0.0.1:1/judge")
    assert output_config(args) == OutputConfig(json_out="r.json", events="e.jsonl", report="r.html",
                                               display="none",  # score shows no meter unless asked
                                               fail_if=("latency_p90_s>1.2", "p_human_mean<0.3"), junit="j.xml")
    cfg = session_config(args, "every")
    assert (cfg.window_s, cfg.turns.merge_pause_s, cfg.judge_mode) == (20.0, 0.5, "every")


def test_defaults_match_the_dataclass_defaults():
    """A flag's default and its field's default agree, so a config built in code behaves as the CLI."""
    args = parse("replay", "call.wav")
    assert judge_config(args) == JudgeConfig()
    assert output_config(args) == OutputConfig()
    assert call_config(args) == CallConfig(file="call.wav")
    assert source_config(parse("attach", "--ws-url", "ws://h:1")) == SourceConfig(ws_url="ws://h:1")


def test_attach_and_demo_source_configs():
    src = source_config(parse("attach", "--webrtc", "http://h:7860", "--input-wav", "a.wav", "b.wav",
                              "--barge-in", "2:1.5", "--no-playback", "--no-aec", "--header", "X-A: 1",
                              "--protocol", "twilio", "--in-rate", "8000", "--reconnect", "2"))
    assert (src.runner, src.route) == ("http://h:7860", "webrtc")  # --webrtc URL = --runner URL --route webrtc
    assert src.input_wav == ("a.wav", "b.wav") and src.barge_in == ((2, 1.5),)
    assert (src.playback, src.aec, src.headers) == (False, False, ("X-A: 1",))
    assert (src.protocol, src.in_rate, src.reconnect, src.demo) == ("twilio", 8000, 2, False)
    demo = source_config(parse("demo", "--runner", "--no-playback"))
    assert demo.runner is None and demo.demo  # demo's --runner is a switch, not a URL
    assert demo.ws_url is None and demo.input_wav == () and not demo.playback


def test_configs_are_frozen():
    cfg = judge_config(parse("score", "call.wav"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.kind = "none"  # type: ignore[misc]
    assert hash(cfg) == hash(dataclasses.replace(cfg))  # hashable: immutable all the way down


def test_bad_pipeline_flag_is_one_line_error():
    with pytest.raises(CLIError, match=r"--merge-pause-s must be ≥ 0 seconds, got -1"):
        session_config(parse("score", "call.wav", "--merge-pause-s", "-1"))


def test_a_hangover_past_the_gaps_it_measures_is_refused(tmp_path, capsys):
    """A trial: `--hangover-s 100` was accepted and gave "latency p50 -0.29s"; a re-check found 2 s
    still joined the agent's turn to its backchannel (a +0.60 s gap read −1.51 s). A hangover past
    ``MAX_HANGOVER_S`` (1 s) is now one line, exit 2; 1 s itself scores the example's gaps right."""
    from pathlib import Path

    from livejudge.commands.cli import main
    from livejudge.timing.vad import MAX_HANGOVER_S, VADConfig

    import json

    assert MAX_HANGOVER_S == 1.0 and VADConfig(hangover_s=1.0).validate().hangover_s == 1.0
    wav = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    for h in ("100", "2"):
        assert main(["score", str(wav), "--judge", "none", "--hangover-s", h]) == 2
        assert capsys.readouterr().err.strip() == (f"livejudge: VAD hangover_s (--hangover-s) must be at most 1 s, got "
                                                   f"{h}: a longer hangover runs each segment across the gaps it "
                                                   "should measure")
    out = tmp_path / "r.json"
    assert main(["score", str(wav), "--judge", "none", "--hangover-s", "1", "--json", str(out)]) == 0
    truth = json.loads((wav.parent / "example_call.truth.json").read_text())["transitions"]
    got = json.loads(out.read_text())["transitions"]
    assert len(got) == len(truth) and all(abs(t["gap_s"] - g["gap_s"]) <= 0.05 for t, g in zip(truth, got))


def test_asr_on_with_the_judge_off_is_refused(tmp_path, capsys):
    """A trial: `--asr on --judge none --report` wrote no transcripts (`source.asr: false`) with no
    word, while --help said "on" always transcribes. The transcriber runs beside the judge, so the
    pair is now refused in one line (exit 2), for one call and for a batch."""
    from pathlib import Path

    from livejudge.commands.cli import main

    wav = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    for target in (str(wav), str(wav.parent)):
        assert main(["score", target, "--judge", "none", "--asr", "on", "--out-dir", str(tmp_path / "o")]) == 2
        assert capsys.readouterr().err.strip() == (
            "livejudge: --asr on transcribes the agent's turns for the judge (its text dimensions and the report's "
            "transcripts), and --judge none turns the judge off: drop one")
