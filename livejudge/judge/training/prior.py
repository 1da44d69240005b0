"""The heads of the acoustic backbone (acoustic-v1): a DOCUMENTED PRIOR, and its fitted variant.

``python -m livejudge.judge.training.prior [OUT_DIR]`` regenerates ``livejudge/judge/heads/acoustic-prior``
deterministically (no randomness, no data): same code → same bytes.

How the prior is built (every number is in ``livejudge.judge.features.acoustic.FEATURES`` or below, with
its source; "heuristic" marks a value set by judgement, not taken from a publication):

1. Input normalisation (the head's readout statistics): each feature x_f is standardised as
   (x_f − centre_f) / spread_f. A centre is the boundary between the human and the machine
   reference of that feature (their midpoint) where both are known, e.g. response latency:
   human mean 742 ms vs S2S 959–2724 ms (SPEARBench Table III) → centre 0.85 s; F0 variability:
   machines ≈ 0.51 × human (SPEARBench Table III, pitch variability) → centre midway.
   The backbone clips each feature to centre ± 3 spreads and imputes missing ones at the centre.
2. ODL projection z = W h + b (the Turing-test paper, §6.2.1): sparse. Row k (dimension k) has non-zero
   weights only on the features that are evidence for dimension k, with sign human_sign_f
   (larger value more human-like → +) and relative weight ``FEATURE_WEIGHTS`` (normalised to
   sum 1 per dimension), so z_k is a signed weighted mean of standardised features: z_k > 0
   leans human-like (score > 3), z_k < 0 machine-like. b = 0. Rows of dimensions without
   signal are zero (and the judge gates them anyway). Cut-point scales s_k = 2.1 (Table 19).
3. z statistics (App. E.7): z_mean = 0 (centres are class boundaries), z_std = 1.
4. Classifier: W_human,k = +a_k / 2, W_machine,k = −a_k / 2 (so W_1 + W_2 = 0, the symmetry
   the paper's regulariser asks for), bias 0: log-odds(human) = Σ_k a_k ẑ_k. ``DIMENSION_WEIGHTS``
   a_k give human-like z a positive weight toward "human"; larger for dimensions with a
   published human-vs-machine difference (timing, pitch variability), smaller for heuristic
   detectors.
5. Gating: ``evidence_min`` = the backbone's ``EVIDENCE_MIN`` (seconds of speech; words or
   turns for the text dimensions).
6. Text features (acoustic-v1; ``livejudge.judge.features.text.TEXT_FEATURES``): their weights
   in ``FEATURE_WEIGHTS`` and the text dimensions' a_k are a HEURISTIC PRIOR (word lists and
   centres set by judgement; the Turing-test paper's App. D.1 says which direction is human-like). The fitted
   variant does NOT fit them: the shipped clips' text is tiny and fixed, so their ODL rows,
   z statistics and classifier weights stay the prior's (``TEXT_BEARING_DIMENSIONS``).
   code_switching has weight 0 in both heads: language labels cannot tell a motivated switch
   from an odd one; it shows evidence but stays neutral.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from livejudge.judge.features.backbones.acoustic import EVIDENCE_MIN, EVIDENCE_SOURCE, TEXT_DIMENSIONS, VECTOR_SPECS, AcousticBackbone
from livejudge.judge.model.dimensions import DIMENSION_IDS
from livejudge.judge.features.text import TEXT_FEATURE_NAMES
from livejudge.judge.model.head import HeadConfig, new_config, save_head
from livejudge.judge.model.odl import HUMAN, MACHINE, SCALE_INIT, JudgeHead

HEAD_NAME = "acoustic-prior"
HEAD_VERSION = "0.2.0"
DEFAULT_DIR = Path(__file__).resolve().parents[1] / "heads" / HEAD_NAME

FEATURE_WEIGHTS: dict[str, float] = {
    # intonation: pitch variability has the published human-vs-S2S gap (SPEARBench Table III)
    "f0_sd_st": 1.0,
    "f0_range_st": 1.0,
    "final_movement_sd_st": 0.5,  # heuristic
    "final_rise_ratio": 0.3,  # heuristic
    # stress
    "nucleus_f0_sd_st": 1.0,  # F0 prominence; same SPEARBench ratio
    "nucleus_intensity_sd_db": 0.5,  # heuristic
    "intensity_range_db": 0.2,  # heuristic, weak
    # rhythm: timing has published figures; prosodic rhythm heuristics weigh less
    "response_latency_mean_s": 1.0,  # SPEARBench Table III, Levinson & Torreira 2015
    "response_latency_sd_s": 0.3,  # heuristic
    "barge_in_yield_ratio": 0.3,  # heuristic
    "npvi_nucleus": 0.8,  # Grabe & Low 2002 (index), heuristic centre
    "speech_rate_cv": 0.6,  # heuristic
    "pause_log_sd": 0.4,  # Campione & Véronis 2002 (log-normal pauses), heuristic centre
    "hesitation_rate_per_min": 0.2,  # heuristic, weak
    # micro-physiological noise
    "inter_word_floor_db": 0.5,  # heuristic
    "breath_rate_per_min": 0.5,  # heuristic detector
    # pronunciation instability
    "jitter_local_pct": 1.0,  # MDVP/Praat definition, heuristic centre
    # fillers, vocalisations, emotion
    "filled_pause_rate_per_min": 1.0,
    "laughter_rate_per_min": 1.0,
    "arousal_sd": 1.0,
    # text features (HEURISTIC PRIOR: hand-made English word lists, heuristic centres; sign =
    # human_sign of the feature, the Turing-test paper's App. D.1 says which end is human-like)
    "filler_rate_per_100w": 1.0,  # alongside the acoustic filled-pause rate (same weight)
    "hedge_rate_per_100w": 1.0,
    "self_correction_rate_per_100w": 0.5,
    "sycophancy_per_turn": 1.0,  # sign −: more agreement/thanks/apology per turn is machine-like
    "list_markers_per_turn": 0.6,  # sign −
    "formal_rate_per_100w": 0.6,  # sign −
    "mean_sentence_words": 0.3,  # sign −; depends on the recogniser's punctuation (weak)
    "sentiment_compound_sd": 0.5,
    "sentiment_mismatch_ratio": 0.5,  # sign −
}
"""Relative weight of each feature within its dimension (normalised per dimension); its sign is
the feature's ``human_sign``. Features not listed (F0 level, speech rate, mean pause, shimmer,
HNR, mean VADER valence, language-switch rate) are descriptive: weight 0."""

DIMENSION_WEIGHTS: dict[str, float] = {
    "rhythm": 1.0,  # response latency: SPEARBench Table III (742 ms vs 959–2724 ms)
    "intonation": 1.0,  # pitch variability: SPEARBench Table III (0.321 vs 0.118–0.299)
    "stress": 0.6,  # F0 prominence shares the pitch evidence; intensity parts heuristic
    "pronunciation_instability": 0.6,  # jitter: heuristic centre
    "acoustic_emotion": 0.5,  # SPEARBench arousal correlation gap; proxy is heuristic
    "micro_physiological_noise": 0.4,  # heuristic detectors
    "use_of_fillers": 0.4,  # heuristic acoustic detector + heuristic text filler rate (was 0.2 acoustic only)
    "auxiliary_vocalizations": 0.2,  # heuristic detector
    # text dimensions: HEURISTIC PRIOR (word lists), not fitted in either head
    "linguistic_imprecision": 0.3,
    "sycophant_behavior": 0.4,
    "written_style_expression": 0.4,
    "textual_sentiment": 0.2,
    "code_switching": 0.0,  # labels cannot tell motivated from odd switching: neutral, evidence shown
}
"""a_k: classifier weight of each dimension's standardised z toward "human" (others 0)."""

