"""The meter fits 80×24 and shows what the session measured; plain lines when piped."""

import io

from livejudge.judge.model.judge import PRIOR_ACOUSTIC_HEAD, load_judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue
from livejudge.outputs.meter import PlainLines, render_text


def _session():
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=load_judge("acoustic", head=PRIOR_ACOUSTIC_HEAD))  # shows the PRIOR label
    return d, s


def test_meter_fits_80x24_and_shows_the_numbers():
    d, s = _session()
    stream_call(s, d.call)
    r = s.close()
    text = render_text(s, "replay example_call.wav")
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 24
    assert max(len(line) for line in lines) <= 80
    p50 = r["summary"]["latency_p50_s"]
    assert f"p50 {p50:.2f}" in text
    assert f"P(human) {r['judge'][-1]['p_human']:4.2f}" in text
    assert f"user barge-ins {r['summary']['user_barge_in_count']}" in text
    # the agent's start 0.3 s before the user ended is an early start (as its verdict says), not a talk-over
    assert (r["summary"]["agent_talk_over_count"], r["summary"]["agent_early_start_count"]) == (0, 1)
    assert "talk-overs 0 (+1 early) · overlap" in text
    assert "intonation" in text and "PRIOR" in text


def test_plain_lines_print_one_line_per_window():
    d, s = _session()
    buf = io.StringIO()
    s.add_sink(PlainLines(s, buf, events=False))
    stream_call(s, d.call)
    r = s.close()
    lines = [x for x in buf.getvalue().splitlines() if x.startswith("[t=")]
    assert len(lines) == len(r["judge"])
    assert "P(human)=" in lines[-1] and "p50=" in lines[-1]


def test_a_window_judged_after_later_audio_says_when_its_timing_was_read():
    """A trial: at --speed max a line "[t=32.0s] ... replies=5" counted a reply at 35.8 s; the
    judge never holds up audio, so its window's result arrives after later audio was measured.
    Such a line now says when the timing counts were read; a line on time says nothing more."""
    from livejudge.events import JudgeResult
    from livejudge.outputs.meter import TIMING_AT_LAG_S

    d, s = _session()
    got = []

    class Keep:
        def on_event(self, e):
            if isinstance(e, JudgeResult):
                got.append(e)

    s.add_sink(Keep())
    stream_call(s, d.call)
    buf = io.StringIO()
    plain = PlainLines(s, buf, events=False)
    early = got[0]
    assert s.now_s - early.t_s >= TIMING_AT_LAG_S
    plain.on_event(early)
    assert f"[t={early.t_s:7.1f}s] P(human)=" in buf.getvalue() and f"timing-at={s.now_s:.1f}s latency" in buf.getvalue()
    import dataclasses

    buf.truncate(0)
    plain.on_event(dataclasses.replace(early, t_s=s.now_s - 0.2))
    assert "timing-at=" not in buf.getvalue() and "P(human)=" in buf.getvalue()
    s.close()


def test_plain_lines_piped_are_one_record_per_line():
    """Piped into a file or CI log (not a TTY), each record stays on one line, so it can be
    grepped (a new user found them hard-wrapped at 80 columns)."""
    d, s = _session()
    buf = io.StringIO()  # not a TTY
    s.add_sink(PlainLines(s, buf, events=True))
    stream_call(s, d.call)
    s.close()
    lines = buf.getvalue().splitlines()
    assert any(len(x) > 80 for x in lines)
    assert not any(x.startswith("    ") for x in lines)  # no continuation lines
    assert all(x.startswith(("[", "judge ", "livejudge")) for x in lines if x), lines[:5]


def _scored(kind="acoustic"):
    d = example_dialogue(seed=0)
    judge = load_judge(kind)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=judge)
    stream_call(s, d.call)
    s.close()
    return s, judge


