"""`livejudge train` and `livejudge eval`: fit and score judge heads from a JSONL manifest.

``register(subparsers)`` adds both subcommands to the top-level parser (livejudge.commands.cli);
the fitting and scoring themselves live in ``livejudge.judge.training``.

    livejudge train calls.jsonl --backbone acoustic --out heads/mine [--init-head DIR] [--force]
    livejudge eval calls.jsonl --head heads/mine --json eval.json

Manifest format: see ``livejudge.judge.training.train.read_manifest``. Bad input exits with code 2 and
one line naming the problem; output paths and every row's input health
(``livejudge.judge.training.inputs``) are checked before any work.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from livejudge.errors import EXIT_USAGE, CLIError

BACKBONE_KINDS = ("acoustic", "whisper", "qwen-omni")
HEAD_VERSION = "0.1.0"
"""Version a trained head gets unless --head-version says otherwise (every backbone)."""

CommandError = CLIError
"""A one-line, user-facing error of ``train``/``eval`` with the exit code to return: the CLI's
own error (``livejudge.errors``), kept under this name for callers of this module."""


MANIFEST_HELP = """manifest (JSONL, one call per line; paths relative to the manifest):
  {"audio": "calls/a.wav", "user_channel": 0, "agent_channel": 1,
   "ratings": {"rhythm": 2, "intonation": 1}, "label": "machine", "split": "train", "kind": "hm"}
  {"user": "b_user.wav", "agent": "b_agent.wav", "label": "human", "split": "val", "kind": "hh"}
  audio: stereo file (channels as given, default 0/1) or mono file (the responder's side alone);
  ratings: dimension id -> 1..5 (any subset; missing = not rated); label: human | machine;
  split: train | val | test (default train); kind: free tag for per-kind accuracy;
  family: the voice's TTS family or human source group (docs/corpus.md names), which eval compares
  with the families a head's config says it was fitted on.
  Every row is checked first as score checks a recording: a row with a silent channel, under 1 s,
  or nothing measurable stops the command (one line: manifest line, file, problem) unless
  --skip-bad-rows leaves such rows out; rows with other warnings are used and listed."""

TRAIN_EXIT_CODES = ("exit codes: 0 done · 1 failed mid-way · 2 bad input or usage (one line says what: "
                    "a manifest line, a missing file, a row that cannot be measured, a head for another backbone, "
                    "an output path that cannot be written, an --out that holds a head without --force)")
"""What ``train`` exits with (docs/result.md, "Exit codes")."""
EVAL_EXIT_CODES = ("exit codes: 0 done · 1 failed mid-way · 2 bad input or usage (one line says what: "
                   "a manifest line, a missing file, a row that cannot be measured, a head for another backbone, "
                   "an output path that cannot be written)")
"""What ``eval`` exits with: ``train``'s but for ``--out`` (eval writes no head; a trial)."""


def _cli_error(message: str) -> Exception:
    return CommandError(message, EXIT_USAGE)


def kind_of_backbone(name: str) -> str:
    """Backbone id stored in a head ("acoustic-v1", "qwen2.5-omni-7b") → ``load_judge`` kind."""
    from livejudge.judge.model.head import judge_kind

    kind = judge_kind(name)
    if kind in ("acoustic", "qwen-omni", "whisper"):
        return kind
    raise _cli_error(f"head was built for backbone {name!r}, which this livejudge cannot load "
                     f"(known: {', '.join(BACKBONE_KINDS)})")


def make_backbone(kind: str, device: str = "cpu", model: str | None = None) -> Any:
    """Instantiate a backbone by kind (imports lazily: the qwen backbone needs transformers)."""
    if kind == "acoustic":
        from livejudge.judge.features.backbones.acoustic import AcousticBackbone

        return AcousticBackbone()
    if kind == "whisper":
        from livejudge.judge.features.backbones.whisper import WhisperBackbone

        return WhisperBackbone(settle_s=0.0)  # train/eval embed whole recorded calls: every turn is final
    if kind == "qwen-omni":
        from livejudge.judge.features.backbones.qwen_omni import QwenOmniBackbone

        kwargs: dict[str, Any] = {"device": device}
        if model is not None:
            kwargs["model"] = model
        return QwenOmniBackbone(**kwargs)
    raise _cli_error(f"unknown backbone {kind!r}; valid: {', '.join(BACKBONE_KINDS)}")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="embedding cache (default: $LIVEJUDGE_CACHE_DIR or ~/.cache/livejudge/embeddings)")
    p.add_argument("--device", default="cpu", help="torch device for the backbone (cpu, cuda, cuda:1)")
    p.add_argument("--qwen-model", default="Qwen/Qwen2.5-Omni-7B",
                   help="Qwen2.5-Omni model id or local path (qwen-omni backbone)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument("--asr", default="off", choices=("off", "on"),
                   help="transcribe each call's agent turns (livejudge[asr]) so the acoustic backbone's text "
                        "dimensions count; use the same setting for train and eval")
    p.add_argument("--asr-model", default=None, metavar="DIR", help="local faster-whisper model directory")


