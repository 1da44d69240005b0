"""The demo agent's command line: ``python -m livejudge.agents.demo`` (or ``examples/echo_agent.py``).

Parses the flags into ``livejudge.agents.demo.DemoAgentConfig`` and runs ``serve``; the agent
module itself imports no argparse (issue 21).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from livejudge.agents.demo import BEHAVIOURS, DEFAULT_BEHAVIOUR, DemoAgentConfig, behaviour_settings, serve
from livejudge.agents.demo import __doc__ as _AGENT_DOC


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The agent's flags; ``prog`` is how it was started (``examples/echo_agent.py`` showed the
    module's name in its usage; a trial), by default from ``sys.argv[0]``."""
    if prog is None:
        from pathlib import Path

        arg0 = Path(sys.argv[0] or "")
        package = Path(__file__).resolve().parents[1]  # python -m livejudge.agents.demo runs a file in it
        prog = (f"python {sys.argv[0]}" if arg0.suffix == ".py" and package not in arg0.resolve().parents
                else "python -m livejudge.agents.demo")
    p = argparse.ArgumentParser(prog=prog, description=(_AGENT_DOC or "").split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 exposes it)")
    p.add_argument("--port", type=int, default=8765, help="websocket port (livejudge attach --ws-url ws://HOST:PORT)")
    p.add_argument("--protocol", default="pipecat", choices=("pipecat", "twilio"),
                   help="wire format: pipecat (its protobuf frames) or twilio (Media Streams JSON, μ-law 8 kHz)")
    p.add_argument("--think-s", type=float, default=None, help="pause after the user's turn ends, seconds (None: the --behaviour preset's)")
    p.add_argument("--never-yield", action="store_true", help="keep talking when the user barges in")
    p.add_argument("--min-interrupt-s", type=float, default=None,
                   help="yield only after this much continuing caller speech, seconds (HEURISTIC; 0 = at the VAD's start)")
    p.add_argument("--rude", action="store_true", default=argparse.SUPPRESS,
                   help="on top of the --behaviour preset, only talk through interruptions and stop for "
                        "backchannels; --behaviour rude also cuts into the caller's pauses")
    p.add_argument("--behaviour", choices=tuple(BEHAVIOURS), default=DEFAULT_BEHAVIOUR,
                   help="turn-taking preset: polite (the good example) waits out pauses and holds through "
                        "'mm-hmm'; stock is Pipecat's stock VADParams() (answers into a ~0.7 s pause); rude cuts "
                        "into pauses, stops for 'mm-hmm' and talks through interruptions, for livejudge probe to "
                        "catch (flags given explicitly win)")
    p.add_argument("--tts", default="auto", choices=("auto", "espeak", "clips"),
                   help="the agent's voice: espeak-ng (a synthetic voice), clips (the shipped reply recordings, "
                        "no espeak needed), auto = espeak when installed, else clips")
    p.add_argument("--in-rate", type=int, default=16000, help="pipeline input rate, Hz (Silero: 8000 or 16000)")
    p.add_argument("--out-rate", type=int, default=24000, help="agent audio rate on the wire, Hz (pipecat)")
    p.add_argument("--vad-stop-s", type=float, default=None, help="Silero silence before 'stopped speaking', s (None: the preset's)")
    p.add_argument("--vad-start-s", type=float, default=None, help="Silero speech before 'started speaking', s (None: the preset's)")
    p.add_argument("--allowed-origin", action="append", default=None, metavar="ORIGIN",
                   help="only accept websocket clients with this Origin (repeatable); others get HTTP 403")
    p.add_argument("--once", action="store_true", help="exit when the first client disconnects")
    p.add_argument("--log", default=None, metavar="FILE.jsonl", help="write the agent's decisions here")
    p.add_argument("--verbose", action="store_true", help="Pipecat's own debug log on stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse the flags into a DemoAgentConfig and serve; 2 on a bad --in-rate."""
    args = build_parser().parse_args(argv)
    if args.in_rate not in (8000, 16000):
        print("demo agent: --in-rate must be 8000 or 16000 (Silero VAD)", file=sys.stderr)
        return 2
    tuned = behaviour_settings(args.behaviour, **{k: getattr(args, k) for k in
                                                  ("think_s", "vad_stop_s", "vad_start_s", "min_interrupt_s")},
                               rude=getattr(args, "rude", None))  # absent unless given: the preset's
    cfg = DemoAgentConfig(host=args.host, port=args.port, protocol=args.protocol,
                          never_yield=args.never_yield, tts=args.tts, in_rate=args.in_rate, out_rate=args.out_rate,
                          **tuned,
                          allowed_origin=tuple(args.allowed_origin or ()), once=args.once, log=args.log,
                          verbose=args.verbose)
    from livejudge.agents.child import exit_with_parent

    exit_with_parent()  # started by livejudge demo: end with it, even if it is killed outright
    try:
        asyncio.run(serve(cfg))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
