"""The HTML report: self-contained, every plot present, and rendered by a real headless
Chromium (Debian package ``chromium``) with no console errors and no network request.

The browser test drives Chromium over the DevTools protocol (websockets), measures each plot's
box on the laid-out page, and saves a full-page screenshot as a test artefact
(``$LIVEJUDGE_ARTIFACTS`` or pytest's tmp dir). It is skipped, with the reason, when Chromium
is not installed (apt-get install chromium).
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="matplotlib not installed (pip install 'livejudge[report]')")

from livejudge.commands.batch import ScoreOptions, score_call  # noqa: E402
from livejudge.session import SessionConfig  # noqa: E402
from livejudge.testing.dialogues import example_dialogue  # noqa: E402
from livejudge.outputs.html_report import PLOT_IDS, render_html, validity_line, write_html  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> dict:
    wav = example_dialogue(seed=0).write(tmp_path_factory.mktemp("call") / "call.wav")
    return score_call(wav, ScoreOptions(config=SessionConfig(judge_mode="every", interval_s=4.0)))


def test_report_is_self_contained_with_every_plot_and_section(result):
    text = render_html(result)
    for pid in PLOT_IDS:
        assert len(re.findall(rf'<svg id="{pid}"', text)) == 1
    # nothing fetched at view time: no script, no external style sheet, image or font
    assert "<script" not in text and "<link" not in text
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "url(http" not in text and "@import" not in text
    # element ids unique across the inlined figures
    ids = re.findall(r'\sid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    sm = result["summary"]
    assert f"{sm['latency_p90_s']:.2f} s" in text and f"{sm['mean_p_human']:.2f}" in text
    assert "Stivers et al. 2009" in text and "SPEARBench" in text  # reference band sources
    assert "intonation" in text and "sycophant behavior" in text and "gated" in text
    assert result["judge_info"]["summary"] in text
    assert "@media print" in text
    # the verdict thresholds read as the flags that set them, not as a Python dict (a trial)
    assert "--yield-max-s 1 s" in text and "--backchannel-yield-s 0.5 s" in text
    assert "{&#x27;" not in text and "{'" not in text


def test_report_shows_transcripts_and_validity_when_present(result):
    doc = json.loads(json.dumps(result))
    doc["transcripts"] = [{"channel": "agent", "onset_s": 1.0, "offset_s": 2.0, "text": "Sure <b>thing</b>", "n_words": 2}]
    # the judge's own line (judge_info.validated) is what a real result carries: shown after the bold label
    assert result["judge_info"]["validated"].startswith("validity: ")
    line = result["judge_info"]["validated"]
    assert f"<b>Validity:</b> {html.escape(line[len('validity: '):])}</p>" in render_html(doc)  # label said once
    doc["judge_info"].pop("validated")
    doc["judge_info"]["validity"] = {"line": "ROC-AUC 0.98 on 44 held-out calls (benchmarks/judge_validity.py)"}
    text = render_html(doc)
    assert "Sure &lt;b&gt;thing&lt;/b&gt;" in text  # escaped, not markup
    assert "ROC-AUC 0.98 on 44 held-out calls" in text
    assert validity_line({"validity": "plain text"}) == "plain text"
    assert validity_line({"judge_info": {}}) is None


def test_report_explains_the_validity_lines_shorthand_it_uses(result):
    text = render_html(result)  # the shipped head's line: sealed split, acc, P(h), final run, ROC-AUC, in the wild
    legend = re.search(r'<p class="legend">(.*?)</p>', text).group(1)
    for term in ("P(h): mean P(human)", "acc: the share", "final run N:", "ROC-AUC: the chance", "sealed split:",
                 "X of machine dialogues called human (P≥0.5): the share",
                 "Fitted on English speech only: every row it was fitted on"):
        assert html.escape(term) in legend, term
    doc = json.loads(json.dumps(result))
    doc["judge_info"]["validated"] = "validity: ROC-AUC 0.98 on 44 held-out calls"
    legend = re.search(r'<p class="legend">(.*?)</p>', render_html(doc)).group(1)
    assert "ROC-AUC: the chance" in legend and "P(h)" not in legend and "final run" not in legend  # only what the line uses
    assert "English" not in legend


def test_report_without_judge_still_renders(result):
    doc = json.loads(json.dumps(result))
    doc["judge"], doc["judge_info"] = [], None
    doc["summary"]["mean_p_human"] = None
    text = render_html(doc)
    assert all(f'<svg id="{pid}"' in text for pid in PLOT_IDS[:2]) and "judge off" in text
    # no 18 "not judged" rows, empty contributors table or P(human) caption for a call without a judge (a trial)
    assert "Not measured: the judge was off or could not load" in text
    assert not any(f'<svg id="{pid}"' in text for pid in PLOT_IDS[2:]) and "P(human) is drawn" not in text
    assert "P(human) is drawn" in render_html(result)


def test_hand_edited_results_are_refused_or_shown_for_what_they_hold(tmp_path, result, capsys):
    """A trial's hand edits: a verdict time given as a string crashed `report` with a traceback; a
    mean P(human) of 5 read "5.00 human-like"; an emptied summary read "kept talking 0×"; and with
    judge_info deleted the page said "Judge: off" beside a P(human). Now the first two are one-line
    refusals (exit 2), the summary's missing count shows "–", and the page says the P(human)
    cannot be traced to a judge."""
    from livejudge.commands.cli import main

    def edited(name, fn):
        doc = json.loads(json.dumps(result))
        fn(doc)
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(doc))
        return p

    bad = {"t_str": lambda d: d["verdicts"][0].__setitem__("t_s", "4.2"),
           "ph5": lambda d: d["summary"].__setitem__("mean_p_human", 5)}
    for name, fn in bad.items():
        assert main(["report", str(edited(name, fn)), "--out", str(tmp_path / f"{name}.html")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and ("must be a number" in err[0] or "outside 0…1" in err[0]), err
    empty = render_html(json.loads(edited("empty", lambda d: d.__setitem__("summary", {})).read_text()))
    assert "kept talking –×" in empty
    gone = render_html(json.loads(edited("nojudge", lambda d: d.pop("judge_info")).read_text()))
    assert "cannot be traced to a head" in gone and "off (timing only)" not in gone


def test_report_command_and_bad_input(tmp_path, result):
    from livejudge.commands.cli import main

    src = tmp_path / "r.json"
    src.write_text(json.dumps(result))
    assert main(["report", str(src), "-o", str(tmp_path / "out.html")]) == 0
    assert (tmp_path / "out.html").stat().st_size > 10_000
    assert main(["report", str(src)]) == 0 and (tmp_path / "r.html").exists()  # default name
    (tmp_path / "bad.json").write_text('{"hello": 1}')
    assert main(["report", str(tmp_path / "bad.json")]) == 2
    assert main(["report", str(tmp_path / "missing.json")]) == 2


def test_a_batch_summary_where_a_result_is_wanted_says_so(tmp_path, capsys):
    """`report OUT_DIR/summary.json` said "missing duration_s, segments, summary" (a trial)."""
    from livejudge.commands.cli import main

    s = tmp_path / "summary.json"
    s.write_text(json.dumps({"medians": {"latency_p50_s": 0.7}, "calls": [], "n_scored": 0}))
    capsys.readouterr()
    assert main(["report", str(s), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "a batch's summary.json, not one call's result" in err and "livejudge compare" in err
    assert "missing duration_s" not in err and not (tmp_path / "x.html").exists()
    (tmp_path / "c1.json").write_text("{}")
    assert main(["report", str(tmp_path)]) == 2  # the folder itself: "[Errno 21] Is a directory" (a trial)
    assert f"{tmp_path} is a directory: report one call's result JSON inside it (e.g. {tmp_path / 'c1.json'})" in \
        capsys.readouterr().err


def test_an_audio_file_where_a_result_is_wanted_says_so(tmp_path, capsys):
    """`report call.wav` printed "not readable ('utf-8' codec can't decode byte 0x8a…)" (a new
    user's trial): audio is named as audio, with the command that makes the JSON; other binary
    files are told what to pass; both exit 2 with one line."""
    import numpy as np
    import soundfile as sf

    from livejudge.commands.cli import main

    wav = tmp_path / "call.wav"
    sf.write(wav, np.zeros((1600, 2), np.float32), 16000)
    for cmd in (["report", str(wav)], ["compare", str(wav), str(wav)]):
        assert main(cmd) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "WAV audio, not a result JSON" in err[0] and "livejudge score" in err[0]
        assert "codec can't decode" not in err[0]
    blob = tmp_path / "blob.json"
    blob.write_bytes(bytes([0x8A, 0xFF, 0x00, 0x81]) * 8)
    assert main(["report", str(blob)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a result JSON (not UTF-8 text)" in err and "--json" in err


# ------------------------------------------------------------------------------ real browser
class _Chromium:
    """Headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, profile: Path) -> None:
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile}",
             "--remote-debugging-port=0", "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        ws_url = None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                ws_url = m.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        if ws_url is None:
            self.close()
            raise RuntimeError("chromium did not start its DevTools endpoint")
        port = re.search(r":(\d+)/", ws_url).group(1)
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(p for p in pages if p.get("type") == "page")
        from websockets.sync.client import connect

        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=20).__enter__()
        self._id = 0
        self.events: list[dict] = []

    def call(self, method: str, timeout_s: float = 30.0, **params) -> dict:
        self._id += 1
        my = self._id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout_s: float = 30.0) -> dict:
        for e in self.events:
            if e.get("method") == method:
                return e
        deadline = time.monotonic() + timeout_s
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(msg)
            if msg.get("method") == method:
                return msg

    def problems(self) -> list[str]:
        """Console messages, uncaught exceptions and log errors seen so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.append(f"console.{p.get('type')}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"exception: {d.get('text')} {d.get('exception', {}).get('description', '')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry'].get('text')}")
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def load(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        time.sleep(0.2)  # late console messages
        self.call("Runtime.evaluate", expression="1")  # drain events queued before now

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return r["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        r = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, timeout_s=60)
        path.write_bytes(base64.b64decode(r["data"]))
        return path

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); the browser check needs it")
    b = _Chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def test_browser_check_sees_console_errors(browser, tmp_path):
    """The check can fail: a page with a console error and an exception is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom"); notDefined();</script></body></html>')
    browser.load(bad.as_uri())
    problems = browser.problems()
    assert any("boom" in p for p in problems) and any("notDefined" in p for p in problems)


