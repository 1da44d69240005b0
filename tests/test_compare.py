"""compare: calls and batches side by side, changes against the first, better/worse by the
stated rule per metric."""

import json

import pytest

from livejudge.commands.compare import NOT_MEASURED_SUFFIX, RULES, Rule, compare, render_html, rule_for
from livejudge.commands.cli import main


def _doc(p50, p90, p_human, yield_s, rhythm):
    return {"duration_s": 40.0, "segments": [], "summary": {
        "latency_p50_s": p50, "latency_p90_s": p90, "latency_mean_s": p50, "latency_count": 5,
        "mean_p_human": p_human, "yield_mean_s": yield_s, "barge_in_count": 2, "user_barge_in_count": 1,
        "agent_talk_over_count": 1, "overlap_ratio": 0.05, "backchannel_count": 1},
        "judge": [{"t_s": 2.0, "p_human": p_human, "dimensions": {"rhythm": {"score": rhythm, "gated": False}}}]}


def test_rules():
    band = RULES["latency_p90_s"]
    assert band.verdict(1.5, 0.9) == "better" and band.verdict(0.5, 0.2) == "same"  # both inside the band
    assert band.verdict(0.7, 1.2) == "worse"
    assert RULES["mean_p_human"].verdict(0.2, 0.4) == "better"
    assert RULES["yield_mean_s"].verdict(0.3, 0.6) == "worse"
    # the gap mean has no verdict: overlaps count negative (rude's talk-overs read "nearer 0.2 s")
    assert RULES["gap_mean_s"].verdict(0.87, 0.14) == "" and RULES["gap_mean_s"].kind == "none"
    assert rule_for("dim_rhythm").verdict(2.0, 3.0) == "better"
    assert rule_for("overlap_ratio").verdict(0.1, 0.5) == "" and Rule("higher", "").verdict(None, 1) == ""


def test_compare_two_calls_and_a_batch(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_doc(1.2, 2.0, 0.2, 0.5, 2.0)))
    b.write_text(json.dumps(_doc(0.5, 1.0, 0.6, 0.3, 3.5)))
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "summary.json").write_text(json.dumps({"n_scored": 3, "calls": [], "medians": {
        "latency_p50_s": 0.8, "latency_p90_s": 3.0, "mean_p_human": 0.1}}))
    doc = compare([a, b, batch])
    rows = {r["metric"]: r for r in doc["rows"]}
    assert [c["kind"] for c in doc["columns"]] == ["call", "call", "batch: medians over 3 calls"]
    assert rows["latency_p90_s"]["values"] == [2.0, 1.0, 3.0]
    assert rows["latency_p90_s"]["changes"][1] == pytest.approx(-1.0)
    assert rows["latency_p90_s"]["verdicts"] == ["same", "better", "worse"]
    assert rows["mean_p_human"]["verdicts"][1:] == ["better", "worse"]
    assert rows["yield_mean_s"]["verdicts"][1:] == ["better", ""]  # the batch did not measure it
    assert rows["dim_rhythm"]["values"][:2] == [2.0, 3.5] and rows["dim_rhythm"]["verdicts"][1] == "better"
    assert all(r["rule"] for r in doc["rows"])
    # a call beside a batch's medians is said so (a trial); two calls alone get no such note
    mixed = [n for n in doc["notes"] if "(medians over its calls)" in n]
    assert mixed == ["A, B are single calls and C a batch (medians over its calls): a median moves less than one "
                     "call, so a change between them is partly the choice of call"]
    assert not any("medians over its calls" in n for n in compare([a, b])["notes"])
    html = render_html(doc)
    assert "<script" not in html and "better" in html and "b.json" in html
    # a batch that could not score some calls says so beside its medians (a trial)
    (batch / "summary.json").write_text(json.dumps({"n_scored": 3, "n_skipped": 2, "n_calls": 5, "calls": [],
                                                    "medians": {"latency_p50_s": 0.8}}))
    assert compare([a, batch])["columns"][1]["kind"] == "batch: medians over 3 calls (2 of 5 not scored)"