def _add_skip_bad_rows(p: argparse.ArgumentParser, doing: str) -> None:
    p.add_argument("--skip-bad-rows", action="store_true",
                   help=f"leave out rows that cannot be measured (a silent channel, under 1 s, both channels alike) "
                        f"and say how many and why, instead of stopping before {doing} (exit 2)")


def register(subparsers: Any, formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter) -> None:
    """Add ``train`` and ``eval`` to an argparse subparsers object."""
    from livejudge.judge.model.numpy_head import READOUTS, SCALE_INIT, SYMMETRY_LAMBDA
    from livejudge.judge.training.config import TrainConfig  # torch-free: `livejudge --help` must not import torch

    d = TrainConfig()
    p = subparsers.add_parser(
        "train", help="fit a judge head (ODL + classifier) on a manifest of calls", formatter_class=formatter_class,
        epilog=MANIFEST_HELP + "\n\n" + TRAIN_EXIT_CODES,
        description="Two-stage training as in \"Human or Machine? A Preliminary Turing Test for Speech-to-Speech Interaction\" (§6.2.1): stage 1 fits the readout + ODL to the 1–5 "
                    "ratings, stage 2 the linear classifier on the frozen latent scores. Adam, Table 19 "
                    "defaults, early stopping on the manifest's 'val' rows.\n"
                    "Note: the ODL lr 1e-5 is the paper's choice for 3584-d Qwen2.5-Omni-7B states; the "
                    "acoustic backbone's few features need ~1e-3 (--odl-lr) or many more epochs.\n"
                    "With --backbone whisper (the shipped head's backbone) and fewer rated rows than "
                    "--min-rated, it fits the label-only head instead: an L2 logistic regression on the encoder "
                    "readouts, Platt-calibrated on the 'val' rows; the two-stage flags do not apply there.\n"
                    "Examples: livejudge train calls.jsonl --backbone whisper --out heads/mine; "
                    "livejudge train calls.jsonl --backbone acoustic --out heads/mine "
                    "--init-head livejudge/judge/heads/acoustic-prior --odl-lr 1e-3")
    p.add_argument("manifest", metavar="MANIFEST", help="JSONL, one call per line (format below)")
    p.add_argument("--backbone", default="acoustic", choices=BACKBONE_KINDS,
                   help="backbone to embed the calls; whisper is the shipped head's (the default acoustic one is "
                        "NOT valid on neural TTS: docs/judge.md)")
    p.add_argument("--out", required=True, metavar="HEAD_DIR",
                   help="directory to write the trained head to (made if missing; checked before any work)")
    p.add_argument("--force", action="store_true",
                   help="overwrite the head --out already holds (default: refuse, exit 2)")
    p.add_argument("--init-head", default=None, metavar="DIR",
                   help="start from this head (kept as is for stage 1 when there are too few ratings)")
    p.add_argument("--readout", default=None, choices=READOUTS,
                   help="readout (default: fused for qwen-omni, features for acoustic, or the init head's)")
    p.add_argument("--name", default=None, help="head name in its config (default: the --out folder name)")
    p.add_argument("--head-version", default=HEAD_VERSION, help="version string stored in the head's config")
    p.add_argument("--epochs", type=int, default=None, help="maximum epochs for both stages (overrides the two below)")
    p.add_argument("--odl-epochs", type=int, default=d.odl_epochs, help="maximum stage-1 epochs")
    p.add_argument("--linear-epochs", type=int, default=d.linear_epochs, help="maximum stage-2 epochs")
    p.add_argument("--odl-lr", type=float, default=d.odl_lr, help="stage-1 Adam learning rate (Table 19)")
    p.add_argument("--odl-batch-size", type=int, default=d.odl_batch_size, help="stage-1 batch (Table 19)")
    p.add_argument("--dropout", type=float, default=d.dropout, help="ODL dropout (Table 19)")
    p.add_argument("--scale", type=float, default=SCALE_INIT, help="initial cut-point scale s_k (Table 19)")
    p.add_argument("--linear-lr", type=float, default=d.linear_lr, help="stage-2 Adam learning rate (Table 19)")
    p.add_argument("--linear-batch-size", type=int, default=d.linear_batch_size, help="stage-2 batch (Table 19)")
    p.add_argument("--symmetry-lambda", type=float, default=SYMMETRY_LAMBDA, help="λ of ‖W_1 + W_2‖₂ (§6.2.1)")
    p.add_argument("--patience", type=int, default=d.patience, help="early-stopping patience, epochs")
    p.add_argument("--min-rated", type=int, default=d.min_rated,
                   help="fewest rated training calls to fit stage 1 (else keep --init-head's ODL)")
    p.add_argument("--seed", type=int, default=d.seed, help="random seed")
    _add_skip_bad_rows(p, "fitting")
    _add_common(p)
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser(
        "eval", help="score a judge head on a manifest of calls", formatter_class=formatter_class,
        epilog=MANIFEST_HELP + "\n\n" + EVAL_EXIT_CODES,
        description="Per-dimension exact / grouped (1–2, 3, 4–5) / ±1 accuracy (Table 21 of the Turing-test paper), "
                    "human-vs-machine accuracy per kind and overall, ROC-AUC (Table 4). The backbone is "
                    "the one the head was built for; evidence gating is applied as in the live judge.\n"
                    "Example: livejudge eval calls.jsonl --head heads/mine --json eval.json")
    p.add_argument("manifest", metavar="MANIFEST", help="JSONL, one call per line (format below)")
    p.add_argument("--head", required=True, metavar="HEAD_DIR",
                   help="head checkpoint directory, or a shipped head's name (whisper-fitted, acoustic-fitted, "
                        "acoustic-prior)")
    p.add_argument("--split", default="auto", choices=("auto", "all", "train", "val", "test"),
                   help="which manifest rows to evaluate; auto: the 'test' rows when the manifest has any (the "
                        "rows train keeps out), else all rows. The output says how many scored rows the head "
                        "was fitted or calibrated on")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT", help="write the metrics here ('-' = stdout)")
    _add_skip_bad_rows(p, "scoring")
    _add_common(p)
    p.set_defaults(func=cmd_eval)