def test_report_renders_in_headless_chromium(browser, result, tmp_path):
    page = write_html(result, tmp_path / "report.html")
    browser.load(page.as_uri())
    assert browser.problems() == []
    # the file itself and inline data: images (the colour bar), nothing from the network
    assert [u for u in browser.requests() if not u.startswith("data:")] == [page.as_uri()]
    boxes = browser.evaluate(
        "JSON.stringify(%s.map(id => { const e = document.getElementById(id); if (!e) return null;"
        " const r = e.getBoundingClientRect(); return [r.width, r.height, e.querySelectorAll('path').length]; }))"
        % json.dumps(list(PLOT_IDS)))
    boxes = dict(zip(PLOT_IDS, json.loads(boxes)))
    for pid, box in boxes.items():
        assert box is not None, f"{pid} missing from the page"
        w, h, n_paths = box
        assert w > 600 and h > 150 and n_paths > 10, (pid, box)  # laid out at a readable size, drawn
    # the timeline has one bar per speech segment in its two lanes (broken_barh → path per bar)
    assert browser.evaluate("document.title").startswith("livejudge report")
    art = Path(os.environ.get("LIVEJUDGE_ARTIFACTS") or tmp_path)
    art.mkdir(parents=True, exist_ok=True)
    shot = browser.screenshot(art / "report_screenshot.png")
    from PIL import Image

    img = Image.open(shot).convert("L")
    assert img.width >= 1000 and img.height > 2000  # the whole page, not the viewport only
    lo, hi = img.getextrema()
    assert hi - lo > 100  # not a blank page
    # printable: Chromium's print path lays it out on A4 pages
    pdf = base64.b64decode(browser.call("Page.printToPDF", paperWidth=8.27, paperHeight=11.69, timeout_s=60)["data"])
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") + \
        pdf.count(b"/Type/Page") >= 2
    (art / "report_print.pdf").write_bytes(pdf)