def test_compare_cli_table_json_html_and_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_doc(1.2, 2.0, 0.2, 0.5, 2.0)))
    b.write_text(json.dumps(_doc(0.5, 1.0, 0.6, 0.3, 3.5)))
    assert main(["compare", str(a), str(b), "--html", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "response latency p90" in out and "better" in out and "nearer 0–0.742 s" in out
    assert (tmp_path / "c.html").exists()
    # to a pipe (capsys is one) each row is one line, as grep reads it: at rich's 80 columns the
    # metric names wrapped over two or three lines (a trial's "rich tables wrap when piped")
    row = next(x for x in out.splitlines() if "response latency mean (s)" in x)
    assert "1.20" in row and "0.50 (-0.70)" in row, row
    assert max(len(x) for x in out.splitlines()) > 80
    assert main(["compare", str(a), str(b), "--json", "-"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["columns"][1]["name"] == str(b) and "more than once" not in got.err
    assert main(["compare", str(a), str(a), "--json", "-"]) == 0  # one file twice: said, still compared
    assert f"warning: {a} given more than once" in capsys.readouterr().err
    assert main(["compare", str(a)]) == 2
    assert main(["compare", str(a), str(tmp_path / "nope.json")]) == 2
    (tmp_path / "x.json").write_text("[1, 2]")
    assert main(["compare", str(a), str(tmp_path / "x.json")]) == 2


def test_compare_csv_has_one_row_per_metric_and_column(tmp_path, capsys):
    """Compare had no CSV (only a batch wrote summary.csv; the last notes' item): `--csv` writes one
    row per metric and column with its value, its change against the first column and its verdict,
    the same figures as the JSON; the baseline's change and verdict are empty, a value not measured
    is an empty cell. "-" is refused (only --json writes to stdout)."""
    import csv

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_doc(1.2, 2.0, 0.2, 0.5, 2.0)))
    b.write_text(json.dumps(_doc(0.5, 1.0, 0.6, None, 3.5)))
    out = tmp_path / "c.csv"
    assert main(["compare", str(a), str(b), "--csv", str(out), "--json", str(tmp_path / "c.json")]) == 0
    assert f"CSV rows written to {out}" in capsys.readouterr().err
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    doc = json.loads((tmp_path / "c.json").read_text())
    assert len(rows) == 2 * len(doc["rows"])
    by = {(r["metric"], r["column"]): r for r in rows}
    p90a, p90b = by[("latency_p90_s", "0")], by[("latency_p90_s", "1")]
    assert (float(p90a["value"]), p90a["change"], p90a["verdict"], p90a["input"]) == (2.0, "", "", str(a))
    assert (float(p90b["value"]), float(p90b["change"]), p90b["verdict"]) == (1.0, -1.0, "better")
    assert by[("mean_p_human", "1")]["verdict"] == "better" and by[("dim_rhythm", "1")]["verdict"] == "better"
    assert by[("yield_mean_s", "1")]["value"] == "" and by[("yield_mean_s", "0")]["value"] == "0.5"
    for r in doc["rows"]:  # the same figures as the JSON
        assert by[(r["metric"], "1")]["verdict"] == r["verdicts"][1] and by[(r["metric"], "1")]["rule"] == r["rule"]
    assert main(["compare", str(a), str(b), "--csv", "-"]) == 2
    assert "--csv - is not supported" in capsys.readouterr().err


def test_compare_says_when_calls_were_measured_with_different_settings(tmp_path):
    """New-user trial: comparing a call scored with transcripts and another without, at other VAD
    settings, showed P(human) 'better' with no word that the settings differed."""
    import copy

    from livejudge.commands.compare import compare, render_html

    base = {"summary": {"latency_p50_s": 0.7}, "config": {"window_s": 30.0, "vad": {"aggressiveness": 1}},
            "source": {"asr": True}, "judge_info": {"backbone": "whisper-tiny-v1", "head": "whisper-fitted"}}
    same = copy.deepcopy(base)
    other = copy.deepcopy(base)
    other["config"]["vad"]["aggressiveness"] = 3
    other["source"]["asr"] = False
    paths = []
    for name, doc in (("a", base), ("b", same), ("c", other)):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(doc))
        paths.append(p)
    assert compare(paths[:2])["settings_differ"] == []
    doc = compare([paths[0], paths[2]])
    assert doc["settings_differ"] == ["pipeline config", "transcripts (--asr)"]
    # which key of the config differs, named (a trial: "pipeline config" alone named no setting)
    assert doc["settings_differ_keys"] == {"pipeline config": ["vad.aggressiveness"]}
    assert "measured with different settings: pipeline config (vad.aggressiveness), transcripts (--asr)" in render_html(doc)
    # one head at two versions (0.2.0 vs 0.3.0 score one call differently) is a different judge
    older, newer = copy.deepcopy(base), copy.deepcopy(base)
    older["judge_info"]["head_version"], newer["judge_info"]["head_version"] = "0.2.0", "0.3.0"
    for name, d in (("old", older), ("new", newer)):
        (tmp_path / f"{name}.json").write_text(json.dumps(d))
    assert compare([tmp_path / "old.json", tmp_path / "new.json"])["settings_differ"] == [
        "judge (A whisper-fitted 0.2.0, B whisper-fitted 0.3.0)"]  # named: "judge" alone said not which (a trial)
    assert compare([tmp_path / "new.json", tmp_path / "new.json"])["settings_differ"] == []
    # A and C of one judge, B of another: C keeps its verdicts against A, B has none (a trial: C's
    # "same" was blanked with B's)
    for name, d, p_h in (("a", older, 0.40), ("b", newer, 0.60), ("c", older, 0.70)):
        d = copy.deepcopy(d)
        d["summary"]["mean_p_human"] = p_h
        (tmp_path / f"{name}.json").write_text(json.dumps(d))
    got = compare([tmp_path / f"{n}.json" for n in "abc"])
    p = {r["metric"]: r for r in got["rows"]}["mean_p_human"]
    assert p["values"] == [0.40, 0.60, 0.70] and p["verdicts"][1] == "" and p["verdicts"][2] == "better", p


def test_compare_notes_a_quicker_agent_that_is_flagged_more(tmp_path, capsys):
    """New-user trial: `compare polite.json rude.json` said rude's 0.34 s latency was better and
    nothing else did; the cut-ins now have rows and a quicker column with more flagged moments a note."""
    def doc(p50, flagged, cut_in, talk_over):
        return {"summary": {"latency_p50_s": p50, "verdict_flagged_moment_count": flagged,
                            "verdict_pause_cut_in_count": cut_in, "agent_talk_over_count": talk_over,
                            "verdict_backchannel_yielded_count": 0, "yield_none_count": 0}}
    paths = []
    for name, d in (("polite", doc(1.2, 5, 0, 0)), ("rude", doc(0.3, 10, 3, 1)), ("fixed", doc(0.5, 2, 0, 0))):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    out = compare(paths)
    rows = {r["metric"]: r for r in out["rows"]}
    assert rows["verdict_pause_cut_in_count"]["verdicts"] == ["same", "worse", "same"]
    assert rows["latency_p50_s"]["verdicts"][1:] == ["better", "better"]
    assert len(out["notes"]) == 1  # the third column is quicker and flagged less: no note
    assert out["notes"][0].startswith("B (rude.json) answers sooner but has more flagged moments")
    assert "caller pauses the agent cut into 0 → 3" in out["notes"][0] and "agent talk-overs 0 → 1" in out["notes"][0]
    assert "answers sooner" in render_html(out)
    assert main(["compare", str(paths[0]), str(paths[1])]) == 0
    assert "note: B (rude.json) answers sooner" in capsys.readouterr().out.replace("\n", " ")


def test_the_same_flagged_count_of_different_moments_gets_a_note(tmp_path, capsys):
    """A trial probed the polite and the rude agent: 5 flagged moments each, compare said "+0"
    and nothing else, though polite's were five slow replies and rude's cut-ins, talk-throughs
    and a false yield. Now a note lists each column's flagged verdicts; the same mix, or a
    different count, gets none."""
    def doc(flagged, **counts):
        return {"summary": {"latency_p50_s": 1.0, "verdict_flagged_moment_count": flagged,
                            "verdict_latency_human_count": 1, **{f"verdict_{k}_count": v for k, v in counts.items()}}}
    paths = []
    for name, d in (("polite", doc(5, latency_s2s=5)), ("rude", doc(5, pause_cut_in=2, barge_in_talked_through=2,
                                                                       backchannel_yielded=1)),
                    ("same_mix", doc(5, latency_s2s=5)), ("more", doc(7, pause_cut_in=7))):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    out = compare(paths)
    assert len(out["notes"]) == 1, out["notes"]
    assert out["notes"][0].startswith("A (polite.json) and B (rude.json) flag as many moments but different ones")
    for k in ("latency s2s 5", "pause cut in 2", "barge in talked through 2", "backchannel yielded 1"):
        assert k in out["notes"][0]
    assert "latency human" not in out["notes"][0]  # an ok outcome is not a flagged verdict
    # no judge in any column: the 18 dimension rows of "–" are left out (mean P(human) stays, "–")
    assert not any(r["metric"].startswith("dim_") for r in out["rows"])
    assert any(r["metric"] == "mean_p_human" for r in out["rows"])
    assert main(["compare", str(paths[0]), str(paths[1])]) == 0
    text = capsys.readouterr().out.replace("\n", " ")
    assert "flag as many moments but different ones" in " ".join(text.split())


def test_backchannels_are_judged_on_the_agent_only_and_the_latency_mean_not_at_all(tmp_path):
    """A new user's trial: `backchannels 2 → 1 (worse)` counted the caller's "mm"s against the agent,
    and rude's latency mean (a −1.76 s talk-over averaged with slow replies) read "better". The
    counts are per channel, neither with a verdict (the agent's "backchannels" include replies
    started and dropped: the simulated rude demo agent has one, polite none); the mean gets none
    (p50/p90 keep theirs). A result written before the per-channel counts gets them from its
    ``backchannels`` list."""
    def doc(mean, user_bc, agent_bc, new=True):
        bcs = [{"channel": "user", "onset_s": float(i), "offset_s": i + 0.3} for i in range(user_bc)]
        bcs += [{"channel": "agent", "onset_s": 20.0 + i, "offset_s": 20.3 + i} for i in range(agent_bc)]
        sm = {"latency_mean_s": mean, "latency_p50_s": 1.1, "backchannel_count": user_bc + agent_bc}
        if new:
            sm.update(user_backchannel_count=user_bc, agent_backchannel_count=agent_bc)
        return {"duration_s": 40.0, "segments": [], "backchannels": bcs, "summary": sm}

    paths = []
    for name, d in (("polite", doc(1.2, 2, 0)), ("rude", doc(0.2, 1, 0)), ("chatty", doc(1.2, 1, 3)),
                    ("old", doc(1.2, 1, 3, new=False))):
        (tmp_path / f"{name}.json").write_text(json.dumps(d))
        paths.append(tmp_path / f"{name}.json")
    rows = {r["metric"]: r for r in compare(paths)["rows"]}
    assert rows["latency_mean_s"]["verdicts"] == ["", "", "", ""]
    assert rows["latency_mean_s"]["values"][:2] == [1.2, 0.2]
    assert rows["user_backchannel_count"]["values"] == [2, 1, 1, 1]
    assert rows["user_backchannel_count"]["verdicts"] == ["", "", "", ""]  # the caller's: no verdict
    assert rows["agent_backchannel_count"]["values"] == [0, 0, 3, 3]  # the old result: from its list
    assert rows["agent_backchannel_count"]["verdicts"] == ["", "", "", ""]
    assert "backchannel_count" not in rows  # both sides mixed: not a row
    assert RULES["latency_p50_s"].verdict(1.1, 0.3) == "better"  # the percentiles keep the band rule


def test_summary_counts_backchannels_per_channel_against_the_truth():
    """The example dialogue places backchannels on both sides; the summary's per-channel counts
    equal the placed ones (tolerance: exact), and add up to backchannel_count."""
    from livejudge.session import Session, SessionConfig, stream_call
    from livejudge.testing.dialogues import example_dialogue

    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="off"))
    stream_call(s, d.call)
    sm = s.close()["summary"]
    truth = {ch: sum(1 for b in d.truth.backchannels if b.channel == ch) for ch in ("user", "agent")}
    assert truth["user"] >= 1 and truth["agent"] >= 1
    assert sm["user_backchannel_count"] == truth["user"] and sm["agent_backchannel_count"] == truth["agent"]
    assert sm["backchannel_count"] == truth["user"] + truth["agent"]


