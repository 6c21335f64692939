// tenzr-order-scatter-dims: a scatter gets its operand's dims in the order [batching,
// indexed, other] and its updates' in the order [scatter, window], by transposes around it
// (IREE 3.13 rejects other orders with batching dims, and without them rejects some and
// miscompiles others); scatters already in that order stay.
// RUN: tenzr-opt %s --tenzr-order-scatter-dims | filecheck %s

// The cotangent of a batched m[:, idx]: per batch, columns of a 3x5 operand.
// CHECK-LABEL: func.func @into_a_later_dim
// CHECK: %[[X:.*]] = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<6x3x5xf32>) -> tensor<6x5x3xf32>
// CHECK: %[[U:.*]] = stablehlo.transpose %arg2, dims = [0, 2, 1] : (tensor<6x3x2xf32>) -> tensor<6x2x3xf32>
// CHECK: %[[S:.*]] = "stablehlo.scatter"(%[[X]], %arg1, %[[U]])
// CHECK-SAME: update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2
// CHECK: %[[B:.*]] = stablehlo.transpose %[[S]], dims = [0, 2, 1] : (tensor<6x5x3xf32>) -> tensor<6x3x5xf32>
// CHECK: return %[[B]]
func.func @into_a_later_dim(%x: tensor<6x3x5xf32>, %i: tensor<6x2x1xi32>, %u: tensor<6x3x2xf32>) -> tensor<6x3x5xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [2], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [2], index_vector_dim = 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<6x3x5xf32>, tensor<6x2x1xi32>, tensor<6x3x2xf32>) -> tensor<6x3x5xf32>
  return %0 : tensor<6x3x5xf32>
}

// CHECK-LABEL: func.func @in_order
// CHECK-NOT: stablehlo.transpose
func.func @in_order(%x: tensor<6x3x5xf32>, %i: tensor<6x2x1xi32>, %u: tensor<6x2x5xf32>) -> tensor<6x3x5xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<6x3x5xf32>, tensor<6x2x1xi32>, tensor<6x2x5xf32>) -> tensor<6x3x5xf32>
  return %0 : tensor<6x3x5xf32>
}

// Without batching dims too: JAX's x.at[i, :, j].add(u), a window between the two indexed
// dims (IREE 3.13 wrote the wrong elements).
// CHECK-LABEL: func.func @unbatched
// CHECK: %[[X:.*]] = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<5x3x2xf32>) -> tensor<5x2x3xf32>
// CHECK: %[[S:.*]] = "stablehlo.scatter"(%[[X]], %arg1, %arg2)
// CHECK-SAME: update_window_dims = [1], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1
// CHECK: %[[B:.*]] = stablehlo.transpose %[[S]], dims = [0, 2, 1] : (tensor<5x2x3xf32>) -> tensor<5x3x2xf32>
// CHECK: return %[[B]]
func.func @unbatched(%x: tensor<5x3x2xf32>, %i: tensor<4x2xi32>, %u: tensor<4x3xf32>) -> tensor<5x3x2xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 2], scatter_dims_to_operand_dims = [0, 2], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x3x2xf32>, tensor<4x2xi32>, tensor<4x3xf32>) -> tensor<5x3x2xf32>
  return %0 : tensor<5x3x2xf32>
}