@pytest.mark.slow  # real time (~8 s): drawing the report takes longer than the virtual-clock harness waits
def test_pipecat_observer_writes_the_report_at_the_end(tmp_path):
    pytest.importorskip("pipecat")
    import asyncio

    from livejudge.pipecat import LiveJudgeObserver
    from livejudge.testing.pipecat import run_scripted
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.6)
    b.user("cmu_cards_002", gap_s=0.3)
    b.agent("espeak_reply_03", gap_s=0.9, max_s=1.5)
    obs = LiveJudgeObserver(judge="acoustic", config=SessionConfig(interval_s=3.0),
                            result_path=tmp_path / "r.json", report_path=tmp_path / "r.html")
    asyncio.run(run_scripted(b.build(), sample_rate=16000, mode="tts", observers=[obs], virtual=False))
    text = (tmp_path / "r.html").read_text()
    assert all(f'<svg id="{pid}"' in text for pid in PLOT_IDS)
    assert obs.result()["errors"] == []


def test_interrupted_call_still_writes_its_report(tmp_path):
    """Ctrl-C in the middle of a call: the exit code says so and the report is still written."""
    from livejudge.commands.runner import EXIT_INTERRUPTED, run_session
    from livejudge.config import OutputConfig
    from livejudge.session import Session, stream_call

    call = example_dialogue(seed=1).call
    session = Session(SessionConfig(judge_mode="every", interval_s=5.0))
    half = len(call.user) // 2

    def body(stop):
        import dataclasses

        stream_call(session, dataclasses.replace(call, user=call.user[:half], agent=call.agent[:half]))
        raise KeyboardInterrupt

    output = OutputConfig(display="none", report=str(tmp_path / "cut.html"))
    assert run_session(session, body, title="t", output=output) == EXIT_INTERRUPTED
    text = (tmp_path / "cut.html").read_text()
    assert all(f'<svg id="{pid}"' in text for pid in PLOT_IDS[:2])  # no judge here: timing plots only
    # the page says the call was cut short, as the JSON does (a trial found no word of it)
    assert "This call was cut short (interrupted (Ctrl-C)) after" in text and "ended: interrupted (Ctrl-C)" in text


