// tenzr-split-scatter-windows: windows that extend along indexed dims (here 2x3 windows
// at 2-d starts) become single positions: the dims are inserted, the window positions
// become scatter dims, and each start adds its offset (IREE 3.13 rejects the first form).
// RUN: tenzr-opt %s --tenzr-split-scatter-windows | filecheck %s

// CHECK-LABEL: func.func @windows
// CHECK: %[[SPREAD:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0, 3] : (tensor<3x2xi32>) -> tensor<3x2x3x2xi32>
// CHECK: %[[ROW:.*]] = stablehlo.iota dim = 1 : tensor<3x2x3x1xi32>
// CHECK: %[[COLUMN:.*]] = stablehlo.iota dim = 2 : tensor<3x2x3x1xi32>
// CHECK: %[[OFFSETS:.*]] = stablehlo.concatenate %[[ROW]], %[[COLUMN]], dim = 3
// CHECK: %[[STARTS:.*]] = stablehlo.add %[[SPREAD]], %[[OFFSETS]]
// CHECK: "stablehlo.scatter"(%arg0, %[[STARTS]], %arg2)
// CHECK-SAME: inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 3
// CHECK: (tensor<5x4xf32>, tensor<3x2x3x2xi32>, tensor<3x2x3xf32>) -> tensor<5x4xf32>
func.func @windows(%x: tensor<5x4xf32>, %i: tensor<3x2xi32>, %u: tensor<3x2x3xf32>) -> tensor<5x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x4xf32>, tensor<3x2xi32>, tensor<3x2x3xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// Windows along dims that are not indexed, and inserted indexed dims, stay.
// CHECK-LABEL: func.func @rows
// CHECK: "stablehlo.scatter"(%arg0, %arg1, %arg2)
// CHECK-SAME: update_window_dims = [1], inserted_window_dims = [0]
func.func @rows(%x: tensor<5x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<5x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<5x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