SOURCES: tuple[str, ...] = (
    "seed 000: Human or Machine? A Preliminary Turing Test for Speech-to-Speech Interaction (arXiv 2602.24080), "
    "§6.2.1 ODL and classifier, App. D.1 dimensions, Table 19 scale 2.1",
    "SPEARBench Table III (seed 002): human response latency 742 ms vs S2S 959–2724 ms; pitch variability "
    "(std of normalised f0) human 0.321 vs S2S 0.118–0.299; arousal correlation human 0.53 vs −0.02–0.25",
    "Levinson & Torreira 2015, Front. Psychol. 6:731: typical gap between turns about 200 ms",
    "Stivers et al. 2009, PNAS 106:10587: gaps between turns across 10 languages",
    "Boersma 1993, IFA Proceedings 17: normalised autocorrelation F0 and HNR",
    "MDVP/Praat local jitter and shimmer definitions (Praat manual: 1.04 % / 3.81 % pathology thresholds)",
    "de Jong & Wempe 2009, Behav. Res. Methods 41:385: syllable nuclei from intensity peaks",
    "Grabe & Low 2002, Papers in Laboratory Phonology 7:515: nPVI",
    "Campione & Véronis 2002, Speech Prosody: silent pause durations",
    "Shriberg 2001, J. Int. Phonetic Assoc. 31:153: filled pauses",
    "Bachorowski, Smoski & Owren 2001, JASA 110:1581: laughter acoustics",
    "Eyben et al. 2016, IEEE Trans. Affective Computing 7:190: eGeMAPS (alpha ratio)",
    "measured: medians over the shipped Austen (LibriVox) and CMU clips of livejudge/data/audio/human "
    "(13 clips of read speech) where labelled in livejudge.judge.features.acoustic.FEATURES",
    "seed 000 App. D.1 (Table 12): transcript dimensions — humans hedge ('probably') and correct themselves; "
    "machines agree, thank and apologise too much, speak in structured lists and formal register, and "
    "their emotion in the words feels off",
    "Clark & Fox Tree 2002, Cognition 84:73: 'uh' and 'um' (filled-pause spellings)",
    "Fox Tree 1995, J. Memory & Language 34:709: about 6 disfluencies per 100 words in conversation",
    "Fox Tree & Schrock 2002, J. Pragmatics 34:727: 'you know' and 'I mean'",
    "Hutto & Gilbert 2014, ICWSM: VADER sentiment (compound valence, ±0.05 thresholds)",
    "Lui & Baldwin 2012, ACL demos: langid.py (py3langid) language identification",
    "seed 001 (Audio MultiChallenge): Voice Editing axis — self-corrections",
    "HEURISTIC: every text word list (fillers, hedges, repair markers, sycophancy lexicon, list "
    "markers, formal register), every text feature centre/spread, text weights in FEATURE_WEIGHTS "
    "and the text dimensions' a_k (livejudge.judge.training.prior, livejudge.judge.features.text)",
    "HEURISTIC: text evidence minimums (use_of_fillers/linguistic_imprecision 50 words, "
    "written_style_expression 40 words, sycophant_behavior/textual_sentiment/code_switching 2 turns)",
)