def _load_entries(path: str):
    from livejudge.audio import AudioFormatError
    from livejudge.judge.training.train import ManifestError, read_manifest

    try:
        return read_manifest(path)
    except (ManifestError, AudioFormatError) as exc:
        raise _cli_error(str(exc)) from exc


def _screen(entries, args, con, done: str):
    """Every row's input health (``livejudge.judge.training.inputs.screen_rows``) before any work:
    refuses a row that cannot be measured (CommandError, exit 2) unless --skip-bad-rows, prints
    the rows left out and the rows used with warnings. Returns the ``RowScreen``."""
    from livejudge.judge.training.inputs import screen_rows
    from livejudge.judge.training.train import ManifestError

    try:
        screen = screen_rows(entries, args.manifest, skip_bad=getattr(args, "skip_bad_rows", False))
    except ManifestError as exc:
        raise _cli_error(str(exc)) from exc
    for line in screen.lines(done):
        con.print(line, markup=False, highlight=False, soft_wrap=True)
    return screen


def _embed(entries, backbone, args) -> list:
    from livejudge.audio import AudioFormatError
    from livejudge.judge.training.inputs import manifest_words
    from livejudge.judge.training.train import EmbeddingCache, EntryAudioError, embed_entries

    transcriber = None
    if getattr(args, "asr", "off") == "on":
        from livejudge.judge.features.asr import ASRError, WhisperTranscriber

        try:
            transcriber = WhisperTranscriber(args.asr_model)
        except (ASRError, ImportError, OSError, RuntimeError) as exc:
            raise _cli_error(f"--asr on: {exc}") from exc
    try:
        return embed_entries(entries, backbone, EmbeddingCache(args.cache_dir), progress=not args.no_progress,
                             transcriber=transcriber)
    except EntryAudioError as exc:
        raise _cli_error(f"{args.manifest} line {exc.entry.line}: {manifest_words(str(exc))}") from exc
    except AudioFormatError as exc:
        raise _cli_error(str(exc)) from exc
    finally:
        if transcriber is not None:
            transcriber.close(wait=False)


