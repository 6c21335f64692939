# ruff: noqa: F821 - lit injects `config`
# lit configuration: every .mlir file under tests/lit is a test; RUN lines call the
# tenzr tools and `filecheck` from the environment lit runs in.
import os
import sys

import lit.formats

config.name = "tenzr"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
config.excludes = ["Inputs"]

tool_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = tool_dir + os.pathsep + os.environ.get("PATH", "")
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
