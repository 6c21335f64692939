// The mlir-opt behaviours of tenzr-opt.

// Passes run in command-line order, and --pass-pipeline mixes tenzr and MLIR passes.
// RUN: tenzr-opt %s --tenzr-grad="func=f" --convert-tenzr-to-stablehlo --canonicalize | filecheck %s --check-prefix=ORDER
// RUN: tenzr-opt %s --pass-pipeline="builtin.module(tenzr-grad{func=f mode=value_and_grad},convert-tenzr-to-stablehlo,canonicalize,cse,symbol-dce)" | filecheck %s --check-prefix=PIPE
// Options may also be separated by commas, as MLIR accepts; a list value keeps its commas.
// RUN: tenzr-opt %s --tenzr-grad=func=f,wrt=0,mode=vjp | filecheck %s --check-prefix=COMMA
// RUN: cat %s | tenzr-opt - -o %t.out && filecheck %s --check-prefix=STDIN --input-file=%t.out
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: tenzr-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: tenzr-opt --help | filecheck %s --check-prefix=HELP
// RUN: tenzr-opt --version | filecheck %s --check-prefix=VERSION

// ORDER-LABEL: func.func @f_grad
// ORDER-NOT: tenzr.
// ORDER: return

// PIPE-LABEL: func.func @f_value_and_grad
// PIPE-SAME: -> (tensor<f32>, tensor<3xf32>)
// PIPE-NOT: tenzr.

// COMMA-LABEL: func.func @f_vjp
// COMMA-SAME: (%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<3xf32>)

// STDIN: "tenzr.reduce_sum"

// AFTER: // -----// IR Dump After convert-tenzr-to-stablehlo //----- //
// AFTER: stablehlo.multiply

// LIST: --convert-tenzr-to-stablehlo
// LIST: --tenzr-grad
// LIST: mode=grad|vjp|value_and_grad
// LIST: --tenzr-verify

// HELP: usage: tenzr-opt
// HELP: --split-input-file
// HELP: --verify-diagnostics

// VERSION: tenzr-opt 0.1.0

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
