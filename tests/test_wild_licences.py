"""Licence of a wild-corpus row (docs/corpus.md "Licence of a row: the recording's"): a human
recording the rule names as a public corpus's keeps that corpus's licence wherever it is hosted; a
machine clip, or a person of no named corpus, takes the hosting repository's. The fit/measure split
(benchmarks/judge_lofo.py FIT_OK) reads this column, so a wrong licence here is a row fitted on that
must not be."""

import csv
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        return m
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _fit_ok() -> set:
    """judge_lofo.FIT_OK: the licences a shipped head may be fitted on."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from judge_lofo import FIT_OK
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return FIT_OK


g3 = _load("gather_wild_corpus_3")
AGPL = {"repo": "x/y", "licence": "AGPL-3.0"}


def test_a_public_corpus_recording_keeps_its_corpus_licence_wherever_hosted():
    assert g3.corpus_licence(AGPL, "human", "AMI-meeting")[0] == "CC-BY-4.0"
    assert g3.corpus_licence(AGPL, "human", "NASA-Apollo11-public-domain")[0] == "public-domain"
    assert g3.corpus_licence(AGPL, "human", "libritts-1089")[0] == "CC-BY-4.0"  # the second batch's corpora too
    lic, note = g3.corpus_licence(AGPL, "human", "AMI-meeting-headset")
    assert "AMI" in note and "x/y (AGPL-3.0)" in note


def test_machines_and_unnamed_people_take_the_repository_licence():
    assert g3.corpus_licence(AGPL, "machine", "AMI-meeting") == ("AGPL-3.0", "")  # a clone of a corpus voice
    assert g3.corpus_licence(AGPL, "human", "GoogleCloud-speech-sample-call") == ("AGPL-3.0", "")
    assert g3.corpus_licence(AGPL, "human", "public-domain-ish-speaker")[0] == "AGPL-3.0"  # suffix only


def test_measure_only_sources_are_never_fit_rows_whatever_the_repository_says():
    FIT_OK = _fit_ok()
    mit = {"repo": "x/y", "licence": "MIT"}
    for label, system in [("human", "VoxConverse"), ("machine", "ChatTTS")]:
        lic, note = g3.corpus_licence(mit, label, system)
        assert lic not in FIT_OK and "measure only" in note and "x/y (MIT)" in note
    with (ROOT / "benchmarks" / "data" / "wild_manifest_3.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["system"] in ("VoxConverse", "ChatTTS")]
    assert len(rows) == 48 and not any(r["licence"] in FIT_OK for r in rows)


@pytest.mark.parametrize("manifest, rules, at_least", [
    ("wild_manifest_3.csv", ("conversational_human", "conversational_tts"), 100),
    ("wild_manifest_4.csv", ("conversational_human_4", "conversational_tts_4"), 50),
])
def test_a_stored_batch_is_what_its_rules_and_the_licence_rule_say(manifest, rules, at_least):
    srcs = {s["repo"]: s for name in rules for s in g3.load(name)}
    with (ROOT / "benchmarks" / "data" / manifest).open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > at_least
    for r in rows:
        src = srcs[r["repo"]]
        assert src["commit"] == r["commit"], r["path"]
        assert (r["licence"], r["licence_note"]) == g3.corpus_licence(src, r["label"], r["system"]), r["path"]
    assert {r["label"] for r in rows} == {"human", "machine"}


def test_the_fifth_batch_is_measure_only_row_by_row():
    """Commercial TTS (batch 5): every row of the stored manifest is one of its rule file's
    MEASURE_ONLY_SOURCES at the named commit, with a licence outside FIT_OK, so no head is fitted on
    it even where the repository itself says MIT (the generators' free tiers are non-commercial)."""
    FIT_OK = _fit_ok()
    g5 = _load("gather_wild_corpus_5")
    srcs = {s["repo"]: s for s in g5.measure_only_sources()}
    assert {s["repo"] for s in g3.load("commercial_tts_5")} == set()  # no fit-OK source was found
    with (ROOT / "benchmarks" / "data" / "wild_manifest_5.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 300
    for r in rows:
        src = srcs[r["repo"]]
        assert src["commit"] == r["commit"], r["path"]
        assert r["licence"] == f"measure-only ({src['licence']})" and r["licence"] not in FIT_OK, r["path"]
    assert any(srcs[r["repo"]]["licence"] == "MIT" for r in rows)  # a repository licence that alone would allow it


def test_the_sixth_batch_fits_only_on_licensed_sources_and_keeps_hume_measure_only():
    """Commercial TTS that may be fitted on (batch 6): a row of a SOURCES entry keeps its
    repository's licence, which is in FIT_OK; a row of a MEASURE_ONLY_SOURCES entry is written
    outside FIT_OK although its repository says Apache-2.0 (the generator's terms are unknown)."""
    FIT_OK = _fit_ok()
    g6 = _load("gather_wild_corpus_6")
    srcs = {(s["repo"], s["commit"]): s for s in g6.sources()}
    with (ROOT / "benchmarks" / "data" / "wild_manifest_6.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 25
    for r in rows:
        src = srcs[(r["repo"], r["commit"])]
        assert (r["licence"], r["licence_note"]) == g6.licence_of(src, r["label"], r["system"]), r["path"]
        assert (r["licence"] in FIT_OK) == (not src.get("measure_only")), r["path"]
    fit_systems = {r["system"] for r in rows if r["licence"] in FIT_OK}
    assert {"Google-Cloud-TTS", "Deepgram-Aura-2"} <= fit_systems
    assert {r["system"] for r in rows if r["licence"] not in FIT_OK} == {"Hume-Octave"}


def test_the_seventh_batch_fits_on_polly_openai_and_watson_and_keeps_azure_measure_only():
    """Batch 7: rows of SOURCES keep their repository's licence (MIT-0 counts as fit-OK: MIT
    without even the notice condition); the Azure rows, whose repository has no LICENSE file, are
    written outside FIT_OK."""
    FIT_OK = _fit_ok()
    assert "MIT-0" in FIT_OK
    g6, g7 = _load("gather_wild_corpus_6"), _load("gather_wild_corpus_7")
    srcs = {(s["repo"], s["commit"]): s for s in g6.sources(g7.RULES)}
    with (ROOT / "benchmarks" / "data" / "wild_manifest_7.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 50
    for r in rows:
        src = srcs[(r["repo"], r["commit"])]
        assert (r["licence"], r["licence_note"]) == g6.licence_of(src, r["label"], r["system"]), r["path"]
        assert (r["licence"] in FIT_OK) == (not src.get("measure_only")), r["path"]
        assert "commercial_tts_7.md" in r["licence_note"], r["path"]
    fit_systems = {r["system"] for r in rows if r["licence"] in FIT_OK}
    assert {"Amazon-Polly-neural", "OpenAI-tts-1", "IBM-Watson-TTS-V3"} <= fit_systems
    assert {r["system"] for r in rows if r["licence"] not in FIT_OK} == {"Azure-Neural-TTS"}


def test_the_eighth_batch_fits_only_on_vendors_own_output_and_keeps_the_rest_measure_only():
    """Batch 8: rows of SOURCES (a vendor's own output in its own MIT, CC0 or Apache-2.0 repository:
    Speechify, Inworld, Smallest.ai, PlayHT, ElevenLabs' UI library) keep their repository's
    licence; rows of MEASURE_ONLY_SOURCES (no LICENSE file at the commit, or a third party's
    ElevenLabs or LMNT output of unknown plan) are written outside FIT_OK. One repository and commit
    is in both lists with different files, so a row is mapped to its source by its path, not by
    (repo, commit) alone."""
    import re

    FIT_OK = _fit_ok()
    g6, g8 = _load("gather_wild_corpus_6"), _load("gather_wild_corpus_8")
    srcs = g6.sources(g8.RULES)
    with (ROOT / "benchmarks" / "data" / "wild_manifest_8.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 60
    for r in rows:
        (src,) = [s for s in srcs if (s["repo"], s["commit"]) == (r["repo"], r["commit"])
                  and any(re.search(rule[0], r["source_path"]) for rule in s["rules"])]
        (rule,) = [rule for rule in src["rules"] if re.search(rule[0], r["source_path"])]
        assert (r["label"], r["family"], r["system"]) == tuple(rule[1:4]), r["path"]
        assert (r["licence"], r["licence_note"]) == g6.licence_of(src, r["label"], r["system"]), r["path"]
        assert (r["licence"] in FIT_OK) == (not src.get("measure_only")), r["path"]
        assert "commercial_tts_8.md" in r["licence_note"], r["path"]
    fit_systems = {r["system"] for r in rows if r["licence"] in FIT_OK}
    assert fit_systems == {"Speechify-simba-english", "Speechify-simba-3.2", "Inworld-TTS-1.5-mini",
                           "Smallest-Lightning", "PlayHT-Play3.0-or-2.0", "ElevenLabs-TTS"}
    assert {r["system"] for r in rows if r["licence"] not in FIT_OK} == {
        "Inworld-TTS-1", "Inworld-TTS-1-Max", "ElevenLabs-v3-dialogue", "ElevenLabs-SDK-default-model",
        "Rime-TTS-docs", "LMNT"}
    with (ROOT / "benchmarks" / "data" / "wild_manifest_5.csv").open() as f:
        fifth = {r["repo"] for r in csv.DictReader(f)}
    assert not fifth & {r["repo"] for r in rows}  # the measure-only yardstick stays unseen


def _measure_only_batch(n: int, forbidden: str) -> list[dict]:
    """The rows of wild batch ``n`` (``gather_wild_corpus_<n>``, ``wild_manifest_<n>.csv``), checked as
    a measure-only batch: its rule file's SOURCES is empty, so every row, whatever its repository's
    licence, is written ``measure-only (<licence>)`` outside FIT_OK; each row maps to its rule by its
    path and is a machine clip; no row's path or system matches ``forbidden`` (reserved, sealed or
    already-measured systems); and no system of another batch's manifest comes back under the same
    name, case aside."""
    import re

    FIT_OK = _fit_ok()
    g = _load(f"gather_wild_corpus_{n}")
    assert _load("gather_wild_corpus_2").load(g.RULES, "SOURCES") == []
    srcs = _load("gather_wild_corpus_6").sources(g.RULES)
    assert srcs and all(s.get("measure_only") for s in srcs)
    with (ROOT / "benchmarks" / "data" / f"wild_manifest_{n}.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 60
    for r in rows:
        (src,) = [s for s in srcs if (s["repo"], s["commit"]) == (r["repo"], r["commit"])]
        (rule,) = [rule for rule in src["rules"] if re.search(rule[0], r["source_path"])]
        assert (r["label"], r["family"], r["system"]) == tuple(rule[1:4]), r["path"]
        assert (r["licence"], r["licence_note"]) == g.licence_of(src, r["label"], r["system"]), r["path"]
        assert r["licence"] == f"measure-only ({src['licence']})" and r["licence"] not in FIT_OK, r["path"]
        assert f"{g.RULES}.md" in r["licence_note"], r["path"]
        assert r["label"] == "machine", r["path"]
        assert not re.search(forbidden, r["source_path"] + r["system"], re.I), r["path"]
    other = set()
    for p in sorted((ROOT / "benchmarks" / "data").glob("wild_manifest*.csv")):
        if p.name != f"wild_manifest_{n}.csv":
            with p.open() as f:
                other |= {r["system"].lower() for r in csv.DictReader(f)}
    assert not other & {r["system"].lower() for r in rows}
    return rows


RESERVED_OR_SEALED = r"styletts|tortoise|vibevoice|megatts|kokoro|hibari|seed-tts|chatterbox"


def test_the_ninth_batch_is_all_measure_only_and_brings_only_systems_no_batch_had():
    """Batch 9 (neural TTS and speech-LM systems not yet measured; Apache-2.0 sources included), as
    ``_measure_only_batch`` checks it."""
    rows = _measure_only_batch(9, RESERVED_OR_SEALED)
    assert {r["system"] for r in rows} == {
        "NaturalSpeech3", "NaturalSpeech", "UniAudio", "SimpleSpeech2", "E3-TTS", "ARDiT", "DiTTo-TTS",
        "Step-Audio-Chat", "Step-Audio-TTS-3B-clone", "Spark-TTS-0.5B"}


def test_the_tenth_batch_is_all_measure_only_and_brings_only_systems_no_batch_had():
    """Batch 10 (more neural TTS, voice-conversion and speech-LM systems not yet measured; CC0-1.0
    sources included), as ``_measure_only_batch`` checks it; FastSpeech-based GenerSpeech (a sealed
    family) and Parler-TTS (measured before, in a podcast) are left out by name too."""
    rows = _measure_only_batch(10, RESERVED_OR_SEALED + r"|generspeech|fastspeech|parler")
    assert {r["system"] for r in rows} == {
        "E1-TTS-DMD", "CosyVoice", "FireRedTTS", "MVoice (Make-A-Voice)", "SPEAR-TTS", "NANSY", "Lina-Speech"}
    with (ROOT / "benchmarks" / "data" / "wild_manifest_9.csv").open() as f:
        assert "Spark-TTS-0.5B" in {r["system"] for r in csv.DictReader(f)}  # the ninth batch is among the others