def _file_sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _require_torch(command: str) -> None:
    """Raise CommandError with the install hint when PyTorch is missing (it is the ``train`` extra)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise _cli_error(f"livejudge {command} needs PyTorch: pip install 'livejudge[train]' (CPU build: "
                         "pip install torch --index-url https://download.pytorch.org/whl/cpu)") from None


def cmd_train(args: argparse.Namespace) -> int:
    _require_torch("train")
    from rich.console import Console

    from livejudge.judge.model.head import HeadError, load_head, new_config
    from livejudge.judge.training.head_files import check_head_out
    from livejudge.judge.training.train import (
        TrainConfig, TrainError, manifest_arrays, row_digests, rows_record, stack_embeddings, train_head,
    )

    con = Console(stderr=True)
    check_head_out(args.out, force=args.force)  # before any work: a bad --out used to fail after it
    entries = _load_entries(args.manifest)
    screen = _screen(entries, args, con, "fitted")
    entries = screen.kept
    init_head, init_cfg = None, None
    if args.init_head is not None:
        try:
            init_head, init_cfg = load_head(args.init_head)
        except HeadError as exc:
            raise _cli_error(str(exc)) from exc
    from livejudge.judge.model.judge import expected_backbone_name

    if init_cfg is not None:  # checked before loading any backbone weights
        expected = expected_backbone_name(args.backbone, args.qwen_model)
        if init_cfg.backbone.name != expected:
            raise _cli_error(f"--init-head was built for backbone {init_cfg.backbone.name}, but --backbone "
                             f"{args.backbone} is {expected}: pass a matching --init-head or --backbone")
    R, labels, split, kinds = manifest_arrays(entries)
    n_rated = int(((R > 0).any(axis=1) & (split == "train")).sum())
    n_train = int((split == "train").sum())
    if n_rated < args.min_rated and n_train and not (labels[split == "train"] >= 0).any():
        raise _cli_error(f"none of the {n_train} 'train' rows of {args.manifest} has a 'label' (and only {n_rated} "
                         f"have 'ratings', {args.min_rated} needed to fit the ODL), so there is nothing to fit: "
                         "add \"label\": \"human\" or \"machine\" to each row (or 'ratings')")
    if init_head is None and n_rated < args.min_rated and args.backbone == "acoustic":
        # labels without ratings: keep the shipped head's ODL and fit the classifier (first-run defect:
        # this used to refuse until --init-head was given)
        from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD

        args.init_head = str(DEFAULT_ACOUSTIC_HEAD)
        init_head, init_cfg = load_head(DEFAULT_ACOUSTIC_HEAD)
        con.print(f"only {n_rated} training calls have ratings (need {args.min_rated} to fit the ODL): keeping "
                  f"the shipped head's ODL ({init_cfg.name} {init_cfg.version}, {DEFAULT_ACOUSTIC_HEAD}) and "
                  "fitting the classifier on the labels; pass --init-head DIR to start from another head")
    if n_rated < args.min_rated and init_head is not None:
        _check_label_classes(labels, split, args.manifest)  # else stage 1 and stage 2 both keep: nothing fitted
    labels_only_whisper = args.backbone == "whisper" and init_head is None and n_rated < args.min_rated
    if init_head is None and n_rated < args.min_rated and not labels_only_whisper:  # fail before embedding anything
        raise _cli_error(f"only {n_rated} training calls have ratings (need {args.min_rated} to fit the ODL): "
                         "add 'ratings' to the manifest or pass --init-head DIR to keep an existing head's ODL"
                         + (" (the shipped prior head is livejudge/judge/heads/acoustic-prior)"
                            if args.backbone == "acoustic" else ""))
    if labels_only_whisper:
        _check_whisper_splits(labels, split)
        ignored = _ignored_two_stage_flags(args)
        # said, not silent: the weights came out byte-identical whatever these were (a trial)
        con.print("whisper with fewer rated rows than --min-rated: the label-only head (an L2 logistic regression "
                  "on the encoder readouts, Platt-calibrated on the 'val' rows; docs/judge.md)"
                  + (f"; {n_rated} row(s) with ratings: the ratings are not used (fewer than --min-rated "
                     f"{args.min_rated})" if n_rated else "")
                  + (f"; not used by it: {', '.join(ignored)}" if ignored else ""))
    try:
        backbone = make_backbone(args.backbone, args.device, args.qwen_model)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise _cli_error(f"cannot load the {args.backbone} backbone: {exc}") from exc
    embs = _embed(entries, backbone, args)
    vectors = stack_embeddings(embs)
    digests = [row_digests(e) for e in entries]
    families = np.array([e.family for e in entries], dtype=object)
    if labels_only_whisper:
        return _train_whisper_labels(args, backbone, embs, vectors, R, labels, split, kinds, digests, con, screen,
                                     families)
    cfg = TrainConfig(
        seed=args.seed, odl_lr=args.odl_lr, odl_batch_size=args.odl_batch_size,
        odl_epochs=args.epochs or args.odl_epochs, dropout=args.dropout, scale_init=args.scale,
        linear_lr=args.linear_lr, linear_batch_size=args.linear_batch_size,
        linear_epochs=args.epochs or args.linear_epochs, symmetry_lambda=args.symmetry_lambda,
        patience=args.patience, min_rated=args.min_rated, progress=not args.no_progress,
    )
    try:
        res = train_head(vectors, R, labels, split, readout=args.readout, init_head=init_head, config=cfg)
    except TrainError as exc:
        msg = str(exc)
        if "--init-head" in msg and args.backbone == "acoustic" and init_head is None:
            from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, PRIOR_ACOUSTIC_HEAD

            msg += (f" (shipped heads: {DEFAULT_ACOUSTIC_HEAD} (default, fitted classifier) and "
                    f"{PRIOR_ACOUSTIC_HEAD} (prior))")
        raise _cli_error(msg) from exc
    s = res.summary
    con.print(f"stage 1 ({s['stage1']['status']}): {s['stage1']['fitted_on']}")
    con.print(f"stage 2 ({s['stage2']['status']}): {s['stage2']['fitted_on']}")
    s["manifest"] = {"path": str(Path(args.manifest)), "sha256": _file_sha256(args.manifest),
                     "kinds": {k or "unspecified": int((kinds == k).sum()) for k in sorted(set(kinds.tolist()))}}
    s["backbone"] = backbone.name
    # whether its calls were embedded with transcripts: a head fitted without them is judged without
    # them (``Judge.reads_transcripts``), so a report's transcripts do not move its P(human)
    s["transcripts"] = getattr(args, "asr", "off") == "on"
    s["init_head"] = (f"{init_cfg.name} {init_cfg.version} ({init_cfg.provenance}) from {args.init_head}"
                      if init_cfg is not None else None)
    s["rows"] = rows_record(digests, fit=split == "train", validation=split == "val")
    s["input_health"] = screen.record()
    evidence_min = dict(getattr(backbone, "evidence_min", {}) or {})
    if init_cfg is not None:
        evidence_min.update(init_cfg.evidence_min)
    _gated_accuracies(s["stage2"], res.head, vectors, R, labels, split, kinds, embs, evidence_min, backbone.name)
    test = _held_out_test(res.head, vectors, R, labels, split, kinds, embs, evidence_min, backbone.name, con,
                          digests, families)
    s.update(_families_record(families, labels, split))
    if test is not None:
        s["test"] = test
    name = args.name or Path(args.out).name
    try:
        hcfg = new_config(
            backbone, name=name, version=args.head_version, provenance="trained", readout=res.head.readout_mode,
            feature_names=getattr(backbone, "feature_names", None),
            evidence_min={k: v for k, v in (init_cfg.evidence_min if init_cfg else {}).items()},
            training=s,
            sources=[f"livejudge train on {args.manifest}"] + (list(init_cfg.sources) if init_cfg else []),
            notes=(f"Trained {_dt.date.today().isoformat()} with livejudge train (two-stage ODL + linear "
                   f"classifier, the Turing-test paper §6.2.1); {_test_pointer(test)}."),
        )
        out = _save(args.out, res.head, hcfg)
    except HeadError as exc:
        raise _cli_error(str(exc)) from exc
    con.print(f"wrote head {name} to {out}")
    return 0


def _ignored_two_stage_flags(args: argparse.Namespace) -> list[str]:
    """The two-stage training flags given other than their defaults (``--epochs 3``), which the
    whisper label-only head does not use. Pure."""
    from livejudge.judge.model.numpy_head import SCALE_INIT, SYMMETRY_LAMBDA
    from livejudge.judge.training.config import TrainConfig

    d = TrainConfig()
    defaults = {"epochs": None, "odl_epochs": d.odl_epochs, "linear_epochs": d.linear_epochs, "odl_lr": d.odl_lr,
                "odl_batch_size": d.odl_batch_size, "dropout": d.dropout, "scale": SCALE_INIT,
                "linear_lr": d.linear_lr, "linear_batch_size": d.linear_batch_size,
                "symmetry_lambda": SYMMETRY_LAMBDA, "patience": d.patience, "readout": None}
    return [f"--{k.replace('_', '-')} {getattr(args, k)}" for k, v in defaults.items()
            if getattr(args, k, v) != v]


def _save(out: str, head, cfg) -> Path:
    """``head.save_head``, then the weights get the umask's permissions (safetensors writes 0600:
    another user or a CI container could not load the head). Raises HeadError, CommandError (the
    permissions cannot be set)."""
    from livejudge.judge.model.head import save_head
    from livejudge.judge.training.head_files import share_head_files

    path = save_head(out, head, cfg)
    try:
        share_head_files(path)
    except OSError as exc:
        raise CommandError(f"wrote the head to {path} but cannot set its weights' permissions "
                           f"({exc.strerror or exc}): chmod a+r {path}/*.safetensors", 1) from exc
    return path


def _test_pointer(test: dict | None) -> str:
    """Where a trained head's config keeps its held-out figures, for its ``notes``."""
    if test is not None:
        return "the held-out test rows' figures are in training.test"
    return "no held-out figures: the manifest had no 'test' rows"