TEXT_BEARING_DIMENSIONS: tuple[str, ...] = tuple(
    d for d in DIMENSION_IDS
    if any(f.dimension == d and f.name in TEXT_FEATURE_NAMES and FEATURE_WEIGHTS.get(f.name, 0.0) > 0
           for f in VECTOR_SPECS) or d in TEXT_DIMENSIONS)
"""Dimensions whose ODL row reads a text feature (use_of_fillers too: it mixes the acoustic and
the text filler rate) or whose evidence is text: their weights are the heuristic prior in both
heads (the fitted head does not fit them; see ``fitted_head``)."""


def prior_head() -> tuple[JudgeHead, HeadConfig]:
    """Build the documented prior head (see module docstring). Deterministic.

    Returns:
        (JudgeHead in eval mode, HeadConfig with provenance "prior").
    """
    bb = AcousticBackbone()
    names = [f.name for f in VECTOR_SPECS]
    assert tuple(names) == tuple(bb.feature_names)
    head = JudgeHead(bb.embedding_dim, readout="features", dimensions=DIMENSION_IDS)
    head.readout.set_normalisation("features", [f.centre for f in VECTOR_SPECS], [f.spread for f in VECTOR_SPECS])
    W = torch.zeros(len(DIMENSION_IDS), len(names))
    for k, dim in enumerate(DIMENSION_IDS):
        feats = [(i, f) for i, f in enumerate(VECTOR_SPECS) if f.dimension == dim and f.human_sign != 0
                 and FEATURE_WEIGHTS.get(f.name, 0.0) > 0]
        total = sum(FEATURE_WEIGHTS[f.name] for _, f in feats)
        for i, f in feats:
            W[k, i] = f.human_sign * FEATURE_WEIGHTS[f.name] / total
    a = torch.tensor([DIMENSION_WEIGHTS.get(d, 0.0) for d in DIMENSION_IDS])
    with torch.no_grad():
        head.odl.proj.weight.copy_(W)
        head.odl.proj.bias.zero_()
        head.odl.log_scale.fill_(float(torch.log(torch.tensor(SCALE_INIT))))
        head.classifier.weight.zero_()
        head.classifier.weight[HUMAN] = a / 2
        head.classifier.weight[MACHINE] = -a / 2
        head.classifier.bias.zero_()
    head.set_z_normalisation(torch.zeros(len(DIMENSION_IDS)), torch.ones(len(DIMENSION_IDS)))
    head.eval()
    signal_dims = [d for d, (q, _, _) in EVIDENCE_SOURCE.items() if q is not None or d in TEXT_DIMENSIONS]
    table = {f.name: {"dimension": f.dimension or None, "centre": f.centre, "spread": f.spread,
                      "unit": f.unit, "human_sign": f.human_sign,
                      "weight": FEATURE_WEIGHTS.get(f.name, 0.0) if f.human_sign else 0.0,
                      "kind": "text (heuristic prior)" if f.name in TEXT_FEATURE_NAMES else "acoustic/timing",
                      "source": f.source} for f in VECTOR_SPECS}
    cfg = new_config(
        bb, name=HEAD_NAME, version=HEAD_VERSION, provenance="prior", readout="features",
        feature_names=names, evidence_min={d: EVIDENCE_MIN[d] for d in signal_dims if d in EVIDENCE_MIN},
        training={
            "method": "documented prior: no fitting, no data; built by livejudge.judge.training.prior",
            "features": table,
            "dimension_weights": {d: DIMENSION_WEIGHTS.get(d, 0.0) for d in DIMENSION_IDS},
            "gated_without_signal": {d: r for d, (q, _, r) in EVIDENCE_SOURCE.items()
                                     if q is None and d not in TEXT_DIMENSIONS},
            "gated_without_transcripts": {d: EVIDENCE_SOURCE[d][2] for d in TEXT_DIMENSIONS},
            "text_prior": ("HEURISTIC PRIOR: text-feature weights and the text dimensions' a_k set by judgement "
                           "from seed 000 App. D.1 (direction) and hand-made English word lists; code_switching "
                           "a_k = 0 (language labels cannot tell motivated from odd switching: evidence shown, "
                           "score neutral)"),
        },
        sources=SOURCES,
        notes=("PRIOR, not trained: feature centres are human/machine boundaries from published figures "
               "where available, else heuristics or medians of the shipped human clips (labelled per "
               "feature in training.features); text features (transcripts, livejudge[asr]) are a "
               "heuristic prior; z_k = signed weighted mean of standardised features; "
               "classifier log-odds(human) = sum_k a_k z_k. Regenerate: python -m livejudge.judge.training.prior"),
    )
    return head, cfg


