"""No Python op classes for tenzr: see tenzr.dialect.op_views."""