def test_a_change_is_shown_as_the_difference_of_the_shown_values(tmp_path):
    """`mean P(human) 0.00 → 0.01 (+0.00)` (a new user's trial): the shown change is the
    difference of the printed values, or, where that is a digit the exact change does not reach
    half of, the exact change to two significant digits; the document keeps the exact change."""
    import io

    from rich.console import Console

    from livejudge.commands.compare import _fmt_change, print_table, verdict

    # printed values one digit apart, exact change under half a digit: one more digit (a later
    # trial: "3.1 → 3.2 (+0.1, same)" contradicted the footer's half-a-digit rule)
    assert _fmt_change(0.004, 0.006, "mean_p_human") == "+0.002"
    assert _fmt_change(3.149, 3.175, "dim_stress") == "+0.026"
    assert _fmt_change(3.949, 3.953, "dim_stress") == "+0.004"  # never a bare "+0.00" beside 3.9 → 4.0
    # values that print the same (0.31 → 0.31, 3.1 → 3.1): the exact change, with its sign, never "+0.0"/"-0.0"
    assert _fmt_change(0.31, 0.314, "mean_p_human") == "+0.004"
    assert _fmt_change(3.12, 3.08, "dim_rhythm") == "-0.04" and _fmt_change(3.08, 3.12, "dim_rhythm") == "+0.04"
    assert _fmt_change(0.5, 0.5, "mean_p_human") == "+0.00" and _fmt_change(0.0712, 0.0709, "overlap_ratio") == "-0.03 pt"
    # ... also where they moved by more than half a digit (a new user's trial: "3.2 → 3.2 (+0.0)" for +0.098),
    # and the verdict follows the exact change, as the footer says
    assert _fmt_change(3.151, 3.249, "dim_rhythm") == "+0.098" and _fmt_change(0.9351, 0.9449, "mean_p_human") == "+0.0098"
    assert _fmt_change(3.2499, 3.1501, "dim_rhythm") == "-0.0998"  # printed 3.2 → 3.2: never rounded to a whole digit, "-0.1"
    # a batch's median of counts moves by halves: 0.5 → 1 is a change, not "same" (a later trial)
    assert verdict("yield_none_count", 0.5, 1.0) == "worse" and verdict("yield_none_count", 1.0, 1.0) == "same"
    assert verdict("dim_rhythm", 3.151, 3.249) == "better" and verdict("mean_p_human", 0.9351, 0.9449) == "better"
    assert verdict("dim_rhythm", 3.12, 3.08) == "same"
    assert _fmt_change(3.04, 3.26, "dim_rhythm") == "+0.3"
    assert _fmt_change(0.0704, 0.0751, "overlap_ratio") == "+0.5 pt"
    assert _fmt_change(2, 5, "user_backchannel_count") == "+3" and _fmt_change(None, 1, "mean_p_human") == ""
    paths = []
    for name, ph in (("a", 0.004), ("b", 0.006)):
        (tmp_path / f"{name}.json").write_text(json.dumps({"duration_s": 40.0, "segments": [],
                                                             "summary": {"mean_p_human": ph}}))
        paths.append(tmp_path / f"{name}.json")
    doc = compare(paths)
    row = next(r for r in doc["rows"] if r["metric"] == "mean_p_human")
    assert abs(row["changes"][1] - 0.002) < 1e-9  # exact in the document
    buf = io.StringIO()
    print_table(doc, Console(file=buf, width=200))
    line = next(x for x in buf.getvalue().splitlines() if "mean P(human)" in x)
    assert "0.01 (+0.002" in line and "+0.00 " not in line and "+0.00)" not in line


def test_dimensions_sharing_one_score_are_one_row_and_unmeasured_ones_say_so(tmp_path):
    """compare showed micro-physiological noise, pronunciation instability and accent as three
    "better" rows: one learned score (the judge's dimension view groups them), three verdicts. It is
    one row now, named as the meter names it, and a dimension the head does not measure says so. A
    batch (no view) or heads that group differently keep every row."""
    group = ["micro_physiological_noise", "pronunciation_instability", "accent"]
    view = {"groups": [group, ["rhythm"]], "not_measured": {"memory_consistency": "no feature of its own in the head"}}

    def doc(score, view=view):
        dims = {d: {"score": score + k / 10, "gated": False} for k, d in enumerate(group)}
        return {"duration_s": 40.0, "segments": [], "summary": {"mean_p_human": 0.2},
                "judge_info": {"head": "h", "dimensions": view},
                "judge": [{"t_s": 2.0, "p_human": 0.2, "dimensions": dims}]}

    paths = []
    for name, d in (("a", doc(2.0)), ("b", doc(2.4))):
        (tmp_path / f"{name}.json").write_text(json.dumps(d))
        paths.append(tmp_path / f"{name}.json")
    rows = {r["metric"]: r for r in compare(paths)["rows"]}
    assert "dim_pronunciation_instability" not in rows and "dim_accent" not in rows
    r = rows["dim_micro_physiological_noise"]
    assert r["label"] == "III micro-physiological noise (+2 sharing its score: pronunciation instability, accent)"
    assert r["values"] == [2.0, 2.4] and r["verdicts"][1] == "better"
    assert rows["dim_memory_consistency"]["label"].endswith("(not measured by the head)")
    assert "sharing" not in rows["dim_rhythm"]["label"]
    # the tables list such rows on one line (ten rows of "–  –  higher" were clutter; a new user's
    # trial); the JSON keeps them
    from io import StringIO

    from rich.console import Console

    from livejudge.commands.compare import print_table

    out = StringIO()
    print_table(compare(paths), Console(file=out, width=200))
    text = out.getvalue()
    assert "not measured by the head (no value in any column): memory consistency" in text
    assert text.count("memory consistency") == 1
    assert "Not measured by the head (no value in any column): memory consistency." in render_html(compare(paths))
    # another head that does not group them: every row stays
    (tmp_path / "c.json").write_text(json.dumps(doc(2.4, view={"groups": [[d] for d in group], "not_measured": {}})))
    rows = {r["metric"]: r for r in compare([paths[0], tmp_path / "c.json"])["rows"]}
    assert {"dim_micro_physiological_noise", "dim_pronunciation_instability", "dim_accent"} <= set(rows)
    assert not rows["dim_memory_consistency"]["label"].endswith("(not measured by the head)")


