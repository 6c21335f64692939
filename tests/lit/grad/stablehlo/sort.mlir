// stablehlo.sort with a comparator and several operands, and chlo.top_k.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

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

// lax.sort((k, v), num_keys=1) returning v: the values' ȳ goes back through the keys'
// permutation; the keys have no cotangent (not used), so no scatter is built for them.
// CHECK-LABEL: func.func @sort_pairs_vjp
// CHECK: %[[SORTED:.*]]:3 = "stablehlo.sort"(%arg0, %arg1, %{{.*}})
// CHECK: %[[P:.*]] = stablehlo.reshape %[[SORTED]]#2 : (tensor<4xi32>) -> tensor<4x1xi32>
// CHECK: %[[DV:.*]] = "stablehlo.scatter"(%{{.*}}, %[[P]], %arg2)
// CHECK-NOT: "stablehlo.scatter"
// CHECK: %[[DK:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %{{.*}}, %[[DK]], %[[DV]]
func.func @sort_pairs(%k: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}