def test_plain_line_counts_gated_and_not_measured_dimensions_apart():
    """A dimension the head does not measure (no feature of its own: ``info()["dimensions"]
    ["not_measured"]``) is gated in every window; the plain line used to count it in
    "gated-dimensions=N/18", which reads as "measured, held back for too little evidence"."""
    import dataclasses

    from livejudge.events import JudgeResult

    s, judge = _scored()
    off = set(judge.info()["dimensions"]["not_measured"])
    real = s.judge_results[-1]
    assert isinstance(real, JudgeResult) and off and all(real.dimensions[d].gated for d in off)
    # the last real window, with exactly two measured dimensions gated for too little evidence
    held = {"rhythm", "intonation"}
    assert not held & off
    dims = {d: x if d in off else dataclasses.replace(x, gated=d in held) for d, x in real.dimensions.items()}
    event = dataclasses.replace(real, dimensions=dims)
    buf = io.StringIO()
    PlainLines(s, buf, events=False).on_event(event)
    line = buf.getvalue().splitlines()[-1]
    assert f" gated-dimensions=2/{18 - len(off)} not-measured={len(off)} " in line, line
    # the real window as it came: its gated measured dimensions only
    g = sum(1 for d, x in real.dimensions.items() if x.gated and d not in off)
    buf = io.StringIO()
    PlainLines(s, buf, events=False).on_event(real)
    assert f" gated-dimensions={g}/{18 - len(off)} not-measured={len(off)} " in buf.getvalue()
    # a judge that does not say what it measures: all 18 counted, not measured unknown
    s.judge = None
    buf = io.StringIO()
    PlainLines(s, buf, events=False).on_event(event)
    assert f" gated-dimensions={2 + len(off)}/18 not-measured=– " in buf.getvalue()


def test_meter_header_names_the_judging_head_and_its_version():
    """The header said the backbone ("acoustic-v1") but not which head, of which version, judged."""
    s, judge = _scored()
    info = judge.info()
    label = f"{info['head']} {info['head_version']}"
    assert info["head"] == judge.config.name and info["head_version"] == judge.config.version
    for title in ("replay example_call.wav", "replay " + "x" * 120 + ".wav"):
        for height in (24, 30):
            lines = render_text(s, title, height=height).rstrip("\n").split("\n")
            assert lines[0].startswith("livejudge") and lines[0].endswith(label), lines[0]
            assert len(lines[0]) <= 80 and "user ○ agent ○" in lines[0]


def test_pulls_towards_names_a_shared_score_once_with_its_members_summed():
    """Dimensions that share one learned score (``info()["dimensions"]["groups"]``) were each named on
    the "pulls towards" line, as if one score were two or three pieces of evidence; merged, they are
    named once ("<first>+N") with the sum of their contributions (log-odds)."""
    from types import SimpleNamespace as NS

    from livejudge.outputs.meter import SHORT_NAMES, merge_shared, top_line

    view = {"groups": [["rhythm"], ["micro_physiological_noise", "pronunciation_instability", "accent"]]}
    items = [("rhythm", NS(contribution=-0.30)), ("micro_physiological_noise", NS(contribution=0.50)),
             ("pronunciation_instability", NS(contribution=0.25)), ("accent", NS(contribution=0.10))]
    merged = dict(merge_shared(items, view))
    assert set(merged) == {"rhythm", "micro_physiological_noise"}
    assert abs(merged["micro_physiological_noise"].contribution - 0.85) < 1e-9
    assert merged["micro_physiological_noise"].n_members == 3
    text = top_line(sorted(merged.items(), key=lambda kv: -abs(kv[1].contribution)), width=200).plain
    lead = SHORT_NAMES.get("micro_physiological_noise", "micro_physiological_noise")
    assert text == f"pulls towards machine: {lead}+2 0.85 · towards human: {SHORT_NAMES.get('rhythm', 'rhythm')} 0.30", text
    assert SHORT_NAMES.get("accent", "accent") not in text.replace(lead, "")
    assert merge_shared(items, None) == items  # a judge that does not say what it measures: as they come


def test_turn_log_words_barge_ins_as_the_verdicts_do():
    """The event line said "talk-over: user yielded 0.30s" where the verdict said "agent started
    0.30 s before the caller ended [ok]", and "agent kept talking" where it said "talked through"."""
    from livejudge.events import BargeIn
    from livejudge.outputs.meter import turn_log_line

    assert turn_log_line(BargeIn(by="agent", onset_s=35.8, yield_s=0.30)).endswith(
        "agent started in user speech: user ended 0.30s later")
    assert turn_log_line(BargeIn(by="agent", onset_s=35.8, yield_s=None)).endswith("user kept talking")
    assert turn_log_line(BargeIn(by="user", onset_s=30.4, yield_s=None)).endswith("barge-in: agent talked through")
    assert turn_log_line(BargeIn(by="user", onset_s=30.4, yield_s=0.38)).endswith("barge-in: agent yielded 0.38s")


