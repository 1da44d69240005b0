"""Training: fit, evaluate and build judge heads; the `livejudge train` / `livejudge eval` commands."""
