"""Writing a finished call's result document and HTML report for an embedding (the Pipecat
observer, the LiveKit tap): a failed write is recorded in the session's errors and in the
document, never raised, so the other outputs are still written."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_call_files(doc: dict, session: Any, result_path: str | Path | None,
                     report_path: str | Path | None) -> dict:
    """Write ``doc`` to ``result_path`` (JSON) and ``report_path`` (HTML) when given.

    Args:
        doc: the result document (``livejudge.outputs.report.build_result``); its ``errors``
            gain one line per failed write.
        session: the Session whose ``_on_error`` records the failure too.
    Returns:
        ``doc``.
    """
    if result_path is not None:
        from livejudge.outputs.report import write_json

        try:
            write_json(doc, result_path)
        except OSError as exc:
            _failed(doc, session, f"could not write the result to {result_path}: {exc}")
    if report_path is not None:
        from livejudge.outputs.html_report import ReportError, write_html

        try:
            write_html(doc, report_path)
        except (ReportError, OSError) as exc:
            _failed(doc, session, f"could not write the report to {report_path}: {exc}")
    return doc


def _failed(doc: dict, session: Any, msg: str) -> None:
    session._on_error(msg)
    doc["errors"] = [*doc.get("errors", []), msg]