def test_dimension_view_is_one_checked_reader_for_compare_and_the_report():
    """compare and the HTML report read ``judge_info.dimensions`` through one function
    (``outputs.report.dimension_view``; they had twin readers): an older result has no view,
    malformed groups are skipped, ``not_measured`` keeps each reason."""
    from livejudge.outputs.report import dimension_view

    assert dimension_view({}) is None and dimension_view({"judge_info": {"dimensions": "x"}}) is None
    view = dimension_view({"judge_info": {"dimensions": {
        "groups": [["breathing_mouth", "pronunciation_instability", "accent"], ["intonation"], [1, "x"], "bad"],
        "not_measured": {"sycophant_behavior": "no text feature in this head"}}}})
    assert view == {"groups": [("breathing_mouth", "pronunciation_instability", "accent"), ("intonation",)],
                    "not_measured": {"sycophant_behavior": "no text feature in this head"}}


def test_transcripts_note_only_when_a_row_reads_text(tmp_path):
    """`--report` turned ASR on for one of two calls and compare said "part of each change comes from
    the settings" although the judge read no text and timing never does (a new user's trial). The
    note stays when a column's head measures a text dimension, or a column has no dimension view."""
    import copy

    from livejudge.judge.features.backbones.acoustic import TEXT_DIMENSIONS

    nm = {d: "the head reads no text" for d in TEXT_DIMENSIONS}
    base = {**_doc(1.0, 1.2, 0.3, 0.5, 3.0), "source": {"asr": True},
            "judge_info": {"backbone": "whisper-tiny-v1", "head": "whisper-fitted",
                           "dimensions": {"groups": [], "not_measured": nm}}}
    no_asr = copy.deepcopy(base)
    no_asr["source"]["asr"] = False
    reads = copy.deepcopy(no_asr)
    del reads["judge_info"]["dimensions"]["not_measured"][TEXT_DIMENSIONS[0]]
    unknown = copy.deepcopy(no_asr)
    del unknown["judge_info"]["dimensions"]
    paths = {}
    for name, d in (("base", base), ("no_asr", no_asr), ("reads", reads), ("unknown", unknown)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(d))
    assert compare([paths["base"], paths["no_asr"]])["settings_differ"] == []
    assert compare([paths["base"], paths["reads"]])["settings_differ"] == ["transcripts (--asr)"]
    assert compare([paths["base"], paths["unknown"]])["settings_differ"] == ["transcripts (--asr)"]
    # a column scored without a judge (check --json) has nothing transcripts could move, and the
    # note says which column has no judge (a trial read "different transcripts, judge")
    nojudge = copy.deepcopy(no_asr)
    del nojudge["judge_info"]
    nojudge["source"]["asr"] = True
    nojudge["summary"]["mean_p_human"], nojudge["judge"] = None, []  # as `score --judge none` writes it
    paths["nojudge"] = tmp_path / "nojudge.json"
    paths["nojudge"].write_text(json.dumps(nojudge))
    assert compare([paths["no_asr"], paths["nojudge"]])["settings_differ"] == [
        "judge (B scored without one: no P(human) or dimensions there)"]
    # a P(human) whose judge the result does not name (judge_info deleted by hand) is not "scored
    # without one" beside its row of P(human), and gets no better/worse there (a trial)
    unnamed = copy.deepcopy(no_asr)
    del unnamed["judge_info"]
    paths["unnamed"] = tmp_path / "unnamed.json"
    paths["unnamed"].write_text(json.dumps(unnamed))
    doc = compare([paths["no_asr"], paths["unnamed"]])
    assert doc["settings_differ"] == ["judge (B names no judge: its judge_info is missing, so its P(human) cannot "
                                      "be traced to a head)"]
    assert {r["metric"]: r for r in doc["rows"]}["mean_p_human"]["verdicts"][1] == ""


def test_rules_footer_names_each_rule_once():
    """The footer printed "lower: lower is better (...)" five times; each kind is said once, with
    the rows it applies to."""
    from livejudge.commands.compare import rules_text

    rows = [{"metric": m, "label": m} for m in ("latency_p50_s", "latency_p90_s", "yield_mean_s",
                                                 "agent_talk_over_count", "mean_p_human", "dim_rhythm",
                                                 "dim_intonation", "overlap_ratio")]
    text = rules_text(rows)
    assert text.count("lower is better") == 1 and text.count("higher is better") == 1
    assert "lower is better: yield_mean_s, agent_talk_over_count" in text
    assert "higher is better: mean_p_human, dimensions (1 machine-like … 5 human-like)" in text
    assert "latency_p50_s, latency_p90_s" in text and "overlap_ratio" not in text


def test_different_verdict_thresholds_are_noted(tmp_path):
    """Two scores of one call, one with --yield-max-s 0.3, differed by a flagged moment and compare
    said "worse" with no note (a new user's trial): the verdict thresholds are a setting too."""
    a = {**_doc(1.0, 1.2, 0.3, 0.5, 3.0), "verdict_config": {"yield_max_s": 1.0}}
    b = {**a, "verdict_config": {"yield_max_s": 0.3}}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert compare([tmp_path / "a.json", tmp_path / "b.json"])["settings_differ"] == ["verdict thresholds"]
    assert compare([tmp_path / "a.json", tmp_path / "a.json"])["settings_differ"] == []


def test_results_of_another_livejudge_version_are_noted(tmp_path):
    """A trial faked livejudge_version 0.0.9 beside 0.1.0 and got no note; a result without the
    field (older) is unknown, not a difference."""
    a = {**_doc(1.0, 1.2, 0.3, 0.5, 3.0), "livejudge_version": "0.1.0"}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps({**a, "livejudge_version": "0.0.9"}))
    (tmp_path / "c.json").write_text(json.dumps(_doc(1.0, 1.2, 0.3, 0.5, 3.0)))
    assert compare([tmp_path / "a.json", tmp_path / "b.json"])["settings_differ"] == [
        "livejudge version (A 0.1.0, B 0.0.9)"]
    assert compare([tmp_path / "a.json", tmp_path / "c.json"])["settings_differ"] == []