def test_plain_line_says_what_pulls_p_human_as_the_meter_does():
    """Piped, the per-window line had no "pulls towards" part, which the rich meter shows (a new
    user's trial): it ends with the same words, the frame CNN included, and stays one line."""
    from livejudge.events import DimensionScore, JudgeResult

    def dim(c, gated=False):
        return DimensionScore(score=3.0, evidence=0.0 if gated else 10.0, evidence_unit="s", gated=gated,
                              contribution=0.0 if gated else c)

    dims = {"intonation": dim(1.11), "rhythm": dim(-0.37), "stress": dim(0.05), "accent": dim(0.0, gated=True)}
    event = JudgeResult(t_s=12.0, window_start_s=0.0, window_end_s=12.0, classifier_p_human=0.3,
                        dimensions=dims, frame_p_human=0.6, frame_contribution=-0.80)
    s = Session(SessionConfig())
    buf = io.StringIO()  # not a TTY
    PlainLines(s, buf, events=False).on_event(event)
    lines = buf.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(" · pulls towards machine: intonation 1.11 · towards human: frame CNN 0.80, "
                             "rhythm 0.37 (log-odds)"), lines[0]
    # without a frame readout the three strongest dimensions; a window without evidence: no pulls
    buf = io.StringIO()
    PlainLines(s, buf, events=False).on_event(JudgeResult(12.0, 0.0, 12.0, 0.3, dims))
    assert buf.getvalue().rstrip("\n").endswith(
        "pulls towards machine: intonation 1.11, stress 0.05 · towards human: rhythm 0.37 (log-odds)")
    gated = {k: dim(0.0, gated=True) for k in dims}
    buf = io.StringIO()
    PlainLines(s, buf, events=False).on_event(JudgeResult(12.0, 0.0, 12.0, 0.3, gated))
    assert "pulls" not in buf.getvalue() and "P(human)=–" in buf.getvalue()


def test_barge_in_row_counts_settled_verdicts_never_going_back():
    """A new user's trial saw the meter's "user barge-ins" go 1 → 2 → 1 (and the yield mean with it)
    while a turn was re-read: it read the live timeline. It now counts settled verdicts, which later
    audio cannot change, so per judged window the count only grows; at the end it equals the
    result's user_barge_in_count, yield_none_count and yield_mean_s, and the example dialogue's
    truth (two user barge-ins, one yielded, one talked through)."""
    from livejudge.outputs.meter import barge_in_counts

    d, s = _session()
    seen = []
    buf = io.StringIO()
    plain = PlainLines(s, buf, events=False)

    class Probe:
        """Reads the count and writes the plain line at one instant: a judge result reaches sinks on
        the judge thread while the audio thread goes on settling verdicts, so two sinks reading one
        after the other can see different counts (a loaded CI machine did: 1 then 2)."""

        def on_event(self, event):
            from livejudge.events import JudgeResult

            if isinstance(event, JudgeResult):
                with s._lock:  # the audio path's lock: nothing settles between the two reads
                    seen.append(barge_in_counts(s.settled_verdicts))
                    plain.on_event(event)

        def on_close(self, result):
            pass

    s.add_sink(Probe())
    stream_call(s, d.call)
    r = s.close()
    counts = [n for n, _, _ in seen]
    assert counts and counts == sorted(counts)
    n, through, yield_mean = barge_in_counts(s.settled_verdicts)
    sm = r["summary"]
    truth = [b for b in d.truth.barge_ins if b.by == "user"]
    assert n == sm["user_barge_in_count"] == len(truth) == 2
    assert through == sm["yield_none_count"] == sum(1 for b in truth if b.yield_s is None) == 1
    assert abs(yield_mean - sm["yield_mean_s"]) < 1e-3
    # the plain line per window says what the meter says at that window
    lines = [x for x in buf.getvalue().splitlines() if x.startswith("[t=")]
    assert [int(x.split("user-barge-ins=")[1].split()[0]) for x in lines] == counts
    assert f"user barge-ins {n}" in render_text(s, "replay example_call.wav")


def test_plain_line_counts_flagged_moments_as_the_rich_meter_does():
    """Piped, the demo never said how many moments were flagged (a new user counted the [FLAG]
    event lines: one per verdict). The plain line now carries the settled moments, flagged/all,
    and at the end of the call it equals the result's verdict_flagged_moment_count."""
    from livejudge.timing.verdicts import moments

    d, s = _session()
    buf = io.StringIO()
    s.add_sink(PlainLines(s, buf, events=False))
    stream_call(s, d.call)
    r = s.close()
    last = [x for x in buf.getvalue().splitlines() if x.startswith("[t=")][-1]
    got = last.split("flagged-moments=")[1].split()[0]
    ms = moments(s.settled_verdicts)
    assert got == f"{sum(1 for m in ms if any(not v.ok for v in m))}/{len(ms)}"
    # every verdict of this call has settled by its last judged window: the result's own count
    assert len(s.settled_verdicts) == len(r["verdicts"])
    assert got == f"{r['summary']['verdict_flagged_moment_count']}/{r['summary']['verdict_moment_count']}"
