"""The command line's exit codes and its one-line error, in a module of their own.

Every layer that turns bad input into a user-facing message (commands, sources, outputs, the
judge service) raises ``CLIError``; only ``livejudge.commands.cli.main`` catches it, prints
``livejudge: <message>`` and exits with its code. It lives here, not in the commands room,
so that raising it imports nothing above the raiser (issue 21: no import circles).
``livejudge.commands.runner`` re-exports every name.

Exit codes: 0 done; 1 the call failed mid-way (partial result written), or a batch skipped
some calls (the rest written); 2 bad input or
usage; 3 a ``--fail-if`` gate failed; 130 interrupted with Ctrl-C where that is not the
normal way to end (replay, score); 143 stopped by SIGTERM, 129 by SIGHUP.
"""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_GATE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_SIGTERM, EXIT_SIGHUP = 128 + 15, 128 + 1
"""Shell convention: 128 + signal number, returned after the result has been written."""


class CLIError(Exception):
    """A one-line, user-facing error with an exit code (default 2: bad input or usage).

    The message names the problem and the fix, e.g. ``--merge-pause-s must be ≥ 0 seconds, got -1``.
    """

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