def test_a_timing_change_within_the_measured_error_is_the_same(tmp_path):
    """p90 1.26 → 1.23 s on the same agent read "better" (a new user's trial): a latency or yield
    change no larger than the measured timing error (one measurement's p95 |error| on
    vad_bounds' target set) is "same"; a larger one keeps its verdict. P(human) and the counts
    keep the shown-precision rule."""
    from livejudge.commands.compare import SAME_TEXT, TIMING_TOLERANCE_S, verdict
    from livejudge.timing.metrics import MEASURED_TIMING_ERROR as E

    lat, yld = E.latency_p95_abs_s, E.yield_p95_abs_s
    assert 0.0 < lat < yld < 0.5
    assert TIMING_TOLERANCE_S == {"latency_p50_s": lat, "latency_p90_s": lat, "yield_mean_s": yld}
    assert verdict("latency_p90_s", 1.26, 1.23) == "same"
    assert verdict("latency_p90_s", 1.26, 1.26 - lat + 0.005) == "same"
    assert verdict("latency_p90_s", 1.26, 1.26 - lat - 0.01) == "better"
    assert verdict("latency_p50_s", 0.80, 0.80 + lat + 0.01) == "worse"
    assert verdict("latency_p50_s", 0.30, 0.60) == "same"  # both inside the human band, as before
    assert verdict("yield_mean_s", 0.40, 0.40 + yld - 0.01) == "same"
    assert verdict("yield_mean_s", 0.40, 0.40 + yld + 0.01) == "worse"
    assert verdict("mean_p_human", 0.00, 0.02) == "better"  # no measured tolerance for P(human)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_doc(1.20, 1.26, 0.2, 0.5, 2.0)))
    b.write_text(json.dumps(_doc(1.18, 1.23, 0.2, 0.5, 2.0)))
    doc = compare([a, b])
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["latency_p90_s"]["verdicts"] == ["same", "same"] and rows["latency_p50_s"]["verdicts"][1] == "same"
    assert doc["timing_tolerance_s"] == TIMING_TOLERANCE_S
    assert f"latency {lat * 1000:.0f} ms" in SAME_TEXT and f"yield {yld * 1000:.0f} ms" in SAME_TEXT
    assert SAME_TEXT[1:-1] in render_html(doc)
    import io

    from rich.console import Console

    from livejudge.commands.compare import print_table, rules_text

    buf = io.StringIO()
    print_table(doc, Console(file=buf, width=220))
    line = next(x for x in buf.getvalue().splitlines() if "response latency p90" in x)
    assert "1.23 (-0.03, same)" in line  # a shown change the rules call none says so
    assert "(+0.0" not in line and "same)" in render_html(doc)
    # the rules and tolerances are labelled HEURISTIC in the table, the page and the JSON (a trial
    # found only docs/cli.md said so)
    assert "better/worse rules (HEURISTIC):" in buf.getvalue() and "HEURISTIC" in render_html(doc)
    assert doc["rules_are"].startswith("HEURISTIC")
    # one item per row in the rules line: no row label holds a comma of its own
    assert "inside it the same" in rules_text(doc["rows"])
    assert all("," not in r["label"] for r in doc["rows"]
               if r["rule_short"] in ("lower", "higher") and not r["metric"].startswith("dim_"))


def test_calls_over_a_telephone_line_use_the_narrowband_timing_error(tmp_path):
    """compare read a latency change within 47 ms as "same" on telephone calls too, whose
    measured timing error is several times larger (the last note): a column whose summary counts
    a narrowband channel makes the timing rows use ``MEASURED_TIMING_ERROR_NARROWBAND``, and a
    note and the footer say so; wideband columns keep the wideband error."""
    from livejudge.commands.compare import TIMING_TOLERANCE_NARROWBAND_S, TIMING_TOLERANCE_S, same_text
    from livejudge.timing.metrics import MEASURED_TIMING_ERROR_NARROWBAND as N

    assert N.latency_p95_abs_s > TIMING_TOLERANCE_S["latency_p90_s"]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    shift = (TIMING_TOLERANCE_S["latency_p90_s"] + N.latency_p95_abs_s) / 2  # between the two errors
    # the caller's channel narrowband: latencies get the narrowband error; the agent's alone (attach
    # --protocol twilio records its caller wideband) leaves latencies at the wideband one, as the verdicts do
    for channels, want in (([], "better"), (["user", "agent"], "same"), (["agent"], "better")):
        da, db = _doc(1.20, 1.80, 0.2, 0.5, 2.0), _doc(1.20, 1.80 - shift, 0.2, 0.5, 2.0)
        db["summary"]["narrowband_channel_count"] = len(channels)
        if channels:
            db["source"] = {"kind": "score", "line": {"channels": channels, "note": "narrowband"}}
        a.write_text(json.dumps(da))
        b.write_text(json.dumps(db))
        doc = compare([a, b])
        rows = {r["metric"]: r for r in doc["rows"]}
        assert rows["latency_p90_s"]["verdicts"][1] == want, (channels, rows["latency_p90_s"])
        tol = doc["timing_tolerance_s"]
        assert tol["latency_p90_s"] == (N.latency_p95_abs_s if "user" in channels else TIMING_TOLERANCE_S["latency_p90_s"])
        assert tol["yield_mean_s"] == (TIMING_TOLERANCE_NARROWBAND_S if "agent" in channels else TIMING_TOLERANCE_S)[
            "yield_mean_s"]
        said = [n for n in doc["notes"] if "telephone line" in n]
        assert len(said) == bool(channels) and (not channels or "b.json came over a telephone line" in said[0])
        footer = same_text(doc)
        assert f"latency {tol['latency_p50_s'] * 1000:.0f} ms" in footer, footer
        assert ("--sets telephone" in footer) == bool(channels)


def test_the_timing_error_is_the_stored_benchmark_run():
    """MEASURED_TIMING_ERROR and the docs' figures come from the stored vad_bounds run."""
    from pathlib import Path

    from livejudge.timing.metrics import MEASURED_TIMING_ERROR as E

    root = Path(__file__).resolve().parents[1]
    run = json.loads((root / "benchmarks/results/vad_bounds.json").read_text())
    st = run["result"]["summary"]["adaptive"]
    assert E.latency_p95_abs_s == pytest.approx(st["latency_p95_abs_ms"] / 1000, abs=5e-5)
    assert E.yield_p95_abs_s == pytest.approx(st["yield_p95_abs_ms"] / 1000, abs=5e-5)
    assert "--sets target" in run["command"] and run["commit"]
    assert "benchmarks/results/vad_bounds.json" in E.source
    assert f"{st['n_latency']} latencies, {st['n_yield']} yields" in E.source
    cli = (root / "docs/cli.md").read_text()
    assert (f"of one latency {st['latency_p95_abs_ms']:.0f} ms, of one yield {st['yield_p95_abs_ms']:.0f} ms"
            in cli)


def test_the_narrowband_timing_error_is_the_stored_benchmark_run():
    """MEASURED_TIMING_ERROR_NARROWBAND (what within_timing_error uses on a telephone call) and the
    docs' figure come from the stored vad_bounds --sets telephone run."""
    from pathlib import Path

    from livejudge.timing.metrics import MEASURED_TIMING_ERROR_NARROWBAND as E

    root = Path(__file__).resolve().parents[1]
    run = json.loads((root / "benchmarks/results/vad_bounds_narrowband.json").read_text())
    st = run["result"]["telephone"]["adaptive"]
    assert E.latency_p95_abs_s == pytest.approx(st["latency_p95_abs_ms"] / 1000, abs=5e-5)
    assert E.yield_p95_abs_s == pytest.approx(st["yield_p95_abs_ms"] / 1000, abs=5e-5)
    assert "--sets telephone" in run["command"] and run["commit"]
    assert f"{st['n_latency']} latencies, {st['n_yield']} yields" in E.source
    assert f"of one latency {st['latency_p95_abs_ms']:.0f} ms" in (root / "docs/verdicts.md").read_text()


