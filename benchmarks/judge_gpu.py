"""GPU benchmark of the Qwen2.5-Omni judge backbone: ms per window and peak GPU memory.

Builds the thinker with the real Qwen2.5-Omni-7B architecture (``Qwen2_5OmniThinkerConfig()``
defaults, vision hidden_size 1280 as in the released checkpoint; docs/qwen-omni-offline.md §3) with random
weights in bf16 directly on the GPU — the time of a forward does not depend on the weight
values — and runs ``QwenOmniBackbone.embed`` (feature extraction, tokenising, one forward,
readouts) on windows of noise at 10/30/60 s, batch 1/4/16.

Run (one command, needs one CUDA GPU with ≥ 24 GB, ``pip install 'livejudge[gpu]'``)::

    python benchmarks/judge_gpu.py                 # table
    python benchmarks/judge_gpu.py --json out.json # table + JSON
    python benchmarks/judge_gpu.py --arch 3b       # the lighter Qwen2.5-Omni-3B shapes

Smoke test without a GPU (tiny random thinker, CPU)::

    python benchmarks/judge_gpu.py --tiny --device cpu

Reported per (window, batch): ms per window p50/p95 over ``--iters`` timed calls
(call time / batch; warm-up calls excluded), of which the CPU-side input preparation
(log-mel + tokenising) p50, the token sequence length, and the peak GPU memory allocated
during those calls (weights included). Text tokens come from a word-level stand-in tokenizer
with the real special-token ids (``livejudge.testing.qwen.build_qwen_id_tokenizer``), so the
prompt's length is an approximation of the released BPE tokenizer's (±5 tokens).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WINDOWS_S = (10.0, 30.0, 60.0)
BATCHES = (1, 4, 16)


ARCH_3B_TEXT = dict(vocab_size=151936, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                   num_attention_heads=16, num_key_value_heads=2)
"""Qwen2.5-Omni-3B thinker text shapes (head_dim 128, so the 7B mrope_section fits), as in its
released config.json; read from a third-party copy of that config, not checked against the hub
here. The audio tower is the 7B's with output_dim = 2048."""


def thinker_config(arch: str):
    """Random-weight thinker config: "7b" = ``Qwen2_5OmniThinkerConfig()`` defaults with the
    released vision hidden_size 1280 (docs/qwen-omni-offline.md §3); "3b" = ``ARCH_3B_TEXT``."""
    from transformers import Qwen2_5OmniThinkerConfig

    if arch == "7b":
        return Qwen2_5OmniThinkerConfig(vision_config={"hidden_size": 1280}, vision_start_token_id=151652)
    if arch == "3b":
        h = ARCH_3B_TEXT["hidden_size"]
        return Qwen2_5OmniThinkerConfig(
            text_config=dict(ARCH_3B_TEXT, rope_parameters=dict(rope_type="default", rope_theta=1e6,
                                                                 mrope_section=[16, 24, 24])),
            audio_config={"output_dim": h}, vision_config={"hidden_size": 1280, "out_hidden_size": h},
            vision_start_token_id=151652)
    raise ValueError(f"--arch must be 7b or 3b, got {arch!r}")


def build_backbone(tiny: bool, device: str, attn: str | None, arch: str = "7b"):
    import torch
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    from livejudge.judge.features.backbones.qwen_omni import (UNDERSTANDING_PROMPT, QwenOmniBackbone,
                                                     _default_attn, _resolve_device)
    from livejudge.testing.qwen import (build_qwen_id_tokenizer, build_tiny_tokenizer,
                                        tiny_feature_extractor, tiny_thinker_config)

    dev = _resolve_device(device)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    attn = attn or _default_attn(dev)
    if tiny:
        tokenizer = build_tiny_tokenizer()
        config = tiny_thinker_config(tokenizer)
        name = "tiny-random"
    else:
        tokenizer = build_qwen_id_tokenizer(UNDERSTANDING_PROMPT)
        config = thinker_config(arch)
        name = f"qwen2.5-omni-{arch}-architecture (random {str(dtype).replace('torch.', '')} weights)"
    torch.manual_seed(0)
    t0 = time.perf_counter()
    with torch.device(dev):  # allocate and initialise directly on the device, in dtype
        thinker = Qwen2_5OmniThinkerForConditionalGeneration._from_config(
            config, dtype=dtype, attn_implementation=attn)
    n_params = sum(p.numel() for p in thinker.parameters())
    # The benchmark measures what the backbone keeps: from_parts deletes the vision tower and lm_head.
    backbone = QwenOmniBackbone.from_parts(thinker, tokenizer, tiny_feature_extractor(), name=name,
                                           dtype=dtype)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    build_s = time.perf_counter() - t0
    kept = sum(p.numel() for p in backbone._model.parameters())
    return backbone, dict(name=name, attn=attn, dtype=str(dtype).replace("torch.", ""),
                          params_built=n_params, params_kept=kept, build_s=round(build_s, 2))


