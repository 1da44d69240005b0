"""Shared fixtures. Tests never touch a model hub."""

import os
import signal

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # a suite started in the background of a non-interactive shell (`pytest … &`) inherits Ctrl-C
    # ignored, and so does every app the Ctrl-C tests spawn: Python then installs no
    # KeyboardInterrupt, the app sleeps through the test's SIGINT, and the test timed out at 60 s
    # (the Pipecat and LiveKit embeddings' tests, seen as "slow under load" for a week). A terminal
    # and CI start it with Ctrl-C live: the same here.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def tried_twice(capsys):
    """``run(label, call)``: a real-time call paced by wall clock, tried up to twice.

    ``call(attempt)`` (attempt 0 or 1) makes one call and asserts on it; its value is returned
    from the first try whose assertions hold. Every failed try is printed (first 300 characters);
    two failures fail the test. A concession to a busy 2-core CI machine, where such a call now
    and then misses a bound by scheduling alone: the bounds themselves are never loosened."""

    def run(label: str, call):
        failures = []
        for attempt in range(2):
            try:
                out = call(attempt)
            except AssertionError as exc:
                failures.append(str(exc)[:300])
                continue
            with capsys.disabled():
                for k, f in enumerate(failures):
                    print(f"\n[{label}] try {k + 1} failed: {f}")
            return out
        pytest.fail(f"both {label} calls missed the bounds:\n" + "\n".join(failures))

    return run