def test_a_quicker_yield_that_talks_through_more_barge_ins_gets_a_note(tmp_path):
    """rude's yield time 0.79 → 0.64 s read "better" while it talked through 3 of its 5 barge-ins
    (a new user's trial): the yield time counts only the barge-ins yielded to, so a note says so.
    A quicker yield that talks through no more gets no note; within the timing error, none either."""
    def doc(yield_s, through):
        return {"summary": {"yield_mean_s": yield_s, "yield_none_count": through}}
    paths = []
    for name, d in (("polite", doc(0.79, 0)), ("rude", doc(0.64, 3)), ("fixed", doc(0.50, 0)),
                    ("near", doc(0.75, 3))):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    out = compare(paths)
    rows = {r["metric"]: r for r in out["rows"]}
    assert rows["yield_mean_s"]["verdicts"][1:] == ["better", "better", "same"]
    assert out["notes"] == ["B (rude.json) yields sooner on the barge-ins it yielded to but talked through more "
                            "of them (0 → 3): the yield time leaves the barge-ins it talked through out"]


def _judged(p_human, rhythm, version="0.3.0"):
    d = _doc(0.6, 0.9, p_human, 0.4, rhythm)
    d["judge_info"] = {"backbone": "whisper-tiny-v2", "head": "whisper-fitted", "head_version": version}
    return d


def test_a_judge_change_within_the_between_call_spread_is_the_same(tmp_path, monkeypatch):
    """A dimension's 1.8 → 1.9 read "better" although two calls of one unchanged agent differ by
    more (a new user's trial). Between single calls scored by the head whose spread was measured,
    a change of mean P(human) or of a dimension within the spread reads "same", a larger one keeps
    its verdict; a batch column, another head or another version keeps the shown-digit rule, and
    the footer names the spread only where it applied."""
    import livejudge.commands.compare as C

    spread = {"judge": "whisper-tiny-v2 / whisper-fitted 0.3.0", "n_voices": 9, "calls_per_voice": 5,
              "tolerance": {"mean_p_human": 0.17, "dim_rhythm": 0.3}, "source": "test"}
    monkeypatch.setattr(C, "judge_spread", lambda: spread)
    paths = []
    for i, (p, r, v) in enumerate([(0.40, 1.8, "0.3.0"), (0.55, 2.0, "0.3.0"), (0.60, 2.2, "0.3.0"), (0.55, 2.0, "0.2.0")]):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(_judged(p, r, v)))
    doc = compare(paths[:3])
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["mean_p_human"]["verdicts"][1:] == ["same", "better"]  # +0.15 within 0.17; +0.20 beyond
    assert rows["dim_rhythm"]["verdicts"][1:] == ["same", "better"]  # +0.2 within 0.3; +0.4 beyond
    assert doc["judge_tolerance"] == {"mean_p_human": 0.17, "dim_rhythm": 0.3}
    assert "mean P(human) within 0.170 and dimension scores within 0.300" in C.same_text(doc)
    assert "on 9 voices" in render_html(doc)
    # each judge row's spread is shown beside its rule, in the table and the page (it was only in
    # --json: "+0.1, better" beside "+0.1, same" read as a contradiction; a trial)
    from rich.console import Console

    con = Console(record=True, width=200)
    C.print_table(doc, console=con)
    table = con.export_text()
    assert "higher, ±0.170 same" in table and "higher, ±0.300 same" in table
    assert "±0.170 same" in render_html(doc) and C.same_within(doc, "latency_p90_s") == ""
    other = compare([paths[0], paths[3]])  # another version of the head: its spread is not measured
    assert other["judge_tolerance"] == {} and C.same_text(other).startswith(C.SAME_TEXT[:-1])
    assert "the judge rows keep the shown-precision rule here" in C.same_text(other)  # said outright
    # and another version is another instrument: its judge rows get no better/worse at all (a later
    # trial read "+1.00, better" between two heads named alike)
    assert {r["metric"]: r for r in other["rows"]}["dim_rhythm"]["verdicts"][1] == ""
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "summary.json").write_text(json.dumps({"n_scored": 3, "calls": [], "medians": {"mean_p_human": 0.5}}))
    mixed = compare([paths[0], batch])
    assert mixed["judge_tolerance"] == {} and {r["metric"]: r for r in mixed["rows"]}["mean_p_human"]["verdicts"][1] == "better"


def test_the_judge_spread_is_the_stored_benchmark_run():
    """The package's spread (what compare reads) is benchmarks/judge_repeatability.py's stored
    run, of the default head as it ships, every tolerance 1.96 * sqrt(2) times its pooled SD."""
    import math
    import sys
    from pathlib import Path

    from livejudge.commands.compare import judge_spread

    root = Path(__file__).resolve().parents[1]
    run = json.loads((root / "benchmarks/results/judge_repeatability.json").read_text())
    sys.path.insert(0, str(root / "benchmarks"))
    import judge_repeatability as R

    assert judge_spread() == R.package_spread(run, root / "benchmarks/results/judge_repeatability.json")
    for m in run["metrics"].values():
        assert m["tolerance"] == pytest.approx(1.96 * math.sqrt(2) * m["sd"], abs=2e-4) and m["n_voices"] >= 2
    assert "mean_p_human" in run["metrics"] and run["calls_per_voice"] >= 3
    shipped = json.loads((root / "livejudge/judge/heads/whisper-fitted/config.json").read_text())
    assert judge_spread()["judge"].endswith(f"whisper-fitted {shipped['version']}")


def test_a_batch_shows_its_dimensions_as_a_call_does(tmp_path):
    """A batch's summary carries its judge's dimension view (judge_info.dimensions), so compare
    merges the dimensions that share one learned score and names the unmeasured ones for batches
    as for calls (a trial: 18 rows, the shared three apart, for a batch; one merged row for a call)."""
    view = {"groups": [["micro_physiological_noise", "pronunciation_instability", "accent"], ["rhythm"]],
            "not_measured": {"textual_sentiment": "the head reads no text"}}
    cols = []
    for name, p in (("b1", 0.2), ("b2", 0.4)):
        d = tmp_path / name
        d.mkdir()
        (d / "summary.json").write_text(json.dumps({"n_scored": 2, "calls": [], "judge_info": {"dimensions": view},
                                                    "medians": {"mean_p_human": p, "dim_rhythm": 3.0}}))
        cols.append(d)
    rows = {r["metric"]: r for r in compare(cols)["rows"]}
    assert "dim_accent" not in rows and "dim_pronunciation_instability" not in rows
    assert "+2 sharing its score" in rows["dim_micro_physiological_noise"]["label"]
    assert rows["dim_textual_sentiment"]["label"].endswith(NOT_MEASURED_SUFFIX)


def test_calls_over_different_routes_are_noted(tmp_path):
    """One bot over the eval wire and over WebRTC read "+0.23 s, worse" with no note, although
    WebRTC's jitter buffer and Opus add about 0.1 s to every latency (a trial)."""
    def doc(route, delay=None):
        src = {"kind": "attach", "url": "http://127.0.0.1:7860", "protocol": "pipecat",
               "runner": {"url": "http://127.0.0.1:7860", "route": route}}
        if delay is not None:
            src["webrtc"] = {"added_delay_ms": delay}
        return {"summary": {"latency_p50_s": 1.8 if delay is None else 2.0}, "source": src}
    paths = []
    for name, d in (("eval", doc("eval")), ("rtc", doc("webrtc", 101.7)), ("eval2", doc("eval"))):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    assert compare(paths[:2])["settings_differ"] == ["route"]
    assert compare([paths[0], paths[2]])["settings_differ"] == []


def test_a_column_with_input_warnings_gets_a_note(tmp_path):
    """A trial compared a call on a −32 dBFS line: "worse" and "better" verdicts, no word of its two
    noisy_line warnings. A column whose input carried warnings now gets a note; a clean one none."""
    paths = []
    for name, n in (("base", 0), ("noisy", 2)):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps({"summary": {"latency_p50_s": 1.0, "input_health_warning_count": n}}))
        paths.append(p)
    notes = compare(paths)["notes"]
    assert len(notes) == 1 and notes[0].startswith("B (noisy.json): its input carries 2 input-health warning(s)")


