"""Build the example call: a two-channel dialogue from real clips with a known timeline.

User turns are real human recordings (CMU Sphinx test data, LibriVox); the agent's turns are
espeak-ng renderings, so this is a human–machine call. It contains varied gaps (100–2500 ms),
an agent talk-over, two user barge-ins (one the agent yields to, one it talks through) and a
backchannel on each side. Writes the stereo WAV (user = channel 0, agent = channel 1) and the
ground truth it was built from.

    python examples/make_example_call.py [--out examples/example_call.wav] [--human-agent]
    python examples/make_example_call.py --out slow.wav --agent-delay-s 0.5 --noise-dbfs -47
"""

import argparse
import json
import sys
from pathlib import Path

from livejudge.testing.dialogues import example_dialogue


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).with_name("example_call.wav")),
                    help="where to write the WAV (and NAME.truth.json beside it); default: the shipped "
                         "examples/example_call.wav, which it rewrites (the same file for the default options)")
    ap.add_argument("--human-agent", action="store_true",
                    help="agent turns from human clips (a human–human call; CMU Sphinx and LibriVox people, groups "
                         "the default head was fitted on: its P(human) shows the meter at work, not validity)")
    ap.add_argument("--rate", type=int, default=16000, help="sample rate of the written file, Hz")
    ap.add_argument("--seed", type=int, default=0,
                    help="redraws the line's noise, room and breaths (the timeline stays the same); default 0, the shipped call")
    ap.add_argument("--agent-delay-s", type=float, default=0.0,
                    help="start every agent reply this much later, 0–3 s: a slower agent (each response latency "
                         "grows by it; the built early start becomes an ordinary reply from 0.3 s; the truth file "
                         "says where everything lands), seconds")
    ap.add_argument("--noise-dbfs", type=float, default=None,
                    help="the line's noise floor, -80 to -20 dBFS (e.g. -47 for an ordinary room, -35 for a noisy "
                         "line; default: the quiet example line)")
    ap.add_argument("--noise-kind", default=None, choices=("white", "room", "babble"),
                    help="what the noise is (with --noise-dbfs; default white)")
    args = ap.parse_args()
    if not 0.0 <= args.agent_delay_s <= 3.0:  # one line, as the other errors (a trial got a traceback at -5)
        sys.exit(f"make_example_call.py: --agent-delay-s {args.agent_delay_s:g}: give 0 to 3 seconds (a slower agent)")
    if args.noise_dbfs is not None and not -80.0 <= args.noise_dbfs <= -20.0:
        sys.exit(f"make_example_call.py: --noise-dbfs {args.noise_dbfs:g}: give -80 to -20 dBFS (louder clips the call)")
    if not Path(args.out).parent.is_dir():  # one line, no usage block (livejudge's own errors read alike)
        sys.exit(f"make_example_call.py: --out {args.out}: folder {Path(args.out).parent} does not exist; "
                 "create it or pick another path")
    line = {k: v for k, v in (("noise_dbfs", args.noise_dbfs), ("noise_kind", args.noise_kind)) if v is not None}
    d = example_dialogue(seed=args.seed, machine_agent=not args.human_agent, agent_delay_s=args.agent_delay_s, **line)
    out = d.write(args.out, args.rate)
    truth = {
        "placed": [p.__dict__ for p in d.truth.placed],
        "transitions": [{"from": t.from_channel, "to": t.to_channel, "from_offset_s": round(t.from_offset_s, 4),
                         "to_onset_s": round(t.to_onset_s, 4), "gap_s": round(t.gap_s, 4)} for t in d.truth.transitions],
        "barge_ins": [{"by": b.by, "onset_s": round(b.onset_s, 4),
                       "yield_s": None if b.yield_s is None else round(b.yield_s, 4)} for b in d.truth.barge_ins],
        "backchannels": [{"channel": b.channel, "onset_s": round(b.onset_s, 4), "offset_s": round(b.offset_s, 4)}
                         for b in d.truth.backchannels],
    }
    Path(out).with_suffix(".truth.json").write_text(json.dumps(truth, indent=2))
    print(f"wrote {out} ({d.call.duration_s:.1f} s) and {Path(out).with_suffix('.truth.json')}")


if __name__ == "__main__":
    main()
