"""The main job: differentiate a tenzr function with tenzr-grad, compile it with IREE for
CPU, and check the gradient against finite differences."""

import numpy as np

from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
from tenzr.dialect import make_context, parse_module
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.runtime import Program
from tenzr.targets import Target

SOURCE = """
func.func @loss(%x: tensor<4x3xf64>, %w: tensor<3x2xf64>) -> tensor<f64> {
  %0 = "tenzr.matmul"(%x, %w) : (tensor<4x3xf64>, tensor<3x2xf64>) -> tensor<4x2xf64>
  %1 = "tenzr.tanh"(%0) : (tensor<4x2xf64>) -> tensor<4x2xf64>
  %2 = "tenzr.mul"(%1, %1) : (tensor<4x2xf64>, tensor<4x2xf64>) -> tensor<4x2xf64>
  %3 = "tenzr.reduce_sum"(%2) : (tensor<4x2xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}
"""


def main() -> None:
    with make_context():
        module = parse_module(SOURCE, "demo.mlir")
        run_pipeline(module, parse_pipeline("builtin.module(tenzr-grad{func=loss mode=value_and_grad})"))
        print("tenzr-grad added @loss_value_and_grad; lowering to StableHLO and compiling for CPU...")
        lower_to_stablehlo(module)
        program = Program(compile_stablehlo(str(module), Target("cpu")), Target("cpu"))
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    value, dx, dw = program("loss_value_and_grad", x, w)
    eps = 1e-6
    numeric = np.zeros_like(w)
    for index in np.ndindex(*w.shape):
        step = np.zeros_like(w)
        step[index] = eps
        numeric[index] = (program("loss", x, w + step)[0] - program("loss", x, w - step)[0]) / (2 * eps)
    print(f"loss = {float(value):.6f}")
    print("d loss / d w (tenzr-grad):\n", dw)
    print("max |tenzr-grad - finite differences| =", float(np.max(np.abs(dw - numeric))))


if __name__ == "__main__":
    main()
