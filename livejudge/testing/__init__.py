"""Test helpers: dialogues built from real clips with a known timeline (`dialogues`), a tiny
offline Qwen2.5-Omni thinker (`qwen`) and a scripted Pipecat pipeline (`pipecat`).

The common names are re-exported here, so ``from livejudge.testing import DialogueBuilder``
works as before."""

from livejudge.testing.dialogues import (
    Dialogue,
    DialogueBuilder,
    DialogueTruth,
    Placed,
    clips_dir,
    example_dialogue,
    list_clips,
    load_clip,
)

__all__ = ["Dialogue", "DialogueBuilder", "DialogueTruth", "Placed", "clips_dir",
           "example_dialogue", "list_clips", "load_clip"]
