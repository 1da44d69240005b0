"""The judge, in three rooms: ``model`` (the 18 dimensions, ODL head, checkpoint format, Judge,
scheduler), ``features`` (audio/transcripts → the vectors a head reads: acoustic and text
features, ASR, and the backbones that assemble them) and ``training`` (fitting, evaluating and
the ``livejudge train``/``eval`` commands). Shipped head checkpoints live in ``heads/``."""