def _gated_accuracies(s2: dict, head, vectors, R, labels, split, kinds, embs, evidence_min, backbone_name) -> None:
    """The stage-2 record's train/val accuracy as ``eval`` and ``score`` measure it (dimensions short
    of evidence gated), in place; the fit's own figures (every dimension ungated) kept as
    ``*_ungated``: a trial read train_accuracy 1.0 in the config and 0.75 from eval on the same rows."""
    from livejudge.judge.training.evaluate import evaluate_head

    if s2.get("status") != "fitted":
        return
    for name, part in (("train_accuracy", "train"), ("val_accuracy", "val")):
        rows = np.where((split == part) & (labels >= 0))[0]
        if not len(rows) or name not in s2:
            continue
        doc = evaluate_head(head, {k: v[rows] for k, v in vectors.items()}, R[rows], labels[rows], kinds[rows],
                            [embs[i].evidence for i in rows], evidence_min, backbone_name)
        s2[f"{name}_ungated"] = s2[name]
        s2[name] = round(float(doc["binary"]["accuracy"]), 4)
    s2["accuracy_note"] = ("train_accuracy/val_accuracy as eval and score measure them (dimensions short of evidence "
                           "gated); *_ungated: as the fit saw the rows, every dimension ungated")


def _held_out_test(head, vectors, R, labels, split, kinds, embs, evidence_min, backbone_name, con,
                   digests=None, families=None) -> dict | None:
    """Score the manifest's 'test' rows (never fitted on) with the new head and print the tables;
    None, said in one line, when there are none. Returns the figures for ``training["test"]``.
    ``digests`` (per row, ``row_digests``): a 'test' row whose audio is also a 'train' or 'val' row
    makes the figure in-sample, said here and recorded as ``in_sample_rows`` (a trial's duplicated
    clip was called "never fitted on"). ``families`` (per row, the manifest's ``family``, "" for
    none): 'test' rows of a family that 'train' or 'val' rows also name make a seen-family figure,
    said here and recorded as ``family_rows`` {"named", "seen", "seen_families"} (a trial's test
    rows shared every reader and voice with the fitted rows, and the figure read as held out)."""
    from livejudge.judge.training.evaluate import evaluate_head, few_rows_note, render

    rows = np.where(split == "test")[0]
    if not len(rows):
        con.print("held-out test rows: none ('split': 'test'), so no held-out figure: mark some calls "
                  "\"split\": \"test\" (they are never fitted on), or run livejudge eval on calls this head never saw")
        return None
    doc = evaluate_head(head, {k: v[rows] for k, v in vectors.items()}, R[rows], labels[rows], kinds[rows],
                        [embs[i].evidence for i in rows], evidence_min, backbone_name)
    seen = 0
    if digests is not None:
        tuned = {d for i in np.where(split != "test")[0] for d in digests[i]}
        seen = sum(bool(set(digests[i]) & tuned) for i in rows)
    if seen:
        doc["training_overlap"] = {"in_sample": True, "note": f"in-sample: {seen} of {len(rows)} 'test' rows "
                                   f"{'is also a' if seen == 1 else 'are also'} 'train' or 'val' row{'' if seen == 1 else 's'} of this manifest "
                                   "(the same audio): not a held-out figure"}
    # "held-out test rows … (in-sample)" read as a contradiction (a trial)
    render(doc, con, title="test rows, some also fitted on" if seen else "held-out test rows")
    fam = _family_rows(families, split, rows) if families is not None else None
    if fam and fam["seen"]:
        con.print(f"by family: {fam['seen']} of the {len(rows)} 'test' rows {'is' if fam['seen'] == 1 else 'are'} of "
                  f"families the fitted rows also name ({', '.join(f'{k} {v}' for k, v in fam['seen_families'].items())}):"
                  " a seen-family figure, not a held-out one; put whole families in 'test' for that")
    b = doc["binary"]
    return {"binary_accuracy": b["accuracy"], "roc_auc": b["roc_auc"], "n": b["n"],
            "n_human": b["n_human"], "n_machine": b["n_machine"], "accuracy_ci95": b["accuracy_ci95"],
            "roc_auc_ci95": b["roc_auc_ci95"], "in_sample_rows": seen, "dimensions_pooled": doc["dimensions_pooled"],
            **({"family_rows": fam} if fam else {}),
            **({"few_rows": few_rows_note(b)} if few_rows_note(b) else {})}


