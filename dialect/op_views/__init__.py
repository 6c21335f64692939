"""Empty Python modules for the dialects whose ops Tenzr wraps but IREE's wheel has no module for.

The MLIR bindings import a module for an op's dialect each time they wrap one in a Python
object (`value.owner`), and do not remember a failed import: for `stablehlo` that was a
scan of sys.path per call, about 10% of tenzr-grad plus the lowering. `ir_imports` adds this
package to the bindings' search path, so the import succeeds once and is remembered. The
modules define no op classes: ops stay plain `ir.Operation`s.
"""
