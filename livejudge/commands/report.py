"""``livejudge report RESULT.json``: the HTML report of a scored call (``livejudge.outputs.html_report``).

Here, in the commands room, so that the report renderer imports nothing of the CLI
(issue 21: no import circles).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from livejudge.commands.runner import HelpFormatter
from livejudge.errors import CLIError
from livejudge.outputs.html_report import ReportError, write_html


def register(sub) -> None:
    """Add ``livejudge report`` to the CLI's subparsers."""
    p = sub.add_parser("report", help="write the HTML report of a scored call (from its --json result)",
                       formatter_class=HelpFormatter,
                       description="Write one self-contained HTML file (plots inline, no network needed to view, "
                                   "printable) from a result document. Needs matplotlib: "
                                   "pip install 'livejudge[report]'. "
                                   "Example: livejudge report result.json -o report.html",
                       epilog="exit codes: 0 the report was written · 1 it could not be written · 2 bad input or "
                              "usage (one line says what: no such result, not a result document, matplotlib "
                              "missing, an output path that is the input)")
    p.add_argument("result", metavar="RESULT.json", help="result document written by --json of score, replay, attach, demo, probe or check")
    p.add_argument("-o", "--output", default=None, metavar="OUT.html",
                   help="where to write the report (default: RESULT with .html)")
    p.set_defaults(func=cmd_report)


def cmd_report(args) -> int:
    from livejudge.outputs.guard import OutputPathError, check_output_paths
    from livejudge.outputs.report import DocumentError, load_json_document

    src = Path(args.result)
    if not src.exists():
        raise CLIError(f"{src}: no such file (write one with: livejudge score CALL.wav --json {src})")
    if src.is_dir():  # "[Errno 21] Is a directory" (a trial gave a batch's --out-dir)
        results = sorted(p.name for p in src.glob("*.json") if p.name != "summary.json")[:2]
        hint = (f" (e.g. {src / results[0]})" if results else "")
        raise CLIError(f"{src} is a directory: report one call's result JSON inside it{hint}; to put batches side "
                       "by side, use livejudge compare BEFORE/ AFTER/")
    try:  # size, nesting, NaN refused here; types and bounds by the renderer's check_result
        doc = load_json_document(src)
    except DocumentError as exc:
        raise CLIError(str(exc)) from None
    out = Path(args.output) if args.output else src.with_suffix(".html")
    try:  # -o RESULT.json would overwrite the result with its own report
        # the report is an HTML page: -o DIR suggests DIR/<result>.html, not result.json (a trial)
        check_output_paths({"-o": out}, [src], what="result document",  # "-o", as it is typed (a re-check)
                           examples={"-o": src.with_suffix(".html").name})
    except OutputPathError as exc:
        raise CLIError(str(exc)) from None
    try:
        write_html(doc, out)
    except ReportError as exc:
        raise CLIError(f"{src}: {exc}") from None
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc}", code=1) from None
    print(f"livejudge: report written to {out}", file=sys.stderr)
    return 0