def noise_windows(n: int, window_s: float, seed: int):
    from livejudge.timing.window import WindowSnapshot

    rng = np.random.default_rng(seed)
    k = int(round(window_s * 16000))
    return [WindowSnapshot(0.0, window_s,
                           (0.05 * rng.standard_normal(k)).astype(np.float32),
                           (0.05 * rng.standard_normal(k)).astype(np.float32)) for _ in range(n)]


def bench_one(backbone, window_s: float, batch: int, iters: int, warmup: int) -> dict:
    import torch

    cuda = backbone.device.type == "cuda"
    windows = noise_windows(batch, window_s, seed=int(window_s) * 100 + batch)
    backbone.max_batch = max(backbone.max_batch, batch)
    for _ in range(warmup):
        backbone.embed(windows)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    per_window_ms, prep_ms = [], []
    for _ in range(iters):
        t0 = time.perf_counter()
        inputs = backbone.prepare(windows)
        prep_ms.append((time.perf_counter() - t0) * 1000.0)
        t0 = time.perf_counter()
        embs = backbone.embed(windows)  # includes its own prepare(): the full per-call cost
        if cuda:
            torch.cuda.synchronize()
        per_window_ms.append((time.perf_counter() - t0) * 1000.0 / batch)
    finite = len(embs) == batch and all(
        np.isfinite(v).all() for e in embs for v in e.vectors.values())
    row = dict(window_s=window_s, batch=batch, iters=iters,
               ms_per_window_p50=round(float(np.percentile(per_window_ms, 50)), 2),
               ms_per_window_p95=round(float(np.percentile(per_window_ms, 95)), 2),
               prepare_ms_per_window_p50=round(float(np.percentile(prep_ms, 50)) / batch, 2),
               seq_len=int(inputs["attention_mask"].shape[1]),
               realtime_factor=round(float(np.percentile(per_window_ms, 50)) / 1000.0 / window_s, 5),
               finite_embeddings=bool(finite))
    if cuda:
        row["peak_gpu_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    ap.add_argument("--tiny", action="store_true", help="tiny random thinker (smoke test, CPU ok)")
    ap.add_argument("--arch", default="7b", choices=("7b", "3b"), help="thinker architecture (random weights)")
    ap.add_argument("--attn", default=None, help="sdpa or flash_attention_2 (default: flash if installed)")
    ap.add_argument("--windows", default=",".join(f"{w:g}" for w in WINDOWS_S), help="window lengths, s")
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)), help="batch sizes")
    ap.add_argument("--iters", type=int, default=10, help="timed calls per cell")
    ap.add_argument("--warmup", type=int, default=2, help="untimed calls per cell")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    try:
        import torch
        import transformers
    except ImportError:
        print("benchmarks/judge_gpu.py needs torch and transformers: pip install 'livejudge[gpu]'",
              file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device here: run on a GPU machine, or smoke-test with --tiny --device cpu",
              file=sys.stderr)
        return 2

    backbone, meta = build_backbone(args.tiny, args.device, args.attn, args.arch)
    env = dict(python=platform.python_version(), torch=torch.__version__,
               transformers=transformers.__version__, device=str(backbone.device),
               gpu=torch.cuda.get_device_name(backbone.device) if backbone.device.type == "cuda" else None,
               cpu_threads=torch.get_num_threads())
    if backbone.device.type == "cuda":
        meta["weights_gpu_mem_gib"] = round(torch.cuda.memory_allocated() / 2**30, 2)
    print(f"backbone: {meta['name']}  attn={meta['attn']}  dtype={meta['dtype']}  "
          f"params built {meta['params_built']:,}, kept {meta['params_kept']:,} (no vision tower, no lm_head)  "
          f"build {meta['build_s']} s  device={env['device']} {env['gpu'] or ''}")

    rows = []
    hdr = (f"{'window_s':>8} {'batch':>5} {'seq_len':>7} {'ms/win p50':>10} {'ms/win p95':>10} "
           f"{'prep ms/win':>11} {'x realtime':>10} {'peak GiB':>8}")
    print(hdr)
    print("-" * len(hdr))
    for w in (float(x) for x in args.windows.split(",")):
        for b in (int(x) for x in args.batches.split(",")):
            try:
                row = bench_one(backbone, w, b, args.iters, args.warmup)
            except torch.OutOfMemoryError:
                row = dict(window_s=w, batch=b, error="out of GPU memory")
                torch.cuda.empty_cache()
                print(f"{w:>8g} {b:>5d}  out of GPU memory")
                rows.append(row)
                continue
            rows.append(row)
            print(f"{w:>8g} {b:>5d} {row['seq_len']:>7d} {row['ms_per_window_p50']:>10.1f} "
                  f"{row['ms_per_window_p95']:>10.1f} {row['prepare_ms_per_window_p50']:>11.1f} "
                  f"{row['realtime_factor']:>10.4f} {row.get('peak_gpu_mem_gib', float('nan')):>8.2f}"
                  + ("" if row["finite_embeddings"] else "  NON-FINITE embeddings"))
    print("x realtime = p50 seconds per window / window seconds (below 1: keeps up with one session "
          "judged once per window length).")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta=meta, env=env, results=rows), f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