def _family_rows(families, split, rows) -> dict | None:
    """Of the 'test' ``rows`` naming a ``family``: how many name one that a 'train' or 'val' row
    names too. None when no 'test' row names one. Pure."""
    fitted = {str(families[i]) for i in np.where(split != "test")[0] if families[i]}
    named = [str(families[i]) for i in rows if families[i]]
    if not named:
        return None
    seen: dict[str, int] = {}
    for f in named:
        if f in fitted:
            seen[f] = seen.get(f, 0) + 1
    return {"named": len(named), "seen": sum(seen.values()), "seen_families": dict(sorted(seen.items()))}


def _families_record(families, labels, split) -> dict:
    """The families and human groups the 'train' and 'val' rows name (``training.families``,
    ``training.human_groups``), which eval's ``family_overlap`` compares a manifest with; {} when
    no such row names one. Pure."""
    fit = np.isin(split, ("train", "val"))
    tts = sorted({str(f) for f, y, k in zip(families, labels, fit) if k and f and y == 0})
    people = sorted({str(f) for f, y, k in zip(families, labels, fit) if k and f and y == 1})
    return {**({"families": tts} if tts else {}), **({"human_groups": people} if people else {})}


def _check_label_classes(labels, split, manifest) -> None:
    """Before embedding, when too few rows are rated to fit the ODL: the classifier is all there is
    to fit, so the labelled 'train' rows must hold both classes (else the head written would be the
    starting head, called trained). Raises CommandError naming the label to add."""
    from livejudge.judge.training.whisper_head import class_gap

    y = labels[(split == "train") & (labels >= 0)]
    gap = class_gap(y)
    if gap is None:
        return
    missing = "human" if (y == 0).any() else "machine"
    raise _cli_error(f"the labelled 'train' rows of {manifest} {gap}, and too few rows have 'ratings' to fit the "
                     f"ODL, so nothing would be fitted: add {missing} rows with \"split\": \"train\"")