def write_prior(out_dir: str | Path = DEFAULT_DIR) -> Path:
    """Build the prior head and save it with ``save_head`` to ``out_dir``, its weights with the
    umask's permissions (``head_files.share_head_files``: safetensors writes 0600); returns the path.
    Raises HeadError, OSError."""
    from livejudge.judge.training.head_files import share_head_files

    head, cfg = prior_head()
    path = save_head(out_dir, head, cfg)
    share_head_files(path)
    return path


# --------------------------------------------------------------------------- fitted variant (issue 6, item 4)

SEEN_HUMAN_CLIPS = ("librivox_austen_0870", "librivox_austen_0880", "librivox_austen_0890", "librivox_austen_0920",
                    "librivox_austen_0930", "cmu_cards_005", "cmu_numbers", "cmu_goforward", "cmu_something",
                    "cmu_cards_002")
"""Human agent turns the fitted variant may see (the prior's measured references came from them too)."""
SEEN_MACHINE_CLIPS = tuple(f"espeak_reply_0{i}" for i in range(1, 6)) + tuple(
    f"espeak_austen_{k}" for k in ("0870", "0880", "0890", "0920", "0930"))
"""Machine agent turns the fitted variant may see: the shipped espeak-ng clips only."""
_USER_CLIPS = ("cmu_cards_001", "cmu_cards_003", "cmu_cards_004", "cmu_cards_005", "cmu_numbers", "cmu_goforward")


