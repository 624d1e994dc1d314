"""The tokenizer goldens of tests/data/tokenizers/golden (make_goldens.sh runs these scripts by path)."""
