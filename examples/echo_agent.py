"""The example voice agent livejudge attaches to: a real Pipecat pipeline, offline, key-free.

Thin wrapper of ``livejudge.agents.demo`` (its flags: ``livejudge.commands.demo_agent``) (shipped in the package so ``livejudge demo`` works
from a pip install). Try:

    python examples/echo_agent.py --port 8765 --think-s 0.8        # terminal 1
    livejudge attach --ws-url ws://127.0.0.1:8765                   # terminal 2 (microphone)

Options: --think-s (pause before answering), --never-yield (talk over barge-ins),
--protocol twilio (Twilio media-stream JSON), --tts espeak|clips, --log FILE.jsonl.
"""

import sys

from livejudge.commands.demo_agent import main

if __name__ == "__main__":
    sys.exit(main())
