"""No Python op classes for stablehlo: see tenzr.dialect.op_views."""