def _check_whisper_splits(labels, split) -> None:
    """Before embedding: the whisper label-only fit needs human and machine calls in the 'train'
    rows (fitted on) and in the 'val' rows (calibrate); say what is missing and how to add it."""
    from livejudge.judge.training.whisper_head import class_gap

    for name, role in (("train", "fit"), ("val", "calibration")):
        y = labels[(split == name) & (labels >= 0)]
        n_rows = int((split == name).sum())
        if n_rows and not len(y):  # a trial: 12 unlabelled 'train' rows read "has no rows"
            raise _cli_error(f"the {role} split's {n_rows} '{name}' rows have no 'label': add \"label\": \"human\" or "
                             "\"machine\" to each (the whisper label-only fit fits on labelled 'train' rows and "
                             "calibrates on labelled 'val' rows, and needs both labels in each)")
        gap = class_gap(y)
        if gap is None:
            continue
        missing = "human" if (y == 0).any() else "machine" if (y == 1).any() else "human and machine"
        unlabelled = n_rows - len(y)
        raise _cli_error(f"the {role} split (labelled '{name}' rows) {gap}: add {missing} rows with "
                         f"\"split\": \"{name}\" (the whisper label-only fit fits on 'train' rows and calibrates on "
                         "'val' rows, and needs both labels in each)"
                         + (f"; {unlabelled} '{name}' rows have no 'label'" if unlabelled else ""))


