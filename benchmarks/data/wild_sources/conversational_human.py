# Candidate CONVERSATIONAL / SPONTANEOUS / PUBLIC-SPEECH human clips (English) hosted in public GitHub repos.
# Each regex is matched (re.search) against `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]); options (added by the gatherer's
# user, not the search): the long recordings are cut into 8 s pieces at pauses, up to max_segments
# Evidence, licences, match counts and doubts: see conversational_human.md
#
# "licence" is the hosting repo's licence (SPDX). Where a clip comes from a public corpus or is a
# US-government work, the recording's own licence is what counts; the system field names that corpus
# (AMI, VoxConverse) or says "public-domain" so the gatherer can assign it.

SOURCES = [
    # ------------------------------------------------------------------ AMI meeting corpus (DiariZen example)
    # Licence holds: AMI Meeting Corpus audio is CC-BY-4.0 (groups.inf.ed.ac.uk/ami/corpus/license.shtml);
    # the hosting repo is MIT. Only the AMI example clip; the vendored pyannote-audio/ subtree is NOT matched.
    {"repo": "BUTSpeechFIT/DiariZen", "commit": "a60b18151dbbe246e4199d8ef5cd2ece3872ea94",
     "licence": "MIT",
     "rules": [
         # 30 s of AMI meeting EN2002a (Edinburgh, non-scenario meeting), 16 kHz mix, 3-4 overlapping talkers
         (r"^example/(EN2002a)_30s\.wav$",
          "human", "human-conversational", "AMI-meeting", "ami-\\1", {"split_s": 8, "max_segments": 3}),
     ]},

    # ------------------------------------------------------------------ AMI meeting corpus (lhotse test fixture)
    # Licence holds: AMI Meeting Corpus audio is CC-BY-4.0; the hosting repo is Apache-2.0.
    {"repo": "lhotse-speech/lhotse", "commit": "a79cc864e4275f6342bb94261313526a14d385fb",
     "licence": "Apache-2.0",
     "rules": [
         # 6 s cut (40-46 s) of the individual headset mic 0 of AMI scenario meeting ES2011a
         (r"^test/fixtures/ami/(ES2011a)\.Headset-(\d)-\d+s-\d+s\.wav$",
          "human", "human-conversational", "AMI-meeting-headset", "ami-\\1-headset\\2"),
     ]},

    # ------------------------------------------------------------------ VoxConverse (silero-vad C++ example)
    # MEASURE ONLY since 2026-12-04 (scripts/gather_wild_corpus_3.py MEASURE_ONLY records it "research-only"):
    # the README's "for research purposes" and "copyright remains with the original owners of the video"
    # make the CC-BY-4.0 reading below doubtful for the audio. The search's original reading: VoxConverse is CC-BY-4.0 per github.com/joonson/voxconverse README ("available to download
    # for research purposes under a Creative Commons Attribution 4.0 International License"), same footing as
    # VoxCeleb; silero-vad's README says "The sample file aepyx.wav is part of the Voxconverse dataset". Repo MIT.
    # The 16 kHz twin examples/c++/aepyx.wav is over the snapshot size cap (absent), so only the 8 kHz copy.
    {"repo": "snakers4/silero-vad", "commit": "806dcba3f0b5d95282d0889a074954a2f8c6397b",
     "licence": "MIT",
     "rules": [
         # VoxConverse test recording aepyx: 169 s, 4 speakers (test/aepyx.rttm), debate/news talk
         (r"^examples/c\+\+/(aepyx)_8k\.wav$",
          "human", "human-conversational", "VoxConverse", "voxconverse-\\1", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ NASA Apollo 11 air-to-ground loop
    # Licence holds: NASA mission audio is a work of the US federal government -> public domain (17 USC 105),
    # whatever the hosting repo's licence (AGPL-3.0, which does not bind a public-domain recording).
    {"repo": "linto-ai/whisper-timestamped", "commit": "137f4e0415d6c1ccf00a2008231b74dc8a01c1d9",
     "licence": "AGPL-3.0",
     "rules": [
         # 89 s, 8 kHz, CAPCOM <-> Apollo 11 crew radio exchange ("Apollo 11, Houston. We got a recommendation...")
         (r"^tests/data/(apollo11)\.mp3$",
          "human", "human-telephone-conversational", "NASA-Apollo11-public-domain", "nasa-\\1-air-to-ground", {"split_s": 8, "max_segments": 10}),
     ]},

    # ------------------------------------------------------------------ JFK inaugural address (whisper test clip)
    # Licence holds: speech of a sitting US president, recorded by the US government -> public domain;
    # repo is MIT anyway. (Same audio also in SYSTRAN/faster-whisper, argmaxinc/WhisperKit: listed once.)
    {"repo": "openai/whisper", "commit": "c0d2f624c09dc18e709e37c2ad90c039a4eb72a2",
     "licence": "MIT",
     "rules": [
         # 11 s, "And so my fellow Americans, ask not what your country can do for you..."
         (r"^tests/(jfk)\.flac$",
          "human", "human-public-speech", "JFK-inaugural-1961-public-domain", "us-president-jfk"),
     ]},

    # ------------------------------------------------------------------ G. W. Bush weekly radio address (whisper.cpp gb0)
    # Licence holds: presidential weekly radio address (1 Nov 2008) is a US-government work -> public domain
    # (Wikimedia Commons PD-USGov file that whisper.cpp's `make samples` fetches as gb0); repo MIT.
    # samples/jfk.wav in the same repo duplicates the JFK clip above and is deliberately not matched.
    {"repo": "onurpro/distributed-realtime-translator", "commit": "0573c360bf7f70e301aaef4e98984f0fcd157a35",
     "licence": "MIT",
     "rules": [
         # 127 s, 16 kHz mono
         (r"^samples/(gb0)\.wav$",
          "human", "human-public-speech", "GWBush-radio-address-2008-public-domain", "us-president-gwbush", {"split_s": 8, "max_segments": 12}),
     ]},

    # ------------------------------------------------------------------ Google Cloud Speech sample phone call
    # Licence holds: Google's own sample recording shipped in an Apache-2.0 repo (no third-party corpus).
    # Commit is the last one before "chore: delete handwritten samples" removed samples/ from the repo.
    {"repo": "googleapis/python-speech", "commit": "53843777ade1904f1305271766ae4bbc408890f0",
     "licence": "Apache-2.0",
     "rules": [
         # 45 s, 8 kHz mono, customer <-> store agent call about buying a Chromecast (role-played, 2 talkers)
         (r"^samples/snippets/resources/(commercial_mono)\.wav$",
          "human", "human-telephone-conversational", "GoogleCloud-speech-sample-call", "google-\\1-call", {"split_s": 8, "max_segments": 5}),
     ]},
]
