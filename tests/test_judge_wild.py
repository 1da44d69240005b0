"""benchmarks/judge_wild.py: dialogues never mix systems, and a person and a machine agent at the
same dialogue index get the same caller, timing, level and line (only the agent's voice differs)."""

import importlib.util
from pathlib import Path

import numpy as np
import soundfile as sf

from livejudge.testing.dialogues import load_clip

_spec = importlib.util.spec_from_file_location(
    "judge_wild", Path(__file__).resolve().parents[1] / "benchmarks" / "judge_wild.py")
jw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jw)


def _rows(tmp_path, label, system, names):
    rows = []
    for n in names:
        p = tmp_path / f"{system}_{n}.wav"
        x = load_clip(n)
        sf.write(p, x, 16000)
        rows.append({"path": str(p), "label": label, "family": f"fam-{system}", "system": system,
                     "speaker": "s", "duration_s": str(len(x) / 16000), "lang": "en"})
    return rows


def test_plans_keep_one_system_per_dialogue_and_reach_the_agent_speech(tmp_path):
    rows = _rows(tmp_path, "human", "h", ["librivox_austen_0870", "librivox_austen_0880",
                                          "librivox_austen_0890", "librivox_austen_0920"]) \
        + _rows(tmp_path, "machine", "m", ["espeak_austen_0870", "espeak_austen_0880"])
    plans = jw.plan_dialogues(rows, agent_speech_s=8.0)
    assert plans, "no dialogue planned"
    for p in plans:
        assert len({c["system"] for c in p["clips"]}) == 1
        assert {c["label"] for c in p["clips"]} == {p["label"]}
    # every clip is used exactly once
    used = sorted(c["path"] for p in plans for c in p["clips"])
    assert used == sorted(r["path"] for r in rows)


def test_same_index_gives_same_caller_and_line_for_both_classes(tmp_path):
    h = {"label": "human", "family": "x", "system": "h",
         "clips": _rows(tmp_path, "human", "h", ["librivox_austen_0870", "librivox_austen_0880"])}
    m = {"label": "machine", "family": "y", "system": "m",
         "clips": _rows(tmp_path, "machine", "m", ["espeak_austen_0870", "espeak_austen_0880"])}
    for tel in (False, True):
        dh, dm = jw.build(h, 3, 0, tel, 4.0), jw.build(m, 3, 0, tel, 4.0)
        uh = [p for p in dh.truth.placed if p.channel == "user"]
        um = [p for p in dm.truth.placed if p.channel == "user"]
        assert [p.clip for p in uh] == [p.clip for p in um]
        assert uh[0].onset_s == um[0].onset_s
        # the agent's level is the same drawn RMS (within 1 dB) in both classes
        def agent_db(d):
            a = d.call.agent
            seg = np.concatenate([a[int(p.onset_s * 16000):int(p.offset_s * 16000)]
                                  for p in d.truth.placed if p.channel == "agent"])
            return 10 * np.log10(np.mean(seg.astype(np.float64) ** 2))
        assert abs(agent_db(dh) - agent_db(dm)) < 1.0 + (2.0 if tel else 0.0)


def test_the_caveat_names_only_families_the_head_never_met_as_such(tmp_path):
    import json

    res = {"conditions": {c: {"pooled_auc_machines_vs_people": a, "people": {"mean_p_human": 0.667},
                              "machines": {"mean_p_human": 0.481},
                              "by_family": {"machine:piper": {"mean_p_human": 0.6}, "machine:flow-matching":
                                            {"mean_p_human": 0.4}, "human:human-public-speech": {"mean_p_human": 0.7}}}
                          for c, a in (("wideband", 0.786), ("telephone", 0.741))}}
    head = tmp_path / "head"
    head.mkdir()
    (head / "config.json").write_text(json.dumps({"training": {"families": ["espeak-ng"]}}))
    cav = jw.write_caveat(head, res, "x.json")
    assert cav == ("NOT valid in the wild: ROC-AUC 0.78 wideband, 0.74 telephone on 2 neural speech families it "
                   "never met (P(h): people 0.66, machines 0.48)")
    v = json.loads((head / "config.json").read_text())["training"]["validity"]
    assert v["caveat"] == cav and v["caveat_source"] == "x.json"
    (head / "config.json").write_text(json.dumps({"training": {"families": ["espeak-ng", "piper"]}}))
    cav = jw.write_caveat(head, res, "x.json")  # a refit fitted on piper: those sources are new, not the family
    assert "on 2 neural families from sources never fitted on, 1 never met (" in cav
    # a head whose LOFO held a family out by vendor group lists it as "family:vendor": still fitted on the family
    (head / "config.json").write_text(json.dumps({"training": {"families": ["espeak-ng", "piper:vendor-a"]}}))
    assert ", 1 never met (" in jw.write_caveat(head, res, "x.json")