def test_a_demo_report_is_titled_demo_and_a_whole_call_is_not_cut(result):
    doc = {**result, "source": {**result["source"], "kind": "attach", "demo_agent": {"behaviour": "polite"},
                                "ended": "script done"}}
    doc["source"].pop("file", None)
    text = render_html(doc)
    assert "<h1>livejudge report · demo</h1>" in text and "ended: script done" in text and "cut short" not in text


def test_dimension_table_says_not_measured_and_shared_scores(result):
    """With the judge's dimension view in the result, a dimension the head does not measure reads
    "not measured: <why>" (never a score) and dimensions sharing one score name each other."""
    view = result["judge_info"]["dimensions"]
    assert view["not_measured"] and any(len(g) > 1 for g in view["groups"])  # the default whisper head
    text = render_html(result)
    for why in set(view["not_measured"].values()):
        assert f'<td colspan="6">not measured: {html.escape(why)}' in text
    from livejudge.judge.model.dimensions import DIMENSIONS

    names = {d.id: d.name for d in DIMENSIONS}
    group = next(g for g in view["groups"] if len(g) > 1)
    assert f"one shared score with {html.escape(', '.join(names[x] for x in group[1:]))}" in text
    # one row for the group (README; a trial saw three rows with three scores for one piece of evidence)
    assert f"<td>{html.escape(names[group[0]])} (+{len(group) - 1} sharing its score)</td>" in text
    for x in group[1:]:
        assert f"<td>{html.escape(names[x])}</td>" not in text
    # the detector-counted dimensions are labelled HEURISTIC where they are shown (a trial: unlabelled)
    from livejudge.outputs.html_report import HEURISTIC_DETECTOR_DIMENSIONS

    shown = [d for d in HEURISTIC_DETECTOR_DIMENSIONS if d not in view["not_measured"]]
    assert shown and text.count("HEURISTIC detector: ") >= len(shown)
    doc = json.loads(json.dumps(result))
    doc["judge_info"].pop("dimensions")  # an older result: every dimension as before
    assert '<td colspan="6">not measured:' not in render_html(doc)  # rows as before (reasons stay)