def test_a_call_cut_short_is_said_not_read_as_better(tmp_path, capsys):
    """A trial compared a 20-minute call with a run of it stopped at 86.6 s: "flagged moments
    107 → 7 (-100, better)", and nothing said the second call was cut short."""
    full, cut = _doc(0.8, 1.5, 0.3, 0.4, 2.0), _doc(0.8, 1.5, 0.3, 0.4, 2.0)
    full["source"] = {"kind": "score", "ended": "end of input"}
    cut["source"] = {"kind": "score", "ended": "interrupted (Ctrl-C)"}
    cut["duration_s"] = 86.6
    a, b = tmp_path / "full.json", tmp_path / "cut.json"
    a.write_text(json.dumps(full))
    b.write_text(json.dumps(cut))
    cut["summary"]["agent_talk_over_count"] = 0  # fewer over the part scored: no "better" for it
    b.write_text(json.dumps(cut))
    doc = compare([a, b])
    notes = doc["notes"]
    said = [n for n in notes if "cut short" in n]
    assert said == ["B (cut.json): the call was cut short (interrupted (Ctrl-C)) after 86.6 s: its figures cover "
                    "only that part, so fewer flags or a quicker p90 there are not an improvement (its rows have no "
                    "verdict); compare calls that ran to their end"], notes
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["agent_talk_over_count"]["values"] == [1, 0] and rows["agent_talk_over_count"]["verdicts"][1] == ""
    # a latency over part of the call too (a re-check: "p90 1.98 → 1.09, better" had lost the slow reply)
    assert rows["latency_p90_s"]["verdicts"][1] == ""
    full_rows = {r["metric"]: r for r in compare([a, a])["rows"]}
    assert full_rows["agent_talk_over_count"]["verdicts"][1] == "same"
    assert not any("cut short" in n for n in compare([a, a])["notes"])
    assert main(["compare", str(a), str(b)]) == 0
    assert "B (cut.json): the call was cut short" in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")
    # a batch stopped by a signal says so beside its medians (a trial read "medians over 0 calls")
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "summary.json").write_text(json.dumps({"n_scored": 1, "n_skipped": 2, "n_calls": 3, "calls": [],
                                                    "stopped": "SIGTERM after 1 of 3 calls had finished: 1 "
                                                               "interrupted (partial results), 1 not started",
                                                    "medians": {"latency_p50_s": 0.8}}))
    assert compare([a, batch])["columns"][1]["kind"] == (
        "batch: medians over 1 call (2 of 3 not scored); stopped: SIGTERM after 1 of 3 calls had finished: 1 "
        "interrupted (partial results), 1 not started")


def _barge_call(yield_s, seed):
    """A call from real clips: a question, a reply, a caller barge-in 1.5 s into the second reply
    that the agent yields to after ``yield_s`` (None: it talks through), an answer."""
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(seed=seed, noise_dbfs=-55.0)
    b.user("cmu_cards_005")
    b.agent("espeak_reply_01", gap_s=0.6)
    b.user("cmu_cards_003", gap_s=0.7)
    b.agent("espeak_reply_05", gap_s=0.6)
    b.user("cmu_cards_002", barge_in_after_s=1.5, agent_yield_s=yield_s)
    b.agent("espeak_reply_04", gap_s=0.6)
    return b.build()


def test_a_batch_compare_names_the_call_that_got_worse_and_can_gate_on_it(tmp_path, capsys):
    """A trial: in the 'after' batch one call went from yielding to a barge-in to talking through
    it; the medians read "1 → 1 (+0)", nothing said which call moved, and compare could not fail
    CI on "worse than before". Each call paired by file name is now checked by the same rules, and
    --fail-if-worse gates the columns (medians) or, with --gate-each, the paired calls."""
    from livejudge.commands.cli import main
    from livejudge.commands.compare import worse_gates

    for name, changed in (("before", None), ("after", "c.wav")):
        d = tmp_path / name
        d.mkdir()
        for k, f in enumerate(("a.wav", "b.wav", "c.wav")):
            _barge_call(None if f == changed else 0.5, seed=k).write(d / f)
        assert main(["score", str(d), "--out-dir", str(tmp_path / f"r_{name}"), "--judge", "none", "--asr", "off"]) == 0
    capsys.readouterr()
    before, after = str(tmp_path / "r_before"), str(tmp_path / "r_after")
    doc = compare([before, after])
    row = next(r for r in doc["rows"] if r["metric"] == "yield_none_count")
    assert row["values"] == [0, 0]  # the medians hide it
    moved = {x["file"]: [(w["metric"], w["base"], w["new"]) for w in x["worse"]] for x in doc["per_call"]}
    assert ("yield_none_count", 0, 1) in moved["c.wav"], moved
    assert not any(x["file"] in ("a.wav", "b.wav") and x["worse"] for x in doc["per_call"])
    assert main(["compare", before, after]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "B: c.wav worse: barge-ins the agent talked through 0 → 1" in out
    assert main(["compare", before, after, "--fail-if-worse", "yield_none_count"]) == 0  # the medians held
    assert "1 of 1 --fail-if-worse gate(s) passed" in capsys.readouterr().err
    assert main(["compare", before, after, "--fail-if-worse", "yield_none_count", "--gate-each",
                 "--json", str(tmp_path / "cmp.json")]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert "FAIL worse yield_none_count: barge-ins the agent talked through: c.wav in B worse than in A, 0 → 1" in err
    kept = json.loads((tmp_path / "cmp.json").read_text())["gates"]
    assert kept == [{"gate": "worse yield_none_count", "metric": "yield_none_count", "failed": True,
                     "reason": "barge-ins the agent talked through: c.wav in B worse than in A, 0 → 1"}]
    # a column without the value cannot be compared: the gate fails, as an unmeasured --fail-if does
    doc2 = compare([before, after])
    doc2["rows"] = [dict(r, values=[r["values"][0], None], verdicts=[r["verdicts"][0], ""])
                    if r["metric"] == "latency_p90_s" else r for r in doc2["rows"]]
    g, = worse_gates(doc2, ["latency_p90_s"])
    assert g["failed"] and "B (r_after) cannot be compared" in g["reason"] and "no value in B" in g["reason"]
    # batches whose calls cannot be paired fail --gate-each rather than pass it unchecked
    doc2["unpaired"] = [1]
    g, = worse_gates(doc2, ["yield_none_count"], each=True)
    assert g["failed"] and "B's calls could not be paired with A's by file name" in g["reason"]
    # a metric without a rule, and --gate-each alone, are usage errors
    assert main(["compare", before, after, "--fail-if-worse", "latency_mean_s"]) == 2
    assert "'latency_mean_s' has no better/worse rule" in capsys.readouterr().err
    assert main(["compare", before, after, "--gate-each"]) == 2


def test_columns_of_the_same_file_name_are_told_apart(tmp_path):
    from livejudge.commands.compare import column_names

    assert column_names(["res_before/c1.json", "res_after/c1.json", "x/d.json"]) == [
        "res_before/c1.json", "res_after/c1.json", "d.json"]
    assert column_names(["a/r/c1.json", "b/r/c1.json"]) == ["a/r/c1.json", "b/r/c1.json"]


def _summary(tmp_path, name, calls):
    """A batch summary.json of ``calls`` ({file: metrics}), medians from them."""
    from livejudge.commands.gates import batch_metrics

    d = tmp_path / name
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({
        "medians": batch_metrics(calls.values()), "n_scored": len(calls), "n_calls": len(calls),
        "calls": [{"file": f, "status": "ok", "metrics": m} for f, m in calls.items()]}))
    return d


def test_each_pair_and_each_column_gets_its_own_timing_tolerance(tmp_path):
    """A trial: in batch compare a telephone call's p50 0.70 → 0.96 read "worse" (the wideband
    47 ms), while compare of the same two calls alone read "same" (its narrowband error); and one
    narrowband column widened every column's "same". Each paired call and each column against the
    first now get the tolerance of their own lines."""
    from livejudge.commands.compare import TIMING_TOLERANCE_NARROWBAND_S as NB
    from livejudge.commands.compare import TIMING_TOLERANCE_S as WB

    shift = (WB["latency_p50_s"] + NB["latency_p50_s"]) / 2  # beyond the wideband error, within the narrowband
    call = {"latency_p50_s": 0.70, "latency_p90_s": 0.9, "narrowband_channel_count": 0}
    before = _summary(tmp_path, "before", {"a.wav": dict(call), "tel.wav": dict(call, narrowband_channel_count=2)})
    after = _summary(tmp_path, "after", {
        "a.wav": dict(call, latency_p50_s=0.70 + shift),  # wideband: worse
        "tel.wav": dict(call, latency_p50_s=0.70 + shift, narrowband_channel_count=2)})  # narrowband: same
    doc = compare([before, after])
    worse = {x["file"]: [w["metric"] for w in x["worse"]] for x in doc["per_call"]}
    assert worse == {"a.wav": ["latency_p50_s"]}, doc["per_call"]
    # three calls: B wideband and slower by `shift` (worse), C over a telephone line (same)
    paths = []
    for name, p50, lines in (("a", 0.70, []), ("b", 0.70 + shift, []), ("c", 0.70 + shift, ["user", "agent"])):
        d = _doc(p50, 0.9, 0.5, 0.4, 3.0)
        d["summary"]["narrowband_channel_count"] = len(lines)
        if lines:
            d["source"] = {"kind": "score", "line": {"channels": lines, "note": "narrowband"}}
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(d))
    doc = compare(paths)
    row = next(r for r in doc["rows"] if r["metric"] == "latency_p50_s")
    assert row["verdicts"][1:] == ["worse", "same"], row
    by_col = doc["timing_tolerance_s_by_column"]
    assert [t["latency_p50_s"] for t in by_col] == [WB["latency_p50_s"], WB["latency_p50_s"], NB["latency_p50_s"]]
    assert doc["timing_tolerance_s"]["latency_p50_s"] == NB["latency_p50_s"]  # the widest, as the footer says