def test_the_caveat_names_the_machine_families_rated_as_human_as_people(tmp_path):
    import json

    fam = {"machine:commercial-neural-tts": {"mean_p_human": 0.751, "n_scored": 14},
           "machine:ar-mel-neural-vocoder": {"mean_p_human": 0.70, "n_scored": 33},
           "machine:flow-matching": {"mean_p_human": 0.642, "n_scored": 21},      # below the people
           "machine:diffusion-variance": {"mean_p_human": 0.9, "n_scored": 4},     # too few to read
           "machine:codec-resynthesis": {"mean_p_human": 0.95, "n_scored": 30},    # not a TTS voice
           "human:human-public-speech": {"mean_p_human": 0.7, "n_scored": 30}}
    res = {"conditions": {"wideband": {"pooled_auc_machines_vs_people": 0.633, "people": {"mean_p_human": 0.693},
                                       "machines": {"mean_p_human": 0.613}, "by_family": fam}}}
    head = tmp_path / "head"
    head.mkdir()
    (head / "config.json").write_text(json.dumps({"training": {"families": ["espeak-ng"]}}))
    cav = jw.write_caveat(head, res, "x.json")
    assert cav.endswith("(P(h): people 0.69, machines 0.61, commercial-neural-tts 0.75)")
    # with the machines' accuracy at 0.5: the share called human, rounded UP (an error rate never rounds down)
    res["conditions"]["wideband"]["machines"]["acc_at_0.5"] = 0.297
    cav = jw.write_caveat(head, res, "x.json")
    assert cav.startswith("NOT valid in the wild: 0.71 of machine dialogues called human (P≥0.5); ROC-AUC 0.63 wideband")
    assert cav.endswith("(P(h): people 0.69, machines 0.61, commercial-neural-tts 0.75)")  # the share leads, not here
    res["conditions"]["wideband"]["machines"]["acc_at_0.5"] = 0.7
    assert ": 0.30 of machine dialogues called human" in jw.write_caveat(head, res, "x.json")  # exact: not bumped to 0.31


def test_mp3_round_trip_keeps_the_timeline_and_band_limits_low_rates():
    """mp3_round_trip (libsndfile's MP3 through soundfile): same length and dtype, no lag (the
    truth does not move), nothing above 6 kHz at 24 kbit/s (MPEG-2 Layer III's low-rate lowpass)
    and most of it kept at 96 kbit/s; a rate outside 8-160 kbit/s is refused."""
    import pytest
    from scipy.signal import welch

    from livejudge.testing.dialogues import mp3_round_trip

    x = load_clip("librivox_austen_0870")
    _, px = welch(x, 16000, nperseg=512)
    for kbps, (lo, hi) in ((24, (0.0, 0.01)), (96, (0.5, 1.5))):
        y = mp3_round_trip(x, kbps)
        assert y.dtype == np.float32 and y.shape == x.shape
        c = np.correlate(y[2000:20000], x[1950:20050], "valid")
        assert int(np.argmax(c)) == 50, f"{kbps} kbit/s moved the audio by {50 - int(np.argmax(c))} samples"
        f, py = welch(y, 16000, nperseg=512)
        ratio = py[f > 6000].sum() / px[f > 6000].sum()
        assert lo <= ratio <= hi, f"{kbps} kbit/s kept {ratio:.3f} of the power above 6 kHz"
    with pytest.raises(ValueError, match="8-160"):
        mp3_round_trip(x, 320)


def test_conditions_parse_and_an_mp3_condition_changes_only_the_agents_voice(tmp_path):
    import pytest

    assert jw.parse_condition("wideband") == (False, None)
    assert jw.parse_condition("telephone") == (True, None)
    assert jw.parse_condition("mp3-32") == (False, 32.0)
    for bad in ("mp3", "mp3-4", "gsm"):
        with pytest.raises(SystemExit, match="unknown condition"):
            jw.parse_condition(bad)
    rows = _rows(tmp_path, "machine", "m", ["espeak_austen_0870", "espeak_austen_0880"])
    plan = jw.plan_dialogues(rows, agent_speech_s=4.0)[0]
    clean = jw.build(plan, 3, 0, False, 4.0)
    coded = jw.build(plan, 3, 0, False, 4.0, agent_mp3_kbps=24)
    assert clean.truth.segments() == coded.truth.segments()
    np.testing.assert_array_equal(clean.call.user, coded.call.user)
    assert not np.allclose(clean.call.agent, coded.call.agent, atol=1e-3)
