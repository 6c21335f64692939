"""Command-line tools: `tenzr-opt` and `tenzr-compile`."""
