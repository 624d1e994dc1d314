"""GGUF writer, converter and checks of issue 45 (tools/gguf/README.md; run as `python3 -m tools.gguf.NAME`)."""