def test_dimension_table_gives_the_call_mean_compare_reads_beside_the_window(result):
    """The table showed the last judged window's scores while ``livejudge compare`` and the gates read
    each dimension's mean over the call's ungated windows (a new user's trial: two numbers for one
    dimension, neither labelled); the table now names its window and carries the call mean, the
    number compare prints, for every measured dimension."""
    from livejudge.commands.compare import compare
    from livejudge.judge.model.dimensions import DIMENSIONS
    from livejudge.outputs.html_report import _dimensions_html, _last_evidence_window
    from livejudge.outputs.report import dimension_view

    window = _last_evidence_window(result)
    means = {}
    for d in DIMENSIONS:  # the truth, from the windows themselves
        vals = [w["dimensions"][d.id]["score"] for w in result["judge"]
                if d.id in (w.get("dimensions") or {}) and not w["dimensions"][d.id].get("gated")]
        means[f"dim_{d.id}"] = sum(vals) / len(vals) if vals else None
    measured = [k for k, v in means.items() if v is not None]
    assert measured
    table = _dimensions_html(window, dimension_view(result), means)
    assert f"score (1–5) (window ending at {window['t_s']:.1f} s)" in table
    assert "call mean (ungated windows; what compare reads)" in table
    view_nm = set(result["judge_info"]["dimensions"]["not_measured"])
    names = {d.id: d.name for d in DIMENSIONS}
    merged = {d for g in result["judge_info"]["dimensions"]["groups"] for d in g[1:]}
    for key in measured:
        did = key[4:]
        if did in view_nm or did in merged:  # a shared score's later members: in their group's row
            continue
        row = re.search(rf"<td>{re.escape(html.escape(names[did]))}( \(\+\d+ sharing its score\))?</td>(.*?)</tr>",
                        table).group(2)
        assert f'<td class="num">{means[key]:.1f}</td>' in row, (did, row)
    assert table in render_html(result)  # the report shows this very table
    # ... and compare prints the same means
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        Path(path).write_text(json.dumps(result))
        rows = {r["metric"]: r["values"][0] for r in compare([path])["rows"]}
    shared = {f"dim_{d}" for g in result["judge_info"]["dimensions"]["groups"] for d in g[1:]}
    assert set(measured) - set(rows) <= shared  # compare shows a shared score once (its first member)
    for key in set(measured) & set(rows):
        assert abs(rows[key] - means[key]) < 1e-3, key


def test_a_window_without_evidence_says_why():
    """A window with ungated dimensions whose weight is under MIN_EVIDENCE_SHARE said "every
    dimension gated" (a new user's trial: three were not); it now gives the share."""
    from livejudge.events import MIN_EVIDENCE_SHARE
    from livejudge.outputs.html_report import no_evidence_reason

    some = {"t_s": 10.0, "evidence_share": 0.08, "dimensions": {"rhythm": {"gated": False}, "accent": {"gated": True}}}
    assert no_evidence_reason(some) == (f"no evidence: its ungated dimensions carry 8% of the classifier's weight, "
                                        f"under the {MIN_EVIDENCE_SHARE * 100:.0f}% needed (HEURISTIC)")
    none = {"t_s": 10.0, "evidence_share": 0.0, "dimensions": {"rhythm": {"gated": True}}}
    assert no_evidence_reason(none) == "no evidence (every dimension gated)"


def test_backchannel_card_gives_user_and_agent_apart(result):
    """The summary card counted both sides' backchannels as one number; it now says whose."""
    def card(doc):
        m = re.search(r'<div class="card">backchannels<b>(.*?)</b><span class="muted">(.*?)</span></div>',
                      render_html(doc))
        return m.group(1), m.group(2)

    sm = result["summary"]
    assert sm["user_backchannel_count"] + sm["agent_backchannel_count"] == sm["backchannel_count"]
    assert card(result) == (str(sm["backchannel_count"]),
                            f"user {sm['user_backchannel_count']} · agent {sm['agent_backchannel_count']}")
    old = json.loads(json.dumps(result))  # a result written before the per-channel counts
    for k in ("user_backchannel_count", "agent_backchannel_count"):
        old["summary"].pop(k)
    assert card(old) == (str(sm["backchannel_count"]), "")


