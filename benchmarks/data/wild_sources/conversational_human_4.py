# Fourth batch of CONVERSATIONAL / SPONTANEOUS / TELEPHONE human clips (English) hosted in public GitHub repos.
# Same conventions as conversational_human.py. Each regex is matched (re.search) against
# `git ls-tree -r --name-only <commit>`.
# Rule tuple: (regex, label, family, system, speaker_expr[, options]); options: long recordings are cut into
# 8 s pieces at pauses, up to max_segments.
# Evidence, licences, durations and doubts: see conversational_human_4.md
#
# "licence" is the hosting repo's licence (SPDX; "NOASSERTION" where the repo has no licence file). Where a
# clip is a US-government work, the system name ENDS in "public-domain" so the gatherer assigns that licence.

SOURCES = [
    # ------------------------------------------------------------------ IBM Watson Speech to Text demo samples
    # Licence holds: the repo's LICENSE at this commit is "Apache License Version 2.0, January 2004" and its
    # README says "This sample code is licensed under Apache 2.0." The clips are IBM's own demo recordings
    # (public/audio/, served by the STT demo), no third-party corpus is named. Same footing as Google's
    # commercial_mono call in conversational_human.py.
    # Only the four English clips that src/data/samples.json marks "speaker_labels": true (multi-talker);
    # the single-talker en-GB/Us_English_Narrowband clips (read-style weather/news prompts) are NOT matched.
    {"repo": "watson-developer-cloud/speech-to-text-nodejs", "commit": "f4518f1afc89b6cc9488020d9faac95ddcded908",
     "licence": "Apache-2.0",
     "rules": [
         # 54.7 s / 55.1 s, 16 kHz mono: multi-speaker talk about IBM and AI (keywords "IBM, admired, AI,
         # transformations, cognitive" / "Artificial Intelligence, data, predict, learn"), speaker_labels demo
         (r"^public/audio/(en-US_Broadband_sample[12])\.wav$",
          "human", "human-conversational", "IBM-Watson-STT-demo-broadband", "ibm-\\1",
          {"split_s": 8, "max_segments": 7}),
         # 37.8 s / 36.6 s, 8 kHz mono (G.712 telephone band): two-party phone calls (keywords "twenty thousand
         # dollars, filled out, car" / "new company, client, Chris"), speaker_labels demo
         (r"^public/audio/(english[23])\.g712\.wav$",
          "human", "human-telephone-conversational", "IBM-Watson-STT-demo-narrowband-call", "ibm-\\1-call",
          {"split_s": 8, "max_segments": 5}),
     ]},

    # ------------------------------------------------------------------ NASA Apollo 11 CH10 air-to-ground (UTD)
    # Licence holds: NASA mission audio (Apollo 11 air-to-ground loop + Public Affairs "Apollo Control"
    # commentary, July 1969) is a work of the US federal government -> public domain (17 USC 105). The hosting
    # repo (UT Dallas CRSS, the exploreapollo.org project) has NO licence file at this commit; that does not
    # bind a public-domain recording. Only the three wavs present in the snapshot are matched (two siblings,
    # ..._00000175000.wav and ..._00000601000.wav, are over the 4 MiB cap and absent).
    # Different segments (first hour of the mission, Canary / Tananarive passes) from the linto-ai apollo11.mp3
    # already used; some talkers (PAO, crew) may recur.
    {"repo": "UTD-CRSS/exploreapollo-import-audio", "commit": "0767d3be39e760913f282937bff368f60fe51faa",
     "licence": "NOASSERTION",
     "rules": [
         # 122.9 s / 53.4 s / 60.9 s, 8 kHz mono, tape hiss; per-file .txt transcripts with SPK1..SPK6 labels
         (r"^src/A11_HR1U_CH10_AIR2GND/A11_HR1U_CH10_(00001058000|00002160000|00002316000)\.wav$",
          "human", "human-telephone-conversational", "NASA-Apollo11-CH10-air-to-ground-public-domain",
          "nasa-apollo11-ch10-\\1", {"split_s": 8, "max_segments": 12}),
     ]},
]

# Measure-only (licence not fit-OK): none found in this batch worth listing (see the .md's rejected list).
MEASURE_ONLY_SOURCES = []
