"""Tenzr's passes. Importing this package registers every pass in `registry.PASSES`."""

from tenzr.passes import (
    convert_tenzr_to_stablehlo,
    tenzr_bound_indices,
    tenzr_concatenate_wide_pads,
    tenzr_expand_math,
    tenzr_expand_select_and_scatter,
    tenzr_fold_empty_contractions,
    tenzr_grad,
    tenzr_im2col,
    tenzr_jvp,
    tenzr_mark_in_place,
    tenzr_reverse_before_strided_slice,
    tenzr_sort_rows,
    tenzr_split_grouped_convolutions,
    tenzr_split_reductions,
    tenzr_split_scatter_windows,
    tenzr_tile_heavy_results,
    tenzr_verify,
    tenzr_widen_boundary,
)
from tenzr.passes.registry import PASSES, parse_pipeline, run_pipeline

__all__ = ["PASSES", "convert_tenzr_to_stablehlo", "parse_pipeline", "run_pipeline", "tenzr_bound_indices",
           "tenzr_concatenate_wide_pads", "tenzr_expand_math", "tenzr_expand_select_and_scatter",
           "tenzr_fold_empty_contractions", "tenzr_grad", "tenzr_im2col", "tenzr_jvp", "tenzr_mark_in_place",
           "tenzr_reverse_before_strided_slice", "tenzr_sort_rows", "tenzr_split_grouped_convolutions",
           "tenzr_split_reductions", "tenzr_split_scatter_windows", "tenzr_tile_heavy_results", "tenzr_verify",
           "tenzr_widen_boundary"]