def test_dimension_chart_labels_not_measured_as_the_table_does(result):
    """The dimension chart beside the table labelled a dimension the head does not measure "gated:
    too little evidence" while the table said "not measured: <why>" (a new user's trial); the
    chart now reads as the table, and an older result without the view keeps its labels."""
    view = result["judge_info"]["dimensions"]
    svg = re.search(r'<svg id="lj-dimensions".*?</svg>', render_html(result), re.S).group(0)
    assert svg.count("not measured: ") == len(view["not_measured"])
    for why in set(view["not_measured"].values()):
        assert f"not measured: {html.escape(why)}" in svg
    doc = json.loads(json.dumps(result))
    doc["judge_info"].pop("dimensions")
    svg = re.search(r'<svg id="lj-dimensions".*?</svg>', render_html(doc), re.S).group(0)
    assert "not measured" not in svg


def test_top_contributors_name_a_shared_score_once(result):
    """The per-window top contributors named each member of a shared score as if it were separate
    evidence; now the group is one item, its first member "(+N sharing its score)", with the
    members' contributions summed."""
    from livejudge.outputs.html_report import _contributors_html
    from livejudge.judge.model.dimensions import DIMENSIONS

    names = {d.id: d.name for d in DIMENSIONS}
    group = next(g for g in result["judge_info"]["dimensions"]["groups"] if len(g) > 1)
    doc = json.loads(json.dumps(result))
    w = next(w for w in doc["judge"] if w.get("p_human") is not None)
    doc["judge"] = [w]
    for i, d in enumerate(w["dimensions"]):  # the shared group pulls hardest: it must be listed, once
        w["dimensions"][d].update(gated=False, contribution=(5.0 if d == group[0] else 1.0) if d in group else 0.01 * i)
    text = _contributors_html(doc)
    assert f"{html.escape(names[group[0]])} (+{len(group) - 1} sharing its score)" in text, text
    assert f"{5.0 + len(group) - 1:+.2f}" in text
    assert all(html.escape(names[x]) not in text for x in group[1:]), text


def test_a_contribution_that_rounds_to_zero_shows_no_direction():
    from livejudge.outputs.html_report import _dimensions_html

    def row(c):
        w = {"dimensions": {"intonation": {"score": 3.1, "evidence": 12.0, "evidence_unit": "s", "gated": False,
                                           "contribution": c}}}
        return next(r for r in _dimensions_html(w).split("<tr") if ">intonation<" in r)

    assert "0.00</td>" in row(0.004) and "→" not in row(0.004) and "→" not in row(-0.004)
    assert "+0.01" in row(0.006) and "→ machine" in row(0.006)
    assert "-0.30" in row(-0.3) and "→ human" in row(-0.3)


def test_one_long_gap_is_flagged_once(tmp_path):
    """A reply after a 2.5 s gap gives two verdicts of one silence (dead air, agent's turn, and a
    latency in the S2S range); the report listed the gap twice among its flagged moments (a new
    user's trial). It is one row, numbered with both verdicts, one flagged moment and one cross."""
    from livejudge.outputs.html_report import verdict_rows
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.4)
    b.user("cmu_cards_002", gap_s=0.3)
    b.agent("espeak_reply_03", gap_s=2.5)
    r = score_call(b.build().write(tmp_path / "gap.wav"), ScoreOptions(judge="none"))
    flagged = [v for v in r["verdicts"] if not v["ok"]]
    assert sorted((v["kind"], v["outcome"]) for v in flagged) == [("dead_air", "agent_silent"), ("latency", "s2s")]
    assert all(abs(v["value_s"] - 2.5) < 0.05 for v in flagged)
    rows = [row for row in verdict_rows(r["verdicts"]) if any(not v["ok"] for _, v in row)]
    assert len(rows) == 1 and [v["kind"] for _, v in rows[0]] == ["latency", "dead_air"]
    text = render_html(r)
    table = text[text.index("<h2>Verdicts</h2>"):text.index("<h2>Response latency</h2>")]
    red = re.findall(r'<tr><td class="num">([^<]*)</td><td class="num">[^<]*</td><td class="machine">([^<]*)</td>', table)
    assert len(red) == 1, red
    nums = sorted(i for i, v in enumerate(r["verdicts"]) if not v["ok"])
    assert red[0][0] == ", ".join(map(str, nums)) and "dead air" in red[0][1]
    assert "flagged moments<b>1 of 2</b>" in text
    # the card's note says the 2 are moments and gives their verdicts ("8 per-event verdicts" beside
    # "(11 verdicts)" read as a contradiction; a trial)
    assert f"moments; 2 of their {len(r['verdicts'])} verdicts flagged (" in text


