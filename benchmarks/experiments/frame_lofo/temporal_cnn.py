"""The light temporal CNN over Whisper encoder frames: ``livejudge.judge.training.frame_cnn`` (it moved there
when a head shipped with it; this name stays for the experiment's scripts)."""
from livejudge.judge.training.frame_cnn import (CROP, MIN_FRAMES, centre_dialogue, make_net, mask_crop,  # noqa: F401
                                               scores, standardise, train)