def _train_whisper_labels(args, backbone, embs, vectors, R, labels, split, kinds, digests, con, screen,
                          families) -> int:
    """``--backbone whisper`` without ratings: the label-only fit of
    ``livejudge.judge.training.whisper_head`` (labelled train rows fit, labelled val rows calibrate),
    then the held-out test rows' figures, as the two-stage path prints them."""
    from livejudge.judge.model.head import HeadError
    from livejudge.judge.training.train import rows_record
    from livejudge.judge.training.whisper_head import fit_whisper_head, window_gates

    labelled = labels >= 0
    rows = np.where(np.isin(split, ("train", "val")) & labelled)[0]
    calib = split[rows] == "val"
    try:
        fit = fit_whisper_head(vectors["features"][rows], (labels[rows] == 1).astype(int),
                               window_gates([embs[i] for i in rows]), calib,
                               name=args.name or Path(args.out).name, version=args.head_version,
                               training={"manifest": {"path": str(Path(args.manifest)),
                                                      "sha256": _file_sha256(args.manifest)},
                                         "rows": rows_record(digests, fit=(split == "train") & labelled,
                                                             calibration=(split == "val") & labelled),
                                         "input_health": screen.record(),
                                         **_families_record(families, labels, split)},
                               sources=[f"livejudge train on {args.manifest}"])
    except ValueError as exc:  # _check_whisper_splits said what the splits lack before embedding
        raise _cli_error(f"whisper label-only fit: {exc}") from exc
    test = _held_out_test(fit.head, vectors, R, labels, split, kinds, embs, fit.config.evidence_min,
                          backbone.name, con, digests, families)
    # transcripts: the encoder reads no text, so the head was fitted without any, as the docs say of every
    # head trained without --asr on (eval --asr on had passed such a head silently; a trial)
    cfg = fit.config.with_(training={**fit.config.training, "transcripts": False,
                                     **({"test": test} if test is not None else {})},
                           notes=f"{fit.config.notes}; {_test_pointer(test)}")
    try:
        out = _save(args.out, fit.head, cfg)
    except HeadError as exc:
        raise _cli_error(str(exc)) from exc
    con.print(f"label-only whisper fit: {int((~calib).sum())} calls fitted, {int(calib.sum())} calibrate; "
              f"wrote head {cfg.name} {cfg.version} to {out}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    _require_torch("eval")
    from rich.console import Console

    from livejudge.judge.training.evaluate import evaluate_predictions, predict, render, training_overlap
    from livejudge.judge.model.head import HeadError, head_summary, load_head
    from livejudge.judge.model.judge import JudgeError, load_judge
    from livejudge.judge.training.train import manifest_arrays, row_digests, stack_embeddings
    from livejudge.outputs.guard import OutputPathError, check_output_paths

    con = Console(stderr=args.json_out == "-")
    try:  # before any work: a bad --json path used to fail after it, with a traceback
        check_output_paths({"--json": args.json_out}, [args.manifest], what="manifest")
    except OutputPathError as exc:
        raise _cli_error(str(exc)) from None
    try:
        torch_head, cfg = load_head(args.head)  # evaluate_head runs the torch head
    except HeadError as exc:
        raise _cli_error(str(exc)) from exc
    if (cfg.training or {}).get("transcripts") is False and getattr(args, "asr", "off") == "on":
        raise _cli_error(f"--asr on: head {cfg.name} was fitted on calls embedded without transcripts (its config's "
                         "training.transcripts is false), so it is scored without them: drop --asr on")
    all_entries = _load_entries(args.manifest)
    has_test = any(e.split == "test" for e in all_entries)
    split = ("test" if has_test else "all") if args.split == "auto" else args.split
    entries = all_entries if split == "all" else [e for e in all_entries if e.split == split]
    if not entries:
        raise _cli_error(f"{args.manifest} has no rows with split {split!r}: pick another --split or mark rows "
                         f"\"split\": \"{split}\"")
    if args.split == "auto":
        con.print(f"scoring the {len(entries)} 'test' rows of {len(all_entries)} (default when the manifest has "
                  "test rows; --split all scores every row)" if has_test else
                  f"scoring {'all ' if len(entries) > 1 else ''}{len(entries)} row{'s' if len(entries) != 1 else ''} "
                  "(the manifest has no 'test' rows)")
    screen = _screen(entries, args, con, "scored")
    entries = screen.kept
    kind = kind_of_backbone(cfg.backbone.name)
    try:
        judge = load_judge(kind, head=args.head, device=args.device,
                           model=args.qwen_model if kind == "qwen-omni" else None)
    except (HeadError, JudgeError) as exc:
        raise _cli_error(str(exc)) from exc
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise _cli_error(f"cannot load the {kind} backbone: {exc}") from exc
    backbone, head = judge.backbone, torch_head
    if hasattr(backbone, "settle_s"):
        backbone.settle_s = 0.0  # whole recorded calls: every turn is final
    embs = _embed(entries, backbone, args)
    vectors = stack_embeddings(embs)
    R, labels, splits, kinds = manifest_arrays(entries, cfg.dimensions)
    pred = predict(head, vectors, [e.evidence for e in embs], judge.evidence_min, backbone.name)
    doc = evaluate_predictions(pred, R, labels, kinds, head.dimensions)
    # which calls it got wrong: per row (a trial ran 20 one-row manifests to find its 4 misses)
    doc["rows"] = [{"line": e.line, "id": e.id, "label": {1: "human", 0: "machine"}.get(int(y)),
                    "p_human": round(float(ph), 4),
                    "correct": None if y < 0 else bool((ph >= 0.5) == (y == 1))}
                   for e, y, ph in zip(entries, labels.tolist(), pred["p_human"].tolist())]
    hint = ("for a held-out figure run --split test" if has_test and split != "test" else
            "for a held-out figure score calls the head was not fitted on (\"split\": \"test\" rows are kept out)")
    overlap = training_overlap(cfg.training, [row_digests(e) for e in entries], splits.tolist(),
                               _file_sha256(args.manifest), hint, families=[e.family for e in entries],
                               labels=labels.tolist())
    # which rows the head was fitted or tuned on, per row (a trial could not tell a 16-and-4 mix apart)
    for r, g in zip(doc["rows"], overlap.pop("rows_seen", [None] * len(doc["rows"]))):
        r["seen"] = g
    doc = {"head": {"path": str(args.head), "name": cfg.name, "version": cfg.version,
                    "provenance": cfg.provenance, "backbone": cfg.backbone.name, "readout": cfg.readout},
           "manifest": str(args.manifest), "split": split, "split_asked": args.split,
           "training_overlap": overlap, "input_health": screen.record(), **doc}
    con.print(f"head: {head_summary(cfg)}" + ("  [yellow](prior: hand-set, not trained)[/yellow]"
                                               if cfg.provenance == "prior" else ""))
    render(doc, con)
    if args.json_out:
        text = json.dumps(doc, indent=2, ensure_ascii=False)
        if args.json_out == "-":
            sys.stdout.write(text + "\n")
        else:
            from livejudge.outputs.guard import write_text_atomic

            try:
                write_text_atomic(args.json_out, text + "\n")
            except OSError as exc:  # checked before the work; lost since (a full disk, a folder removed)
                raise CommandError(f"--json {args.json_out}: cannot write ({exc.strerror or exc}); the metrics "
                                   "are printed above: give another path", 1) from exc
            con.print(f"wrote {args.json_out}")
    return 0


def run_in_process(*argv) -> int | tuple[int, str]:
    """Run ``livejudge train``/``eval`` in-process (the tests of these commands do): parse ``argv``
    with the subcommands ``register`` adds and run it. Returns the exit code, or (code, message)
    for a ``CommandError`` (a one-line user-facing error)."""
    parser = argparse.ArgumentParser(prog="livejudge")
    register(parser.add_subparsers())
    args = parser.parse_args([str(a) for a in argv])
    try:
        return args.func(args)
    except CommandError as exc:
        return exc.code, str(exc)
