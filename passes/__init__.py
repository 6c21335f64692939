"""Tenzr's passes. Importing this package registers every pass in `registry.PASSES`."""

from tenzr.passes import convert_tenzr_to_stablehlo, tenzr_expand_math, tenzr_grad, tenzr_verify
from tenzr.passes.registry import PASSES, parse_pipeline, run_pipeline

__all__ = ["PASSES", "convert_tenzr_to_stablehlo", "parse_pipeline", "run_pipeline", "tenzr_expand_math", "tenzr_grad",
           "tenzr_verify"]
