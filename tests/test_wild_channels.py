"""benchmarks/judge_lofo.py --wild-channels: half of a wild row's dialogues (either class) go
through a telephone line or a room, so that bandwidth and reverberation stop being labels; the
clips picked stay the same as without it (issue 19: augmentations for both classes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "livejudge" / "data" / "audio"


def _lofo():
    spec = importlib.util.spec_from_file_location("judge_lofo_wc", ROOT / "benchmarks" / "judge_lofo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows():
    rows = []
    for label, pat, spk in (("human", "librivox_austen_*.wav", "lv"), ("machine", "espeak_*.wav", "es")):
        for f in sorted((AUDIO / label).glob(pat)):
            rows.append({"path": f.name, "abspath": str(f), "label": label, "family": f"wild-{spk}", "speaker": spk,
                         "duration_s": 3.0, "wild": True, "fit": True})
    return rows


def _share_above(x: np.ndarray, hz: float = 4000.0) -> float:
    spec = np.abs(np.fft.rfft(np.asarray(x, np.float64) - np.mean(x))) ** 2
    f = np.fft.rfftfreq(len(x), 1 / 16000)
    return float(spec[f > hz].sum() / spec.sum())


def test_wild_dialogues_go_through_the_declared_channels_with_the_same_clips():
    JL = _lofo()
    rows = _rows()
    plain = JL.build_calls(rows, 0, 2, 4, 4, 4, "family")
    chan = JL.build_calls(rows, 0, 2, 4, 4, 4, "family", wild_channels=("telephone", "room"))
    assert [m["clips"] for _, m in plain] == [m["clips"] for _, m in chan]
    seen = set()
    for (dp, mp), (dc, mc) in zip(plain, chan):
        assert mp["channel"] == "none"
        seen.add((mc["label"], mc["channel"]))
        if mc["channel"] == "telephone":  # 300-3400 Hz line: almost nothing left above 4 kHz
            assert _share_above(dc.call.agent) < 1e-4 < 1e-3 < _share_above(dp.call.agent)
        elif mc["channel"] == "room":  # reverberated: the agent's speech is not the clean one
            n = min(len(dc.call.agent), len(dp.call.agent))
            assert np.corrcoef(dc.call.agent[:n], dp.call.agent[:n])[0, 1] < 0.98
        else:
            np.testing.assert_array_equal(dc.call.agent, dp.call.agent)
    # both classes get the clean line and at least one other channel
    for label in ("human", "machine"):
        assert (label, "none") in seen and {(label, "telephone"), (label, "room")} & seen


def test_an_unknown_channel_is_refused(capsys):
    JL = _lofo()
    with pytest.raises(SystemExit):
        JL.main(["x.jsonl", "--wild-channels", "telephone,satellite"])
    assert "satellite" in capsys.readouterr().err


def test_a_family_split_by_vendor_relabels_only_its_machines_and_refuses_an_unknown_vendor():
    """judge_lofo.py --split-family-by-vendor: commercial-neural-tts is held out by vendor group
    (OpenAI against Google and Deepgram), so one vendor's engines are tested while the others teach;
    people and other families keep their labels; a system of no known vendor is refused."""
    lofo = _lofo()
    fam = "commercial-neural-tts"
    rows = [{"label": "machine", "family": fam, "speaker": "podcastfy(openai-tts-1-hd?)-host-answer"},
            {"label": "machine", "family": fam, "speaker": "Gemini-TTS"},
            {"label": "machine", "family": fam, "speaker": "Google-Cloud-TTS-default-2019"},
            {"label": "machine", "family": fam, "speaker": "Deepgram-Aura-2"},
            {"label": "machine", "family": "flow-matching", "speaker": "openai-lookalike"},
            {"label": "human", "family": fam, "speaker": "openai-person"}]
    got = [r["family"] for r in lofo.split_by_vendor(rows, fam)]
    assert got == [f"{fam}:openai", f"{fam}:google+deepgram", f"{fam}:google+deepgram", f"{fam}:google+deepgram",
                   "flow-matching", fam]
    assert rows[0]["family"] == fam  # the input rows are not changed in place
    with pytest.raises(SystemExit, match="matches no vendor"):
        lofo.split_by_vendor([{"label": "machine", "family": fam, "speaker": "ElevenLabs-flash"}], fam)