ACOUSTIC_FITTED_VALIDITY = {
    "summary": ("held-out people vs espeak-ng/flite/festival AUC 1.00 (benchmarks/judge_validity.py); "
                "NOT valid on neural TTS: Piper AUC 0.24, Kokoro 0.31 (benchmarks/judge_lofo.py)"),
    "judge_validity": "python benchmarks/judge_validity.py: 16 human-agent and 28 machine-agent dialogues, "
                      "ROC-AUC 1.000, accuracy 0.955 at 0.5",
    "corpus_lofo_auc": {"espeak-ng": 0.538, "festival": 0.732, "flite": 0.645, "gnuspeech": 0.219,
                        "piper": 0.235, "kokoro": 0.311},
    "corpus_command": ("python benchmarks/judge_lofo.py CORPUS/manifest.jsonl --exclude-family copysyn-griffinlim "
                       "--exclude-family copysyn-lpc --exclude-family copysyn-world (column acoustic-fitted AUC; "
                       "the corpus's espeak-ng voices include the voices of the shipped espeak clips this head was "
                       "fitted on)"),
}
"""What the fitted acoustic head's P(human) was validated against (measured, not fitted)."""


def training_dialogues(n_per_class: int = 40, seed: int = 0):
    """Labelled calls built from the SEEN clips only: (list of WindowSnapshot, labels 1/0).

    Each call: 3 user→agent exchanges; agent turns drawn from ``SEEN_HUMAN_CLIPS`` or
    ``SEEN_MACHINE_CLIPS``; the same gap (U(0.2, 1.2) s), noise floor (−70 … −50 dBFS) and
    level (−30 … −18 dBFS) distributions for both classes, so timing and channel carry no label.
    """
    import numpy as np

    from livejudge.session import snapshot_of_call
    from livejudge.testing.dialogues import DialogueBuilder, load_clip

    rng = np.random.default_rng(seed)
    windows, labels = [], []
    for label, clips in ((1, SEEN_HUMAN_CLIPS), (0, SEEN_MACHINE_CLIPS)):
        for _ in range(n_per_class):
            b = DialogueBuilder(noise_dbfs=float(rng.uniform(-70, -50)), seed=int(rng.integers(1 << 30)))
            level = float(rng.uniform(-30, -18))
            for i, c in enumerate(rng.choice(clips, size=3, replace=False)):
                b.user(str(rng.choice(_USER_CLIPS)), gap_s=float(rng.uniform(0.3, 0.9)) if i else None)
                x = load_clip(str(c)).astype(np.float64)
                x = x * (10 ** (level / 20) / (np.sqrt(np.mean(x ** 2)) + 1e-9))
                b.agent(x.clip(-1, 1).astype(np.float32), gap_s=float(rng.uniform(0.2, 1.2)))
            windows.append(snapshot_of_call(b.build().call))
            labels.append(label)
    return windows, np.array(labels)


