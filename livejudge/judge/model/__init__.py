"""The model: 18 dimensions, ODL layer and classifier, head checkpoints, the Judge and its scheduler (no audio processing here)."""
