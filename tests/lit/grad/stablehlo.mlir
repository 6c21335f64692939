// StableHLO and CHLO as JAX exports them (jax.jit(f).lower(...).as_text()): tenzr-grad
// differentiates them with their own rules.
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

// jnp.cumsum: a window sum's transpose pads ȳ by the window's reach and sums windows
// again (here a reverse cumulative sum).
// CHECK-LABEL: func.func @cumsum_vjp
// CHECK: %[[P:.*]] = stablehlo.pad %arg1, %{{.*}}, low = [0, 0], high = [0, 3], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
// CHECK: %[[DX:.*]] = "stablehlo.reduce_window"(%[[P]], %{{.*}})
// CHECK-SAME: window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]]
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %z) <{padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// 2x2 max pooling: as JAX, ȳ goes to each window's first maximum by a select_and_scatter
// (tenzr-expand-select-and-scatter later writes it as slices IREE compiles).
// CHECK-LABEL: func.func @max_pool_vjp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DX:.*]] = "stablehlo.select_and_scatter"(%arg0, %arg1, %[[ZERO]])
// CHECK-SAME: window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>
// CHECK: stablehlo.compare GE
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]]
func.func @max_pool(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// jnp.cumprod, exact with zeros: windows without zeros give ȳ·y/x, a window with one
// zero gives that zero the product of the rest.
// CHECK-LABEL: func.func @cumprod_vjp
// CHECK: %[[ISZERO:.*]] = stablehlo.compare EQ, %arg0, %{{.*}}, FLOAT
// CHECK: %[[NONZERO:.*]] = stablehlo.select %[[ISZERO]], %{{.*}}, %arg0
// CHECK: "stablehlo.reduce_window"(%[[NONZERO]]
// CHECK: stablehlo.multiply
// CHECK: %[[ZEROS:.*]] = stablehlo.convert %[[ISZERO]]
// CHECK: "stablehlo.reduce_window"(%[[ZEROS]]
// CHECK: %[[ONE_ZERO:.*]] = "stablehlo.reduce_window"
// CHECK: %[[NO_ZERO:.*]] = "stablehlo.reduce_window"
// CHECK: %[[DIVIDED:.*]] = stablehlo.divide %[[NO_ZERO]], %[[NONZERO]]
// CHECK: %[[DX:.*]] = stablehlo.select %[[ISZERO]], %[[ONE_ZERO]], %[[DIVIDED]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @cumprod(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %one) <{padding = dense<[[2, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A sort with its own comparator: the same comparator (two unused arguments added)
// sorts an iota beside the operand, and ȳ is scattered back through that permutation.
// CHECK-LABEL: func.func @sort_vjp
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<3x4xi32>
// CHECK: %[[SORTED:.*]]:2 = "stablehlo.sort"(%arg0, %[[IOTA]])
// CHECK: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>):
// CHECK: stablehlo.compare LT, %[[A]], %[[B]], TOTALORDER
// CHECK: %[[P:.*]] = stablehlo.reshape %[[SORTED]]#1
// CHECK: "stablehlo.scatter"
// CHECK-SAME: inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2
func.func @sort(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// lax.top_k: ȳ of the values scattered back to their indices.
// CHECK-LABEL: func.func @top_k_vjp
// CHECK: %[[VALUES:.*]], %[[INDICES:.*]] = chlo.top_k(%arg0, k = 2)
// CHECK: %[[I:.*]] = stablehlo.reshape %[[INDICES]] : (tensor<3x2xi32>) -> tensor<3x2x1xi32>
// CHECK: %[[T:.*]] = stablehlo.concatenate %{{.*}}, %[[I]], dim = 2
// CHECK: %[[DX:.*]] = "stablehlo.scatter"(%{{.*}}, %[[T]], %arg1)
// CHECK: return %[[VALUES]], %[[DX]]
func.func @top_k(%x: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %values, %indices = chlo.top_k(%x, k = 2) : tensor<3x5xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %values : tensor<3x2xf32>
}

// The gradient of max pooling, differentiated again (a Hessian-vector product): sourcē is
// ȳ at the element each window chose, found by a running choice over strided slices;
// initē = sum(ȳ); x̄ = 0 (x only chooses).
// CHECK-LABEL: func.func @max_pool_grad_vjp
// CHECK: %[[FIRST:.*]] = stablehlo.slice %{{.*}} [0:3:2, 0:3:2]
// CHECK: %[[SECOND:.*]] = stablehlo.slice %{{.*}} [0:3:2, 1:4:2]
// CHECK: %[[KEEP:.*]] = stablehlo.compare GE, %[[FIRST]], %[[SECOND]], FLOAT
// CHECK: %[[CT:.*]] = stablehlo.pad %arg3, %{{.*}}, low = [1, 0], high = [0, 0], interior = [0, 0]
// CHECK: %[[AT:.*]] = stablehlo.slice %[[CT]] [0:3:2, 0:3:2]
// CHECK: stablehlo.select %{{.*}}, %[[AT]], %{{.*}}
// CHECK: %[[DINIT:.*]] = stablehlo.reduce(%arg3 init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1]
// CHECK: %[[DX:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x4xf32>
// CHECK: return %{{.*}}, %[[DX]], %{{.*}}, %[[DINIT]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>
func.func @max_pool_grad(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>, %init: tensor<f32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.select_and_scatter"(%x, %s, %init) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// A max beside its index (jnp.argmax's reduce, its values used): ȳ goes to the element at
// the chosen index of the iota.
// CHECK-LABEL: func.func @max_with_index_vjp
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<3x5xi32>
// CHECK: %[[R:.*]]:2 = stablehlo.reduce
// CHECK: %[[I:.*]] = stablehlo.broadcast_in_dim %[[R]]#1, dims = [0] : (tensor<3xi32>) -> tensor<3x5xi32>
// CHECK: %[[AT:.*]] = stablehlo.compare EQ, %[[IOTA]], %[[I]]
// CHECK: %[[V:.*]] = stablehlo.broadcast_in_dim %[[R]]#0, dims = [0]
// CHECK: %[[SAME:.*]] = stablehlo.compare EQ, %arg0, %[[V]]
// CHECK: %[[THERE:.*]] = stablehlo.and %[[AT]], %[[SAME]]
// CHECK: %[[YBAR:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0]
// CHECK: %[[DX:.*]] = stablehlo.select %[[THERE]], %[[YBAR]], %{{.*}}
// CHECK: return %{{.*}}, %[[DX]]
func.func @max_with_index(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  %iota = stablehlo.iota dim = 1 : tensor<3x5xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %zero) across dimensions = [1] : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %lt : tensor<i1>
    %first = stablehlo.or %gt, %tie : tensor<i1>
    %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %i = stablehlo.select %first, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %v, %i : tensor<f32>, tensor<i32>
  }
  return %0#0 : tensor<3xf32>
}
