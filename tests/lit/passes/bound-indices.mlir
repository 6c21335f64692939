// tenzr-bound-indices: gathers clamp their starts and scatters drop the windows that do
// not fit, as StableHLO specifies (IREE 3.13 reads and writes out of bounds instead).
// RUN: tenzr-opt %s --tenzr-bound-indices | filecheck %s

// Unknown starts: clamped into [0, 3 - 1] per component, as StableHLO's gather does.
// CHECK-LABEL: func.func @gather_unknown
// CHECK: %[[LIMIT:.*]] = stablehlo.constant dense<2> : tensor<1xi32>
// CHECK: %[[HIGH:.*]] = stablehlo.broadcast_in_dim %[[LIMIT]], dims = [1] : (tensor<1xi32>) -> tensor<5x1xi32>
// CHECK: %[[LOW:.*]] = stablehlo.constant dense<0> : tensor<5x1xi32>
// CHECK: %[[STARTS:.*]] = stablehlo.clamp %[[LOW]], %arg1, %[[HIGH]]
// CHECK: "stablehlo.gather"(%arg0, %[[STARTS]])
func.func @gather_unknown(%x: tensor<3x4xf32>, %i: tensor<5x1xi32>) -> tensor<5x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// Starts a clamp has already bounded stay.
// CHECK-LABEL: func.func @gather_known
// CHECK: %[[C:.*]] = stablehlo.clamp
// CHECK-NEXT: "stablehlo.gather"(%arg0, %[[C]])
func.func @gather_known(%x: tensor<3x4xf32>, %i: tensor<5x1xi32>) -> tensor<5x4xf32> {
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<2> : tensor<i32>
  %c = stablehlo.clamp %lo, %i, %hi : (tensor<i32>, tensor<5x1xi32>, tensor<i32>) -> tensor<5x1xi32>
  %0 = "stablehlo.gather"(%x, %c) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// A constant start past the last row is clamped too (canonicalize folds it later).
// CHECK-LABEL: func.func @gather_constant_too_far
// CHECK: stablehlo.clamp
// CHECK: "stablehlo.gather"
func.func @gather_constant_too_far(%x: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %i = stablehlo.constant dense<[[0], [3]]> : tensor<2x1xi32>
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Per component: an iota (rows) and a clamp into [0, 3] (columns), as tenzr lowers
// take_along_axis, prove the index tuples in range.
// CHECK-LABEL: func.func @take_along_known
// CHECK: %[[T:.*]] = stablehlo.concatenate
// CHECK-NEXT: "stablehlo.gather"(%arg0, %[[T]])
func.func @take_along_known(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %lo = stablehlo.constant dense<0> : tensor<i32>
  %hi = stablehlo.constant dense<3> : tensor<i32>
  %c = stablehlo.clamp %lo, %i, %hi : (tensor<i32>, tensor<3x2xi32>, tensor<i32>) -> tensor<3x2xi32>
  %r = stablehlo.reshape %c : (tensor<3x2xi32>) -> tensor<3x2x1xi32>
  %rows = stablehlo.iota dim = 0 : tensor<3x2x1xi32>
  %t = stablehlo.concatenate %rows, %r, dim = 2 : (tensor<3x2x1xi32>, tensor<3x2x1xi32>) -> tensor<3x2x2xi32>
  %0 = "stablehlo.gather"(%x, %t) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<3x4xf32>, tensor<3x2x2xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// A scatter with an identity (add's 0): starts clamped, updates outside replaced by 0.
// CHECK-LABEL: func.func @scatter_add
// CHECK: %[[INSIDE:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.and across dimensions = [1]
// CHECK: %[[KEEP:.*]] = stablehlo.broadcast_in_dim %[[INSIDE]], dims = [0] : (tensor<2xi1>) -> tensor<2x4xi1>
// CHECK: %[[STARTS:.*]] = stablehlo.clamp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK: %[[U:.*]] = stablehlo.select %[[KEEP]], %arg2, %[[ZERO]]
// CHECK: "stablehlo.scatter"(%arg0, %[[STARTS]], %[[U]])
func.func @scatter_add(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// A set has no identity: the windows outside go to a row of padding past the end, sliced off.
// CHECK-LABEL: func.func @scatter_set
// CHECK: %[[PADDED:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK: %[[END:.*]] = stablehlo.constant dense<3> : tensor<1xi32>
// CHECK: %[[STARTS:.*]] = stablehlo.select %{{.*}}, %arg1, %{{.*}} : tensor<2x1xi1>, tensor<2x1xi32>
// CHECK: %[[S:.*]] = "stablehlo.scatter"(%[[PADDED]], %[[STARTS]], %arg2)
// CHECK: (tensor<4x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[CUT:.*]] = stablehlo.slice %[[S]] [0:3, 0:4]
// CHECK: return %[[CUT]]
func.func @scatter_set(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