def test_contributions_heat_map_marks_not_measured_rows(result):
    """The contributions heat map showed a not-measured dimension's row as 0 like any other (a new
    user's trial); its label now says "(not measured)", and only for those dimensions."""
    view = result["judge_info"]["dimensions"]
    svg = re.search(r'<svg id="lj-contributions".*?</svg>', render_html(result), re.S).group(0)
    assert svg.count("(not measured)") == len(view["not_measured"]) > 0
    doc = json.loads(json.dumps(result))
    doc["judge_info"].pop("dimensions")
    svg = re.search(r'<svg id="lj-contributions".*?</svg>', render_html(doc), re.S).group(0)
    assert "not measured" not in svg


def test_report_cites_the_paper_by_name_not_by_an_internal_seed_number(result):
    """New-user trial: the report said "scale of seed 000 (App. D.2)", a reference of the project's
    own notes; it names the paper as the rest of the project does."""
    text = render_html(result)
    assert "scale of the Turing-test paper (“Human or Machine?”, App. D.2)" in text
    assert not re.search(r"seed ?00\d", text, re.IGNORECASE)


def test_the_header_names_an_embedding_and_a_live_calls_route(result):
    """An embedding's report was titled "call" with an empty kind, and two reports of one bot over
    the eval wire and WebRTC differed by the WebRTC delay with nothing saying so (a trial)."""
    import copy

    lk = copy.deepcopy(result)
    lk["source"] = {"source": "livekit", "ended": "interrupted (SIGTERM)"}
    text = render_html(lk)
    assert "<h1>livejudge report · LiveKit tap</h1>" in text and "· LiveKit tap · ended: interrupted (SIGTERM)" in text
    assert "This call was cut short (interrupted (SIGTERM))" in text
    rtc = copy.deepcopy(result)
    rtc["source"] = {"kind": "attach", "url": "http://127.0.0.1:7860", "protocol": "pipecat",
                     "runner": {"url": "http://127.0.0.1:7860", "route": "webrtc"},
                     "webrtc": {"added_delay_ms": 101.7}, "playback": False}
    assert ("· attach · http://127.0.0.1:7860 (pipecat, runner route webrtc, WebRTC adds 102 ms to each latency, "
            "no playback)") in render_html(rtc)


def test_windows_without_evidence_in_a_row_are_one_row(result):
    """A trial's call with an hour of silence at its end listed 1773 windows without evidence,
    one row each, under "Top contributors per window": a run of such windows for one reason is one
    row naming how many; windows with evidence keep a row each."""
    from livejudge.outputs.html_report import _contributors_html

    doc = json.loads(json.dumps(result))
    judged = [w for w in doc["judge"] if w.get("p_human") is not None]
    silent = dict(judged[-1], p_human=None, dimensions={})
    t0 = judged[-1]["t_s"]
    doc["judge"] = judged + [dict(silent, t_s=t0 + 4.0 * (k + 1), window_start_s=t0 + 4.0 * (k + 1) - 30.0)
                             for k in range(50)]
    text = _contributors_html(doc)
    assert text.count("<tr") == 1 + len(judged) + 1, text.count("<tr")
    assert f"–{t0 + 200.0:.1f} (50 windows)" in text
