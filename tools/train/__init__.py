"""Training scripts and the torch models of tools/train/MODELS.md (run as `python3 -m tools.train.NAME`)."""