def test_flags_within_the_timing_error_do_not_make_a_call_worse(tmp_path):
    """A trial: a noisier recording of one call moved a latency 8 ms across the 0.74 s line; every
    timing row read "same" but "flagged moments 3 → 4, worse" failed --fail-if-worse any. Better/worse
    on that row counts the flags beyond the timing error (verdict_flagged_moment_beyond_error_count)."""
    from livejudge.commands.cli import main

    def doc(flagged, firm):
        d = _doc(0.75, 0.9, 0.5, 0.4, 3.0)
        d["summary"].update(verdict_flagged_moment_count=flagged, verdict_flagged_moment_beyond_error_count=firm)
        return d

    paths = []
    for name, d in (("base", doc(3, 3)), ("noisy", doc(4, 3)), ("worse", doc(4, 4))):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(d))
    out = compare(paths)
    row = next(r for r in out["rows"] if r["metric"] == "verdict_flagged_moment_count")
    assert row["values"] == [3, 4, 4] and row["verdicts"][1:] == ["same", "worse"]
    assert "beyond the timing error" in row["rule"]
    # 3 vs 4 flagged, of other kinds, read "same": the note says a like number, not "as many" (a trial)
    d0, d1 = doc(3, 3), doc(4, 3)
    d0["summary"]["verdict_pause_cut_in_count"], d1["summary"]["verdict_barge_in_talked_through_count"] = 3, 4
    mix = [tmp_path / "m0.json", tmp_path / "m1.json"]
    mix[0].write_text(json.dumps(d0))
    mix[1].write_text(json.dumps(d1))
    note, = [n for n in compare(mix)["notes"] if "(flagged verdicts)" in n]
    assert "flag a like number of moments (the difference within the timing error) but different ones" in note
    assert main(["compare", str(paths[0]), str(paths[1]), "--fail-if-worse", "any"]) == 0
    from livejudge.commands.compare import worse_gates

    g, = worse_gates(compare(paths[:2]), ["verdict_flagged_moment_count"])
    assert not g["failed"] and g["reason"] == "flagged moments (per-event verdicts): worse in no column"  # was "no any"
    assert main(["compare", str(paths[0]), str(paths[2]), "--fail-if-worse", "verdict_flagged_moment_count"]) == 3
    # 'any' leaves out a row no column measured (it listed an unmeasured mean P(human) as passed)
    for p_ in paths[:2]:
        d = json.loads(p_.read_text())
        d["summary"]["mean_p_human"], d["judge"] = None, []
        p_.write_text(json.dumps(d))
    doc_none = compare(paths[:2])
    assert "mean_p_human" not in [g["metric"] for g in worse_gates(doc_none, ["mean_p_human", "latency_p50_s"],
                                                                    explicit=set())]
    named, = worse_gates(doc_none, ["mean_p_human"])  # named explicitly: cannot be compared, fails
    assert named["failed"] and "no value in A" in named["reason"]
    # a result without the firm count keeps the total's verdict
    old = doc(4, 3)
    del old["summary"]["verdict_flagged_moment_beyond_error_count"]
    paths[1].write_text(json.dumps(old))
    row = next(r for r in compare(paths[:2])["rows"] if r["metric"] == "verdict_flagged_moment_count")
    assert row["verdicts"][1] == "worse"


def test_a_column_without_a_judge_does_not_change_the_judge_rows_rule(tmp_path, monkeypatch):
    """A trial: A and B, single calls of the spread's head, read "same" for 0.03 → 0.00 (within the
    spread); a third column scored with --judge none turned that into "worse". docs/cli.md says a
    column scored without a judge beside them changes nothing in that."""
    import livejudge.commands.compare as C

    spread = {"judge": "whisper-tiny-v2 / whisper-fitted 0.3.0", "n_voices": 9, "calls_per_voice": 5,
              "tolerance": {"mean_p_human": 0.17, "dim_rhythm": 0.3}, "source": "test"}
    monkeypatch.setattr(C, "judge_spread", lambda: spread)
    a, b, off = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "off.json"
    a.write_text(json.dumps(_judged(0.40, 1.8, "0.3.0")))
    b.write_text(json.dumps(_judged(0.30, 1.8, "0.3.0")))
    nojudge = _judged(0.40, 1.8, "0.3.0")
    nojudge.pop("judge_info")
    nojudge["judge"] = []
    nojudge["summary"]["mean_p_human"] = None
    off.write_text(json.dumps(nojudge))
    two, three = compare([a, b]), compare([a, b, off])
    assert two["judge_tolerance"] == three["judge_tolerance"] == {"mean_p_human": 0.17, "dim_rhythm": 0.3}
    assert {r["metric"]: r for r in three["rows"]}["mean_p_human"]["verdicts"][1] == "same"
