// Gathers, scatters and dynamic slices as JAX exports them for indexing (x[i],
// x.at[i].add/set, lax.dynamic_slice): tenzr-grad differentiates them with their own rules.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// x[idx] as JAX exports it. x̄ is a scatter-add of ȳ at the starts, clamped first as the
// gather clamps them (a scatter would drop them instead).
// CHECK-LABEL: func.func @gather_vjp
// CHECK: %[[STARTS:.*]] = stablehlo.clamp %{{.*}}, %arg1, %{{.*}} : tensor<5x1xi32>
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK: %[[DX:.*]] = "stablehlo.scatter"(%[[ZERO]], %[[STARTS]], %arg2)
// CHECK-SAME: update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]]
func.func @gather(%x: tensor<3x4xf32>, %i: tensor<5x1xi32>) -> tensor<5x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// take_along_axis as JAX exports it, with batching dims: the scatter keeps them.
// CHECK-LABEL: func.func @take_along_axis_vjp
// CHECK: "stablehlo.scatter"
// CHECK-SAME: inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2
func.func @take_along_axis(%x: tensor<3x4xf32>, %i: tensor<3x2x1xi32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<3x4xf32>, tensor<3x2x1xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// x.at[idx].add(u): x̄ = ȳ; ū = ȳ gathered at each window, zero where the scatter dropped it.
// CHECK-LABEL: func.func @scatter_add_vjp
// CHECK: %[[INSIDE:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.and
// CHECK: %[[KEEP:.*]] = stablehlo.broadcast_in_dim %[[INSIDE]]
// CHECK: %[[AT:.*]] = "stablehlo.gather"(%arg3, %arg1)
// CHECK: %[[DU:.*]] = stablehlo.select %[[KEEP]], %[[AT]], %{{.*}}
// CHECK: return %{{.*}}, %arg3, %[[DU]]
func.func @scatter_add(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// x.at[idx].set(u): update ids 1..N scattered by max find the update that won each
// element; x̄ = ȳ where nothing was written, ū = ȳ where an update won.
// CHECK-LABEL: func.func @scatter_set_vjp
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 0 : tensor<8xi32>
// CHECK: %[[IDS:.*]] = stablehlo.add
// CHECK: %[[WON:.*]] = "stablehlo.scatter"(%{{.*}}, %arg1, %[[IDS]])
// CHECK: stablehlo.maximum
// CHECK: %[[UNWRITTEN:.*]] = stablehlo.compare EQ, %[[WON]], %{{.*}}
// CHECK: %[[DX:.*]] = stablehlo.select %[[UNWRITTEN]], %arg3, %{{.*}}
// CHECK: %[[MINE:.*]] = "stablehlo.gather"(%[[WON]], %arg1)
// CHECK: %[[MATCH:.*]] = stablehlo.compare EQ, %[[MINE]], %[[IDS]]
// CHECK: %[[AT:.*]] = "stablehlo.gather"(%arg3, %arg1)
// CHECK: %[[DU:.*]] = stablehlo.select %[[MATCH]], %[[AT]], %{{.*}}
// CHECK: return %{{.*}}, %[[DX]], %[[DU]]
func.func @scatter_set(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
