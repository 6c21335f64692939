// tenzr-fold-empty-contractions: a contraction over nothing is zeros.
// RUN: tenzr-opt %s --tenzr-fold-empty-contractions | filecheck %s

// CHECK-LABEL: func.func @empty
// CHECK-DAG: %[[Z1:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-DAG: %[[Z2:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<1x2x3xf32>
// CHECK-NOT: stablehlo.dot_general
// CHECK-NOT: stablehlo.convolution
// CHECK: return %[[Z1]], %[[Z2]]
func.func @empty(%a: tensor<3x0xf32>, %b: tensor<0x4xf32>, %x: tensor<1x0x5xf32>, %w: tensor<2x0x3xf32>) -> (tensor<3x4xf32>, tensor<1x2x3xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x0xf32>, tensor<0x4xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x0x5xf32>, tensor<2x0x3xf32>) -> tensor<1x2x3xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<1x2x3xf32>
}
