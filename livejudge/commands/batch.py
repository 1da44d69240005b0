"""Batch scoring: many recorded calls, one result per call, and a summary over calls.

``livejudge score calls/ --out-dir results/ --jobs 2`` (a directory, a glob such as
``'calls/*.wav'``, or a manifest: a text file with one audio path per line, a relative path read
from the manifest's folder or, when no file is there, from the current directory; ``#`` for
comments). Each call is scored by ``score_call`` — a plain, importable
function of (path, ScoreOptions) that returns the result document, so any executor can run
it (here a ``concurrent.futures.ProcessPoolExecutor``; with ``--ray``, ``run_batch_ray`` chooses
the Ray backend ``livejudge.distributed.ray_batch``, which runs tasks and never imports this
module back). A file that cannot be scored is
reported with its reason and skipped; it never aborts the batch, but the batch then exits 1
(``--allow-skipped``: 0), so a CI job that scores a folder notices a call it lost.

Outputs in ``--out-dir``: ``<name>.json`` per scored call, ``summary.json`` (every call with
its status, reason or metrics, and the medians over the scored calls) and ``summary.csv``
(one row per call).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from livejudge.config import DEFAULT_QWEN_MODEL, JudgeConfig
from livejudge.session import SessionConfig

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".opus", ".aiff", ".aif", ".mp3")  # what libsndfile reads (docs/cli.md)
MANIFEST_SUFFIXES = (".txt", ".lst", ".list", ".manifest", ".csv")


class CallError(Exception):
    """One call could not be scored (one-line reason)."""


@dataclass(frozen=True)
class ScoreOptions:
    """What ``score_call`` needs besides the file; picklable (sent to worker processes).

    Attributes:
        config: SessionConfig (judge_mode "every" for offline scoring).
        judge: "auto" (default: the whisper head, as ``livejudge score``; timing only with one line
            on stderr when its encoder cannot load), "whisper", "acoustic", "qwen-omni" or "none".
        head, device, qwen_model: as the CLI flags ``--head``, ``--device``, ``--qwen-model``.
        asr, asr_model: as ``--asr`` ("auto", "on", "off") and ``--asr-model``.
        user_channel, agent_channel: channel indices in each stereo file.
        echo_gate: as ``--echo-gate`` ("auto", "on", "off"): agent leakage removed from the user channel.
        judge_url: as ``--judge-url``: judge on a judge service (``livejudge serve-judge``).
    """

    config: SessionConfig = field(default_factory=lambda: SessionConfig(judge_mode="every"))
    judge: str = "auto"
    head: str | None = None
    device: str = "cpu"
    qwen_model: str = DEFAULT_QWEN_MODEL
    asr: str = "off"
    asr_model: str | None = None
    user_channel: int = 0
    agent_channel: int = 1
    echo_gate: str = "auto"
    judge_url: str | None = None

    @property
    def judge_config(self) -> JudgeConfig:
        """The judge and ASR settings, as ``commands.runner.judge_from_config`` takes them."""
        return JudgeConfig(kind=self.judge, head=self.head, device=self.device, qwen_model=self.qwen_model,
                           url=self.judge_url, asr=self.asr, asr_model=self.asr_model)


_JUDGES: dict = {}


def _judge_for(options: ScoreOptions):
    """One judge per process and settings (loading it is the slow part)."""
    from livejudge.commands.runner import judge_from_config

    if options.judge_url and options.judge != "none":  # a client per call: it counts that call's unjudged windows
        from livejudge.commands.runner import remote_judge

        return remote_judge(options.judge_url)
    key = (options.judge, options.head, options.device, options.qwen_model)
    if key not in _JUDGES:
        _JUDGES[key] = judge_from_config(options.judge_config)
    return _JUDGES[key]


def score_call(path: str | Path, options: ScoreOptions | None = None) -> dict:
    """Score one recorded call as ``livejudge score`` does and return its result document.

    Args:
        path: stereo audio file (user and agent on ``options.user_channel``/``agent_channel``).
        options: ScoreOptions (default: the auto judge, no ASR, default pipeline settings).
    Returns:
        the result document (``livejudge.outputs.report``).
    Raises:
        CallError: the file is missing, empty, undecodable or mono, or the judge cannot load.
    """
    from livejudge.audio import AudioFormatError, open_call
    from livejudge.timing.echo import gate_source
    from livejudge.commands.runner import transcriber_from_config
    from livejudge.errors import CLIError
    from livejudge.session import Session, stream_call

    options = options or ScoreOptions()
    try:  # the same path as a single `livejudge score`: block by block, then the echo gate
        reader = open_call(path, user_channel=options.user_channel, agent_channel=options.agent_channel)
    except AudioFormatError as exc:
        raise CallError(str(exc)) from None
    try:
        try:
            from livejudge.timing.health import check_call, check_line, unmeasurable

            health = check_call(reader)  # the same input-health check as a single score (issue 20)
            refuse = unmeasurable(health)
            if refuse:  # skipped with the reason, kept out of the medians
                raise CallError(refuse)
            call, gate_info = gate_source(reader, options.echo_gate, log=False)
            judge = _judge_for(options)
            transcriber = transcriber_from_config(options.judge_config)
        except (CLIError, AudioFormatError) as exc:
            raise CallError(str(exc)) from None
        info = {"sample_rate_in": call.sample_rate_in, "channels": call.channels, "kind": "score",
                "file": str(path), "file_resolved": str(Path(path).resolve()), "speed": "max",
                "asr": transcriber is not None, "echo_gate": gate_info}
        session = Session(options.config, judge=judge, info=info, transcriber=transcriber)
        session.set_input_health(health, say=False)  # a batch says them per call in its summary
        line = check_line(reader)
        if line is not None:  # a telephone band: a note per call, not a warning
            session.set_line(line, say=False)
        try:
            stream_call(session, call, speed=None)
            # a cut-off file is scored, and its result says so; as samples clipped or zeroed: both
            # are input-health warnings (the batch's input_health column, the gate count)
            from livejudge.timing.health import reader_warnings

            if reader.truncated:
                session.info["truncated"] = True
            session.add_input_health(reader_warnings(reader), say=False)
        except AudioFormatError as exc:
            session.errors.append(str(exc))
            session.info["ended"] = "failed: audio"
            raise CallError(str(exc)) from None
        finally:
            session.info.setdefault("ended", "end of input")  # as a single score's source.ended
            doc = session.close()
        return doc
    finally:
        reader.close()


def discover_calls(spec: str | Path) -> list[Path]:
    """The audio files a batch input names: a directory (its audio files, sorted, not
    recursive), a glob pattern, a manifest file, or a single audio file.

    Raises:
        CallError: nothing matched, or a manifest that cannot be read.
    """
    text = str(spec)
    p = Path(text)
    if p.is_file():  # an existing file is itself, even when its name holds * ? [ (``call [1].wav``)
        return [p] if p.suffix.lower() not in MANIFEST_SUFFIXES else _manifest(p)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in AUDIO_SUFFIXES)
        if not files:
            nested = nested_audio_count(p)
            raise CallError(f"{p}: no audio files ({', '.join(AUDIO_SUFFIXES)}) in this directory"
                            + (f"; its subfolders hold {nested}: score them with a quoted glob, "
                               f"'{p / '**' / '*.wav'}'" if nested else ""))
        return files
    if any(ch in text for ch in "*?["):
        files = sorted(_glob_files(text))
        if not files:
            raise CallError(f"{text}: the pattern matched no file")
        return files
    if p.suffix.lower() in MANIFEST_SUFFIXES:
        return _manifest(p)
    return [p]


def nested_audio_count(directory: Path, limit: int = 10_000) -> int:
    """How many audio files lie in the subfolders of ``directory`` (not in it), counting at most
    ``limit`` entries of the walk (a bound, so a huge tree costs little); symlinked folders are
    not followed (``Path.rglob``'s rule). A directory batch does not recurse: this is what it
    leaves out, for the hint (a trial: ``score coll/`` scored 1 call and said nothing of
    ``coll/a/x.wav``)."""
    import itertools

    n = 0
    for f in itertools.islice(directory.rglob("*"), limit):
        if f.parent != directory and f.suffix.lower() in AUDIO_SUFFIXES and f.is_file():
            n += 1
    return n


MAX_GLOB_FILES = 100_000
"""Most files one batch pattern may match (a bound, so a runaway pattern is an error, not a hang)."""


def _glob_files(pattern: str) -> list[Path]:
    """Files ``pattern`` matches, each file once (``**`` recursive). ``**`` does not descend
    into symlinked directories (pathlib's rule), so a symlink loop such as ``calls/again -> ..``
    ends the walk: ``glob.glob`` would follow it about 40 levels deep (ELOOP) and score the
    same call 40 times; two loops multiply.

    Raises:
        CallError: more than ``MAX_GLOB_FILES`` files matched.
    """
    parts = Path(pattern).parts
    k = next((i for i, part in enumerate(parts) if any(ch in part for ch in "*?[")), len(parts))
    anchor = Path(*parts[:k]) if k else Path(".")
    rest = str(Path(*parts[k:])) if k < len(parts) else ""
    out: dict[tuple[int, int], Path] = {}
    matches = anchor.glob(rest) if rest else iter([anchor])
    for fp in matches:
        if k == 0:
            fp = Path(os.path.relpath(fp)) if not Path(pattern).is_absolute() else fp
        try:
            if not fp.is_file():
                continue
            st = fp.stat()
        except OSError:  # ELOOP, a name too long: not a call
            continue
        out.setdefault((st.st_dev, st.st_ino), fp)
        if len(out) > MAX_GLOB_FILES:
            raise CallError(f"{pattern}: the pattern matches more than {MAX_GLOB_FILES} files; narrow it")
    return list(out.values())


_NOT_FOUND_NOTE: dict[str, str] = {}
"""A manifest line found in neither place (``_manifest``): the path it is skipped under → where
else it was looked for; ``write_summary`` adds this to the skip reason, so summary.json names both
places as the stderr line does (two trials read only the manifest-relative path there)."""


def _exists(p: Path) -> bool:
    """``p.exists()``, False where the name cannot be a file at all (a line of prose longer than
    the file system allows raised OSError "File name too long": a trial's README.txt)."""
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


def _manifest(p: Path) -> list[Path]:
    """The audio paths a manifest file lists: a relative path is read from the manifest's folder, or,
    when no file is there but one is from the current directory, from there (a new user's trial:
    ``t/calls/a.wav`` listed in ``t/manifest.txt`` became ``t/t/calls/a.wav`` and every call was
    skipped). Raises CallError."""
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CallError(f"cannot read the manifest {p}: {exc}") from None
    files, nowhere = [], []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if p.suffix.lower() == ".csv":
            line = line.split(",", 1)[0].strip()
            if line.lower() in ("path", "file"):
                continue
        if line:
            f = Path(line)
            beside = p.parent / f
            files.append(f if f.is_absolute() or (not _exists(beside) and _exists(f)) else beside)
            if not f.is_absolute() and not _exists(beside) and not _exists(f):
                nowhere.append(line)
                _NOT_FOUND_NOTE[str(beside)] = (f"listed in {p} as {line}; not found from the current directory "
                                                f"({Path.cwd() / f}) either")
    if not files:
        raise CallError(f"{p}: the manifest lists no files (one audio path per line)")
    if len(nowhere) == len(files) and not any(Path(x).suffix.lower() in AUDIO_SUFFIXES for x in nowhere):
        # no line names an audio file, and none exists: not a list of calls (a trial passed notes.txt and
        # got a results folder); one line and nothing written. Listed audio paths that are missing
        # are kept, each skipped with its reason in the summary.
        raise CallError(f"{p}: read as a manifest (one audio path per line), but none of its {len(files)} line(s) "
                        f"names an audio file ({', '.join(AUDIO_SUFFIXES)}) that exists (first: {nowhere[0]!r}); "
                        "pass a call's audio file, a folder of calls, or a list of their paths")
    if nowhere:  # each is skipped as "not found" at its manifest-relative path: say where else it was looked for
        shown = ", ".join(nowhere[:3]) + (f" and {len(nowhere) - 3} more" if len(nowhere) > 3 else "")
        print(f"livejudge: {p}: {len(nowhere)} listed file(s) found neither beside the manifest ({p.parent}/) nor "
              f"from the current directory ({Path.cwd()}/): {shown}; they are skipped", file=sys.stderr)
    return files


def is_batch_input(spec: str | None) -> bool:
    """True when ``score``'s FILE names several calls (directory, glob or manifest)."""
    if spec is None:
        return False
    p = Path(spec)
    if p.is_file():  # an existing file is a call (or a manifest), whatever its name holds
        return p.suffix.lower() in MANIFEST_SUFFIXES
    return p.is_dir() or any(ch in spec for ch in "*?[") or p.suffix.lower() in MANIFEST_SUFFIXES


def _out_names(files: list[Path]) -> list[str]:
    """Unique result file names: the stem, or the stem with its parent when stems repeat."""
    stems = [f.stem for f in files]
    names = []
    seen: dict[str, int] = {}
    for f, stem in zip(files, stems):
        name = stem if stems.count(stem) == 1 else f"{f.parent.name}_{stem}"
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        else:
            seen[name] = 0
        names.append(name + ".json")
    return names


def health_messages(doc: dict) -> list[str]:
    """The input-health warnings of a result document, one line each (a batch row's ``input_health``)."""
    return [str(w.get("message", w)) for w in (doc.get("source") or {}).get("input_health") or []]


def _line_note(doc: dict) -> str | None:
    """A call's narrowband-line note (``source.line``), or None."""
    line = (doc.get("source") or {}).get("line")
    return str(line["note"]) if isinstance(line, dict) and line.get("note") else None


def _echo_note(doc: dict) -> str | None:
    """What the echo gate did to a call's user channel, in words, or None (not applied)."""
    from livejudge.timing.echo import echo_gate_text

    return echo_gate_text((doc.get("source") or {}).get("echo_gate"))


def _score_one(path: str, options: ScoreOptions, out_path: str) -> dict:
    """Worker: score, write the result, return a small row (never raises)."""
    from livejudge.commands.gates import call_metrics
    from livejudge.outputs.report import write_json

    t0 = time.perf_counter()
    row = {"file": path, "status": "skipped", "reason": None, "result": None, "metrics": None}
    try:
        doc = score_call(path, options)
        write_json(doc, out_path)
        row.update(status="ok", result=out_path, metrics=call_metrics(doc),
                   errors=list(doc.get("errors") or []),
                   input_health=health_messages(doc), echo_gate=_echo_note(doc), line=_line_note(doc))
    except CallError as exc:
        row["reason"] = str(exc)
    except Exception as exc:  # a bug or a fault in one call must not end the batch
        row["reason"] = f"{type(exc).__name__}: {exc}"
    row["wall_s"] = round(time.perf_counter() - t0, 3)
    return row


def run_batch(files: list[Path], out_dir: str | Path, options: ScoreOptions, *, jobs: int = 1,
              progress: bool = True) -> dict:
    """Score ``files`` into ``out_dir`` with ``jobs`` processes; write summary.json/.csv.

    Returns:
        the summary document: ``{"n_calls", "n_scored", "n_skipped", "calls": [rows in input
        order], "medians": {metric: median over scored calls}, "out_dir", "jobs", "wall_s"}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = _out_names(files)
    tasks = [(str(f), options, str(out / n)) for f, n in zip(files, names)]
    rows: list[dict | None] = [None] * len(tasks)
    t0 = time.perf_counter()
    bar = _progress(len(tasks)) if progress else None
    from livejudge.commands.runner import SignalExit

    stopped: BaseException | None = None
    ex = None
    try:
        if jobs <= 1:
            for i, t in enumerate(tasks):
                rows[i] = _score_one(*t)
                _report_row(rows[i], bar)
        else:
            import multiprocessing as mp

            # spawn: workers start clean (no inherited threads or torch state from this process)
            ex = ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"),
                                     initializer=_one_thread_per_worker)
            futs = {ex.submit(_score_one, *t): i for i, t in enumerate(tasks)}
            for fut in as_completed(futs):
                i = futs[fut]
                try:
                    rows[i] = fut.result()
                except Exception as exc:  # the worker process itself died
                    rows[i] = {"file": tasks[i][0], "status": "skipped", "result": None, "metrics": None,
                               "reason": f"worker failed: {type(exc).__name__}: {exc}"}
                _report_row(rows[i], bar)
    except (KeyboardInterrupt, SignalExit) as exc:  # stopped: the calls done so far still get a summary
        stopped = exc
    finally:
        if ex is not None:  # on a stop, calls not yet started are cancelled, not run
            ex.shutdown(wait=stopped is None, cancel_futures=True)
        if bar is not None:
            bar[0].stop()
    if stopped is None:
        return write_summary(rows, out, jobs=jobs, wall_s=time.perf_counter() - t0)
    how = "Ctrl-C" if isinstance(stopped, KeyboardInterrupt) else str(stopped)
    summary = write_summary(rows, out, jobs=jobs, wall_s=time.perf_counter() - t0,
                            stopped=f"{how} after {sum(r is not None for r in rows)} of {len(rows)} calls")
    print(f"livejudge: batch stopped ({summary['stopped']}); summary of those written to {out / 'summary.json'}",
          file=sys.stderr)
    raise stopped


def _attempt(score_fn, path: str, options: ScoreOptions) -> dict:
    """Ray task body: the result document, or ``{"call_error": reason}`` for a rejected call
    (a value, so Ray does not retry it); other exceptions propagate (Ray retries once)."""
    t0 = time.perf_counter()
    try:
        doc = score_fn(path, options)
    except CallError as exc:
        return {"call_error": str(exc), "wall_s": time.perf_counter() - t0}
    return {"doc": doc, "wall_s": time.perf_counter() - t0}


def run_batch_ray(files: list[Path], out_dir: str | Path, options: ScoreOptions, *, address: str | None = None,
                  num_cpus: int | None = None, progress: bool = True, score_fn=None) -> dict:
    """Score ``files`` as Ray tasks into ``out_dir``; write summary.json/.csv (as ``run_batch``).

    The backend (``livejudge.distributed.ray_batch``) only runs the tasks; this runner writes
    each result as it comes back, on the driver.

    Args:
        files: the calls (paths visible to every Ray node).
        address: None for a local Ray started for the run, else "auto" or "ray://host:port".
        num_cpus: CPUs of the local Ray (None: all); ignored with an address.
        score_fn: the per-call function (default ``score_call``; tests pass a faulty one).
    Returns:
        the summary document of ``run_batch`` with ``jobs`` = the CPUs Ray offered and
        ``ray`` = {"address", "retries"}; each row as ``run_batch``'s, plus ``attempts`` for a
        call whose task failed (retried once).
    Raises:
        ImportError: Ray missing. ConnectionError: no cluster at ``address``.
    """
    from livejudge.commands.gates import call_metrics
    from livejudge.distributed.ray_batch import RETRIES, failure_reason, import_ray, run_tasks_ray
    from livejudge.outputs.report import write_json

    import_ray()  # the install hint before any directory is made
    score_fn = score_fn or score_call
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = _out_names(files)
    t0 = time.perf_counter()
    rows: list[dict | None] = [None] * len(files)
    bar = _progress(len(files)) if progress else None

    def on_done(i: int, got: dict | None, error: BaseException | None) -> None:
        row: dict = {"file": str(files[i]), "status": "skipped", "reason": None, "result": None, "metrics": None}
        if error is not None:
            row.update(reason=failure_reason(error), attempts=RETRIES + 1, wall_s=None)
        else:
            if "call_error" in got:
                row["reason"] = got["call_error"]
            else:
                doc = got["doc"]
                out_path = str(out / names[i])
                write_json(doc, out_path)
                row.update(status="ok", result=out_path, metrics=call_metrics(doc),
                           errors=list(doc.get("errors") or []), input_health=health_messages(doc),
                           echo_gate=_echo_note(doc), line=_line_note(doc))
            row["wall_s"] = round(got["wall_s"], 3)
        rows[i] = row
        _report_row(row, bar)

    try:
        cpus = run_tasks_ray(_attempt, [(score_fn, str(f), options) for f in files], on_done=on_done,
                             address=address, num_cpus=num_cpus)
    finally:
        if bar is not None:
            bar[0].stop()
    return write_summary(rows, out, jobs=cpus, wall_s=time.perf_counter() - t0,
                         ray={"address": address or "local", "retries": RETRIES})


def _one_thread_per_worker() -> None:
    """Worker start: one torch thread. N workers each running torch's default (all cores)
    oversubscribe the CPUs: 40 short calls with --jobs 2 on 2 cores took 36 s, 18 s with one
    thread each (as Ray's workers run); results are identical."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def write_summary(rows: list[dict | None], out: Path, *, jobs: int, wall_s: float, **extra) -> dict:
    """The batch summary of ``rows`` (input order; None = not done) written to ``out``
    (summary.json, summary.csv) and returned; ``extra`` keys join the document (e.g. ``ray``)."""
    from livejudge.commands.gates import batch_metrics, measured_calls

    done = [r for r in rows if r is not None]
    for r in done:  # a manifest line found nowhere: both places it was looked for
        note = _NOT_FOUND_NOTE.get(str(r["file"]))
        if r["status"] != "ok" and note and note not in (r.get("reason") or ""):
            r["reason"] = f"{r.get('reason') or 'audio file not found'}; {note}"
    scored = [r for r in done if r["status"] == "ok"]
    summary = {
        "n_calls": len(done),
        "n_scored": len(scored),
        "n_skipped": len(done) - len(scored),
        "jobs": jobs,
        "wall_s": round(wall_s, 3),
        "out_dir": str(out),
        **extra,
        **({"judge_info": ji} if (ji := _judge_info_of(scored)) else {}),
        "medians": batch_metrics(r["metrics"] for r in scored),
        # how many scored calls each median is over (a silent agent measures no latency)
        "measured_calls": measured_calls(r["metrics"] for r in scored),
        "calls": done,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    write_summary_csv(out / "summary.csv", done)
    return summary


def _judge_info_of(scored: list[dict]) -> dict | None:
    """The judge's identity and validity line (``head``, ``summary``, ``validated``) as the first
    scored call's result names it, for the summary and the batch's last stderr line (a new user's
    trial: a batch printed no validity line, though every result carries one); None without a
    judge or a readable result."""
    for r in scored:
        try:
            ji = json.loads(Path(r["result"]).read_text(encoding="utf-8")).get("judge_info") or {}
        except (OSError, ValueError, TypeError):
            continue
        # with the dimension view, so compare shows a batch's dimensions as it shows a call's
        # (a trial: 18 rows, the shared-score three apart, beside a call's merged row)
        return {k: ji[k] for k in ("head", "head_version", "summary", "validated", "dimensions") if ji.get(k)} or None
    return None


def write_summary_csv(path: Path, rows: list[dict]) -> Path:
    """One row per call: file, status, reason, result path, input-health warnings (``; ``-joined),
    then every metric."""
    keys = list(dict.fromkeys(k for r in rows for k in (r.get("metrics") or {})))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["file", "status", "reason", "result", "wall_s", "input_health", *keys])
        for r in rows:
            m = r.get("metrics") or {}
            w.writerow([r["file"], r["status"], r.get("reason") or "", r.get("result") or "", r.get("wall_s", ""),
                        "; ".join(r.get("input_health") or ()), *[_csv_cell(k, m.get(k)) for k in keys]])
    return path


def _csv_cell(key: str, v: float | None) -> object:
    """A metric as summary.csv writes it: counts (``*_count``, ``*_windows``) as integers where
    whole ("3.0" read as a measurement, a new user's trial; results written before counts stayed
    integers in ``call_metrics`` hold floats), empty for None."""
    if v is None:
        return ""
    if key.endswith(("_count", "_windows")) and float(v).is_integer():
        return int(v)
    return v


def _progress(total: int):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    bar = Progress(TextColumn("scoring calls"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[last]}"), console=console, transient=False,
                   disable=not console.is_terminal)
    task = bar.add_task("calls", total=total, last="")
    bar.start()
    return bar, task, console


def _report_row(row: dict, bar) -> None:
    from livejudge.outputs.guard import clean

    msgs = [] if row["status"] == "ok" else [f"livejudge: skipped {row['file']}: {row['reason']}"]
    msgs += [f"livejudge: warning: {row['file']}: {m}" for m in row.get("input_health") or ()]
    if row.get("echo_gate"):  # the gate rewrote the caller's channel: said per call, as score says it
        msgs.append(f"livejudge: {row['file']}: echo gate on: {row['echo_gate']}")
    if row.get("line"):
        msgs.append(f"livejudge: note: {row['file']}: {row['line']}")
    for msg in msgs:
        msg = clean(msg)
        if bar is not None and bar[2].is_terminal:
            bar[0].console.print(msg, markup=False, highlight=False)
        else:
            print(msg, file=sys.stderr, flush=True)
    if bar is not None:
        bar[0].update(bar[1], advance=1, last=Path(row["file"]).name)


def options_from_args(args: argparse.Namespace) -> ScoreOptions:
    """ScoreOptions from ``score``'s flags (device auto → what is present)."""
    from livejudge.commands.runner import session_config

    device = args.device
    if device == "auto":
        device = "cpu" if args.judge == "acoustic" else "auto"
    return ScoreOptions(config=session_config(args, "every"), judge=args.judge, head=args.head,
                        device=device, qwen_model=args.qwen_model, asr=args.asr, asr_model=args.asr_model,
                        user_channel=args.user_channel, agent_channel=args.agent_channel,
                        echo_gate=getattr(args, "echo_gate", "auto"), judge_url=getattr(args, "judge_url", None))


def cmd_score_batch(args: argparse.Namespace) -> int:
    """``livejudge score SPEC --out-dir DIR [--jobs N]``: see the module docstring.

    Exit codes: 0 every call scored; 1 some calls were skipped (each listed with its reason; the
    rest are scored and written; 0 with ``--allow-skipped``); 2 no input or no call could be
    scored; 3 a ``--fail-if`` gate failed on the medians over the scored calls, or on any scored
    call with ``--gate-each`` (before 1).
    """
    from livejudge.commands.gates import (EXIT_GATE, evaluate_batch, evaluate_each, explain_unmeasured, failed_by_call,
                                          format_failures, format_passed, parse_gates, unmeasured_by_call, write_junit)
    from livejudge.outputs.report import dimension_view
    from livejudge.commands.runner import output_config, print_validity, print_wrapped
    from livejudge.errors import EXIT_FAILED, CLIError

    output = output_config(args)
    gates = parse_gates(output.fail_if)
    if output.report:
        raise CLIError("--report writes one call's report; for a batch, run livejudge report on a result in --out-dir")
    if output.json_out or output.events:
        raise CLIError("--json/--events are per call; a batch writes one result per call into --out-dir")
    if args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1, got {args.jobs}")
    try:
        files = discover_calls(args.file)
    except CallError as exc:
        raise CLIError(str(exc)) from None
    out_dir = args.out_dir or "livejudge-results"
    if Path(args.file).is_dir() and (nested := nested_audio_count(Path(args.file))):
        print(f"livejudge: {args.file}: {nested} audio file(s) in its subfolders are not scored (a folder is read "
              f"one level deep); to include them, pass a quoted glob: '{Path(args.file) / '**' / '*.wav'}'",
              file=sys.stderr)
    options = options_from_args(args)
    if getattr(args, "ray", None) is not None:  # the same per-call function as Ray tasks
        address = None if args.ray == "local" else args.ray
        num_cpus = int(args.jobs) if isinstance(args.jobs, _Jobs) else None
        try:
            summary = run_batch_ray(files, out_dir, options, address=address, num_cpus=num_cpus, progress=True)
        except (ImportError, ConnectionError) as exc:
            raise CLIError(str(exc)) from None
    else:
        summary = run_batch(files, out_dir, options, jobs=min(args.jobs, len(files)), progress=True)
    sm = summary["medians"]

    def f(k, unit=""):
        v = sm.get(k)
        return "–" if v is None else f"{v:.2f}{unit}"

    def over(*keys):  # a median over fewer calls than were scored says so
        n = min((summary.get("measured_calls") or {}).get(k, 0) for k in keys)
        return f" (from {n} of {summary['n_scored']} calls)" if 0 < n < summary["n_scored"] else ""

    # the median alone read as every call's figure (a trial: "0.00" for calls at 0.00, 0.00 and 0.94)
    ps = [r["metrics"]["mean_p_human"] for r in summary["calls"]
          if r.get("status") == "ok" and (r.get("metrics") or {}).get("mean_p_human") is not None]
    p_range = "" if len(ps) < 2 else (f" (range {min(ps):.2f}–{max(ps):.2f})"
                                      if f"{min(ps):.2f}" != f"{max(ps):.2f}" else " (the same in every call)")

    print_wrapped(f"livejudge: {summary['n_scored']} of {summary['n_calls']} calls scored, {summary['n_skipped']} skipped "
                  f"in {summary['wall_s']:.1f} s · medians over calls: latency p50 {f('latency_p50_s', 's')} "
                  f"p90 {f('latency_p90_s', 's')}{over('latency_p50_s', 'latency_p90_s')} · the calls' mean P(human) "
                  f"{f('mean_p_human')}{p_range}{over('mean_p_human')} · "
                  f"summary in {Path(out_dir) / 'summary.json'} and summary.csv")
    print_validity(summary.get("judge_info") or {})
    scored = [r for r in summary["calls"] if r.get("status") == "ok"]
    failed_on = None
    if getattr(args, "gate_each", False):
        scope = f"each of {summary['n_scored']} scored calls"
        results, failed_on = evaluate_each(gates, scored)
        results = explain_unmeasured(results, dimension_view(summary))
    else:
        scope = f"medians over {summary['n_scored']} scored calls"
        results = explain_unmeasured(evaluate_batch(gates, scored), dimension_view(summary))
    if gates:  # the gate outcomes in summary.json too (a trial found them only on stderr and in JUnit)
        from livejudge.commands.gates import gate_dicts

        kept = gate_dicts(results)
        for g, d in zip(gates, kept):  # "value" is the median; with --gate-each, the calls a gate failed on
            d["value_is"] = "the median over the scored calls"  # (a trial read the median 0 as the failing value)
            if failed_on is not None:
                d["failed_on"] = failed_on[g.text]
        summary["gates"] = {"scope": scope, "results": kept}
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if output.junit:
        p = write_junit(output.junit, results, suite=scope, calls=summary["calls"],
                        unmeasured=unmeasured_by_call(gates, scored),
                        skipped_is_error=not getattr(args, "allow_skipped", False),
                        failed_each=None if failed_on is None else failed_by_call(failed_on))
        print(f"livejudge: JUnit XML written to {p}", file=sys.stderr)
    if summary["n_scored"] == 0:
        raise CLIError("no call could be scored (reasons above)")
    msg = format_failures(results, scope)
    if msg:
        print(msg, file=sys.stderr)
        return EXIT_GATE
    passed = format_passed(results, scope)
    if passed:
        print(passed, file=sys.stderr)
    if summary["n_skipped"] and not getattr(args, "allow_skipped", False):
        # a CI job that scored a folder exited 0 with a call lost (a note from a previous session)
        print(f"livejudge: exit 1: {summary['n_skipped']} of {summary['n_calls']} calls skipped (reasons above and in "
              f"summary.json); pass --allow-skipped to exit 0 when the scored calls are enough", file=sys.stderr)
        return EXIT_FAILED
    return 0


def add_batch_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("batch (FILE is a directory, a glob or a manifest)")
    g.add_argument("--out-dir", default=None, metavar="DIR",
                   help="write one result per call plus summary.json/summary.csv here "
                        "(default for a batch: livejudge-results)")
    g.add_argument("--allow-skipped", action="store_true",
                   help="exit 0 when some calls were skipped (default: exit 1, after writing every result and "
                        "the summary, so CI notices a lost call)")
    g.add_argument("--gate-each", action="store_true",
                   help="apply each --fail-if to every scored call on its own: one failing call fails the batch "
                        "(default: the gates read the medians over the calls, which pass a warning or a flag that "
                        "most calls lack, e.g. 'input_health_warning_count>0' on one call of three)")
    g.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help=f"score N calls at once in worker processes (this machine has {os.cpu_count()} CPUs); "
                        "with --ray: the CPUs of the local Ray")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score the calls as Ray tasks (livejudge[ray]): no ADDRESS starts a local Ray for the "
                        "run; 'auto' or ray://host:port joins a cluster (call paths must be visible to its nodes)")


class _Jobs(int):
    """``--jobs`` value that remembers it was given (a local Ray takes all CPUs otherwise)."""


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs must be a whole number, got {text!r}") from None
    if n < 1:  # checked here so a single call (which ignores --jobs) refuses it too
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, got {n}")
    return _Jobs(n)
