"""Tenzr: differentiate NumPy-like tensor programs through MLIR and IREE."""

__version__ = "0.1.0"
