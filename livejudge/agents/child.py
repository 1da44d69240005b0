"""Agents that livejudge starts for a call (``demo``'s example agent, the runner bot), as child
processes that a terminal's Ctrl-C does not reach and that do not outlive livejudge.

Ctrl-C in a terminal signals the whole foreground process group. An agent started in livejudge's
group died with the first Ctrl-C, before livejudge could end the call itself, so an early Ctrl-C
read as "the agent closed the connection without sending any audio" and exited 1 (a new user's
trial; docs/result.md: for ``demo`` Ctrl-C is the normal end, exit 0). ``popen_child`` starts the
agent in a session of its own; livejudge ends it when the call has ended (``attach.stop_agent``).
So that a livejudge killed outright (SIGKILL, which nothing can catch) leaves no agent behind, the
child is told its parent's PID (``PARENT_PID_ENV``) and ``exit_with_parent`` in the child ends it
within a second of the parent's death.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

PARENT_PID_ENV = "LIVEJUDGE_PARENT_PID"
"""The environment variable that carries the starting livejudge's PID to the child."""


def popen_child(cmd: list[str], *, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(cmd, ...)`` in a new session (``start_new_session``: no terminal signal
    reaches it), with ``PARENT_PID_ENV`` set to this process's PID in its environment (``env``, or
    this process's). Raises what ``subprocess.Popen`` raises."""
    full = dict(os.environ if env is None else env)
    full[PARENT_PID_ENV] = str(os.getpid())
    return subprocess.Popen(cmd, env=full, start_new_session=True, **kwargs)


def exit_with_parent(poll_s: float = 1.0) -> threading.Thread | None:
    """In a child started by ``popen_child``: a daemon thread that ends this process (``os._exit``,
    code 0) once its parent is gone (``os.getppid()`` no longer the PID in ``PARENT_PID_ENV``),
    checked every ``poll_s`` seconds. None (nothing started) when the variable is absent or is not
    a number: the program was started some other way."""
    try:
        parent = int(os.environ.get(PARENT_PID_ENV, ""))
    except ValueError:
        return None

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(poll_s)

    t = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    t.start()
    return t
