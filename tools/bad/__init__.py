"""The bad-input corpus of tests/data/bad (`/usr/bin/python3 -m tools.bad.make_bad_corpus`)."""
