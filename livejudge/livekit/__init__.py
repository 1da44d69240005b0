"""livejudge inside a LiveKit Agents app: ``livejudge.livekit.attach(session)``.

The counterpart of the Pipecat ``LiveJudgeObserver``: it taps an ``AgentSession``'s audio
input and the audio its output really played, records the session's own events as framework
notes, and runs the same Session, meter, result, event log, report and gates as every other
way in. Every result carries ``framework_comparison``: the audio-true response latency of each
reply next to what LiveKit's metrics say for it (end_of_utterance_delay + LLM ttft + TTS ttfb).

Needs ``pip install 'livejudge[livekit]'`` (livekit-agents). See ``livejudge.livekit.tap``.
"""

from livejudge.livekit.compare import livekit_comparison
from livejudge.outputs.embedded import interrupted

try:
    from livejudge.livekit.tap import NOTE_EVENTS, LiveKitTap, TapOptions, attach
except ImportError as exc:  # pragma: no cover - the [livekit] extra is missing
    _missing = exc

    def attach(session, **options):  # type: ignore[no-redef]
        raise ImportError(f"livejudge.livekit needs LiveKit Agents ({_missing}): pip install 'livejudge[livekit]'")

    LiveKitTap = TapOptions = None  # type: ignore[assignment,misc]
    NOTE_EVENTS = ()

__all__ = ["NOTE_EVENTS", "LiveKitTap", "TapOptions", "attach", "interrupted", "livekit_comparison"]
