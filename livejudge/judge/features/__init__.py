"""Features: audio and transcripts → the vectors a head reads. ``acoustic`` and ``text`` are the
interpretable features, ``asr`` the optional transcriber; ``backbones`` assemble a window's
embedding and per-dimension evidence (the contract the model reads is ``backbones.base``)."""