def fitted_head(n_per_class: int = 40, seed: int = 0) -> tuple[JudgeHead, HeadConfig]:
    """The prior's readout + ODL with the classifier (and z statistics) FITTED on labels.

    Uses ``livejudge.judge.training.train.train_head`` with labels only (no ratings exist): stage 1 is
    skipped, so the ODL projection stays the prior's; stage 2 fits W_F and b on calls from
    ``training_dialogues`` (seen clips; 20 % of them for early stopping). Afterwards, weights
    that were never fitted (z constant) and weights whose sign would count a human-like score
    as machine evidence are set to 0 (both listed in the config's ``training``).

    The text-bearing dimensions (``TEXT_BEARING_DIMENSIONS``) are NOT fitted: the training calls
    have no transcripts (the shipped clips' text is tiny and fixed), so their ODL rows are held
    at zero during the fit (ẑ ≡ 0, no influence on W_F, b) and afterwards their ODL rows,
    z statistics (0, 1) and classifier weights are set back to the documented prior's.
    """
    import copy

    import numpy as np

    from livejudge.judge.training.train import TrainConfig, train_head

    prior, pcfg = prior_head()
    text_idx = [DIMENSION_IDS.index(d) for d in TEXT_BEARING_DIMENSIONS]
    init = copy.deepcopy(prior)
    with torch.no_grad():
        init.odl.proj.weight[text_idx] = 0.0  # hold the text-bearing dimensions out of the fit
    windows, y = training_dialogues(n_per_class, seed)
    bb = AcousticBackbone()
    X = np.stack([e.vectors["features"] for e in bb.embed(windows)])
    split = np.where(np.random.default_rng(seed + 7).random(len(y)) < 0.2, "val", "train")
    res = train_head({"features": X}, None, y, split, init_head=init,
                     config=TrainConfig(seed=seed, progress=False, linear_epochs=3000, patience=200))
    head = res.head
    # Dimensions without signal have z ≡ 0 (zero ODL row), so ẑ ≡ 0 and their classifier weights
    # never act; they stay at their random initialisation in train_head. Zero them so the
    # checkpoint shows no weight where there is no signal (no output changes).
    # The same holds for a dimension whose z did not vary over the training calls (e.g. no
    # laughter-like bout in any of them): its weight was never fitted.
    with torch.no_grad():
        z_train = head.latent({"features": torch.as_tensor(X, dtype=torch.float32)})
        dead = (head.odl.proj.weight.abs().sum(dim=1) == 0) | (z_train.std(dim=0) < 1e-6)
        head.classifier.weight[:, dead] = 0.0
    training = dict(res.summary)
    training["method"] = ("classifier fitted with livejudge.judge.training.train.train_head on labels only (no ratings "
                          "exist): the ODL projection, input normalisation and cut-points stay the documented "
                          "prior's; z statistics and the classifier W_F, b are fitted")
    training["data"] = (f"{len(y)} calls built by livejudge.judge.training.prior.training_dialogues(seed={seed}): agent turns "
                        f"from the shipped clips {', '.join(SEEN_HUMAN_CLIPS)} (human) and {', '.join(SEEN_MACHINE_CLIPS)} "
                        "(machine, espeak-ng); same gap/noise/level distributions for both classes")
    training["prior"] = pcfg.training
    training["unfitted_weights_zeroed"] = [d for d, z in zip(DIMENSION_IDS, dead.tolist()) if z]
    # Sign constraint (interpretability, the Turing-test paper's App. E.7 reads c_k as evidence): a human-like
    # score must not count as machine evidence. A fitted weight whose sign says otherwise is a
    # correlate of the few seen clips (e.g. their recording noise), not of the dimension: zero it.
    with torch.no_grad():
        w_m = head.machine_weight()
        wrong = w_m > 0
        head.classifier.weight[:, wrong] = 0.0
    training["sign_constrained_zeroed"] = {d: round(float(w), 4) for d, w, b in
                                           zip(DIMENSION_IDS, w_m.tolist(), wrong.tolist()) if b}
    # Text-bearing dimensions: back to the documented prior (ODL row, z statistics, classifier).
    with torch.no_grad():
        head.odl.proj.weight[text_idx] = prior.odl.proj.weight[text_idx]
        head.odl.proj.bias[text_idx] = prior.odl.proj.bias[text_idx]
        head.odl.log_scale[text_idx] = prior.odl.log_scale[text_idx]
        zm, zs = head.z_mean.clone(), head.z_std.clone()
        zm[text_idx], zs[text_idx] = prior.z_mean[text_idx], prior.z_std[text_idx]
        head.set_z_normalisation(zm, zs)
        head.classifier.weight[:, text_idx] = prior.classifier.weight[:, text_idx]
    training["unfitted_weights_zeroed"] = [d for d in training["unfitted_weights_zeroed"]
                                           if d not in TEXT_BEARING_DIMENSIONS]
    training["text_dimensions_kept_at_prior"] = {
        "dimensions": list(TEXT_BEARING_DIMENSIONS),
        "why": ("NOT fitted: the training calls have no transcripts and the shipped clips' text is tiny and "
                "fixed, so nothing in them can fit a text weight; these dimensions' ODL rows were held at 0 "
                "during the fit (no influence on W_F, b) and then set back to the documented HEURISTIC prior: "
                "ODL row, z statistics (0, 1) and classifier weights a_k/2 (use_of_fillers included: its row "
                "mixes the acoustic and the text filler rate)"),
        "classifier_weight_human": {d: DIMENSION_WEIGHTS.get(d, 0.0) / 2 for d in TEXT_BEARING_DIMENSIONS},
    }
    training["validity"] = ACOUSTIC_FITTED_VALIDITY
    cfg = pcfg.with_(name="acoustic-fitted", provenance="trained", training=training,
                     notes="classifier fitted on labels (seen clips) for the acoustic dimensions; ODL = documented "
                           "prior; text-bearing dimensions (" + ", ".join(TEXT_BEARING_DIMENSIONS) + ") keep the "
                           "heuristic prior's weights (not fitted). "
                           "Regenerate: python -m livejudge.judge.training.prior --fit OUT_DIR")
    return head, cfg


if __name__ == "__main__":  # the flags are parsed in the commands room (issue 21)
    from livejudge.commands.prior import main

    sys.exit(main())
