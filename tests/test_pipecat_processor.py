"""LiveJudgeProcessor: a pass-through stage (every frame on, unchanged, in order) that measures
like the observer and emits results as frames (ours and RTVI server messages)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pipecat")

from pipecat.frames.frames import (  # noqa: E402
    BotStartedSpeakingFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    SpeechOutputAudioRawFrame,
    TextFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor  # noqa: E402
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame  # noqa: E402
from pipecat.tests.utils import run_test  # noqa: E402

from livejudge.events import BargeIn, Transition  # noqa: E402
from livejudge.pipecat import LiveJudgeObserver, LiveJudgeProcessor, LiveJudgeResultFrame  # noqa: E402
from livejudge.testing.pipecat import run_scripted  # noqa: E402
from livejudge.testing.dialogues import DialogueBuilder  # noqa: E402

TOL_S = 0.045


def make_dialogue():
    b = DialogueBuilder(seed=5)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.5)
    b.user("cmu_cards_004", barge_in_after_s=1.25, agent_yield_s=0.3)
    b.agent("espeak_reply_05", gap_s=0.8, max_s=2.0)
    return b.build()


DIALOGUE = make_dialogue()


class Collect(FrameProcessor):
    """Records every frame it sees (downstream), passes everything on."""

    def __init__(self):
        super().__init__()
        self.frames: list[Frame] = []

    async def process_frame(self, frame, direction):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM:
            self.frames.append(frame)
        await self.push_frame(frame, direction)


def _frames():
    def audio(cls, n=320):
        return cls(audio=bytes(range(256)) * (n * 2 // 256) + bytes(n * 2 % 256), sample_rate=16000, num_channels=1)

    return [audio(InputAudioRawFrame), TextFrame("hello"), TTSStartedFrame(), audio(TTSAudioRawFrame),
            audio(OutputAudioRawFrame), VADUserStartedSpeakingFrame(start_secs=0.2), audio(InputAudioRawFrame),
            audio(SpeechOutputAudioRawFrame), BotStartedSpeakingFrame(), TTSStoppedFrame(), TextFrame("bye")]


def test_passes_every_frame_through_unchanged_and_in_order():
    # baseline: the order a plain pass-through stage delivers (Pipecat hands system frames on
    # ahead of queued data frames, so this is not the send order)
    sent = _frames()
    base, _ = asyncio.run(run_test(Collect(), frames_to_send=sent))
    base_order = [sent.index(f) for f in base]
    sent = _frames()
    snapshot = [(type(f), f.id, getattr(f, "audio", None), getattr(f, "text", None)) for f in sent]
    proc = LiveJudgeProcessor(judge=None, emit=())
    down, up = asyncio.run(run_test(proc, frames_to_send=sent))
    assert len(down) == len(sent) == len(base)
    assert [next(i for i, s in enumerate(sent) if s is d) for d in down] == base_order  # same objects, same order
    assert [(type(f), f.id, getattr(f, "audio", None), getattr(f, "text", None)) for f in sent] == snapshot
    assert up == []
    assert proc.session.now_s > 0  # it did tap the audio on the way


def test_rejects_a_negative_end_drain():
    with pytest.raises(ValueError, match="end_drain_s"):
        LiveJudgeProcessor(judge=None, end_drain_s=-1)


def test_passes_upstream_frames_through():
    sent = [InterruptionFrame(), TextFrame("up")]
    proc = LiveJudgeProcessor(judge=None, emit=())
    down, up = asyncio.run(run_test(proc, frames_to_send=sent, frames_to_send_direction=FrameDirection.UPSTREAM))
    assert [type(f) for f in up] == [InterruptionFrame, TextFrame] and up[0] is sent[0] and up[1] is sent[1]


@pytest.mark.slow  # a Pipecat pipeline in real time (~5 s)
def test_after_output_measures_like_the_observer_and_emits_results():
    proc = LiveJudgeProcessor(judge="acoustic", rtvi=True, emit=("judge", "transition", "barge_in"))
    sink = Collect()
    obs = LiveJudgeObserver(judge=None)
    asyncio.run(run_scripted(DIALOGUE, sample_rate=24000, mode="tts", observers=[obs],
                             processors_after_output=[proc, sink], consume_user_audio=False))
    r, ro = proc.result(), obs.result()
    truth = DIALOGUE.truth
    lat = [t["gap_s"] for t in r["transitions"] if t["from"] == "user" and t["to"] == "agent"]
    assert len(lat) == len(truth.response_latencies_s) == 2
    assert all(abs(a - b) <= TOL_S for a, b in zip(lat, truth.response_latencies_s))
    assert [t["gap_s"] for t in ro["transitions"]] == [t["gap_s"] for t in r["transitions"]]
    assert len(r["barge_ins"]) == 1 and abs(r["barge_ins"][0]["onset_s"] - truth.barge_ins[0].onset_s) <= TOL_S
    assert r["errors"] == []
    ours = [f for f in sink.frames if isinstance(f, LiveJudgeResultFrame)]
    kinds = {f.kind for f in ours}
    assert kinds == {"judge", "transition", "barge_in"}
    trans = [f for f in ours if f.kind == "transition"]
    assert all(isinstance(f.event, Transition) for f in trans)
    # every transition of the call went out as a frame, ahead of the EndFrame (the stage drains
    # its queue before passing the EndFrame on, however late the worker thread runs)
    assert [round(f.data["gap_s"], 4) for f in trans] == [t["gap_s"] for t in r["transitions"]]
    end_at = next(i for i, f in enumerate(sink.frames) if isinstance(f, EndFrame))
    assert all(sink.frames.index(f) < end_at for f in ours)
    assert isinstance(next(f for f in ours if f.kind == "barge_in").event, BargeIn)
    judged = [f for f in ours if f.kind == "judge"]
    # p_human is null for windows with no evidence (before the agent spoke), else in [0, 1]
    assert all((f.data["p_human"] is None) == bool(f.data.get("no_evidence")) for f in judged)
    assert all(f.data["p_human"] is None or 0.0 <= f.data["p_human"] <= 1.0 for f in judged)
    assert any(f.data["p_human"] is not None for f in judged)
    assert all(len(f.data["dimensions"]) == 18 for f in judged)
    rtvi = [f for f in sink.frames if isinstance(f, RTVIServerMessageFrame)]
    assert len(rtvi) == len(ours) and all(f.data["type"] == "livejudge" for f in rtvi)


def test_with_an_observer_it_only_emits():
    obs = LiveJudgeObserver(judge=None)
    proc = LiveJudgeProcessor(observer=obs, emit=("transition",))
    sink = Collect()
    asyncio.run(run_scripted(DIALOGUE, sample_rate=16000, mode="continuous", observers=[obs],
                             processors_after_output=[proc, sink]))  # the agent consumes user audio
    r = obs.result()
    assert proc.result()["transitions"] == r["transitions"]
    emitted = [f for f in sink.frames if isinstance(f, LiveJudgeResultFrame)]
    assert emitted and {f.kind for f in emitted} == {"transition"}
    assert len(r["transitions"]) >= 3


def test_the_call_lasts_until_the_pipeline_ends():
    """As the observer (test_pipecat_observer): 3 s with no frames before the EndFrame, the
    caller sending none in pauses, are part of the call."""
    proc = LiveJudgeProcessor(judge=None, emit=())
    asyncio.run(run_scripted(DIALOGUE, sample_rate=16000, mode="tts", observers=[], tail_s=3.0, user_gaps=True,
                             processors_after_output=[proc], consume_user_audio=False))
    end_s = len(DIALOGUE.call.user) / 16000 + 3.0
    assert abs(proc.result()["duration_s"] - end_s) <= 0.05, (proc.result()["duration_s"], end_s)


def test_placed_before_the_output_transport_it_says_so():
    proc = LiveJudgeProcessor(judge=None, emit=())
    asyncio.run(run_scripted(DIALOGUE, sample_rate=16000, mode="tts", extra=[], observers=[],
                             processors_after_output=[], consume_user_audio=False,
                             before_output=[proc]))
    assert any("place it after transport.output()" in e for e in proc.result()["errors"])


def test_unknown_emit_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown emit kind"):
        LiveJudgeProcessor(judge=None, emit=("scores",))


def test_a_processor_that_saw_no_audio_says_why_in_its_result():
    """No audio frame in the whole call was a silent 0 s result (a trial's observer, never added).
    A processor never placed in a pipeline says so and where it goes; one in a pipeline that
    carried only text says that no audio frame came, and which transport settings carry it."""
    alone = LiveJudgeProcessor(judge=None, emit=())
    doc = asyncio.run(alone.close())
    assert doc["errors"] == ["pipecat processor: it was never part of a running pipeline, so nothing was "
                             "measured; place it in the pipeline after transport.output()"]
    proc = LiveJudgeProcessor(judge=None, emit=())
    asyncio.run(run_test(proc, frames_to_send=[TextFrame("hi")]))
    errors = asyncio.run(proc.close())["errors"]
    assert [e for e in errors if "no audio frames" in e] == [
        "pipecat processor: the pipeline carried no audio frames (InputAudioRawFrame, OutputAudioRawFrame), so "
        "nothing was measured; do its transports have audio_in_enabled / audio_out_enabled set?"], errors
