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

// A scatter of no updates (the gradient of a gather of nothing) is its input.
// CHECK-LABEL: func.func @empty_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf64>
// CHECK-NOT: stablehlo.scatter
// CHECK: return %[[X]]
func.func @empty_scatter(%x: tensor<3x1xf64>, %i: tensor<0x1xi32>, %u: tensor<0x1xf64>) -> tensor<3x1xf64> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) : (tensor<3x1xf64>, tensor<0x1xi32>, tensor<0x1xf64>) -> tensor<3x1xf64>
  return %0 : tensor<3x1xf64>
}
