// tenzr-copy-written-constants: a constant that a sort, scatter or dynamic_update_slice
// updates is read through an optimization barrier (IREE 3.13 updates it in place, and may
// not write a constant's global); other operands, and constants other ops read, stay.
// RUN: tenzr-opt %s --tenzr-copy-written-constants | filecheck %s

// CHECK-LABEL: func.func @sorted
// CHECK: %[[C:.*]] = stablehlo.constant
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: "stablehlo.sort"(%[[B]])
func.func @sorted() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[3.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = "stablehlo.sort"(%c) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @updated_twice
// CHECK-DAG: %[[C:.*]] = stablehlo.constant dense<1.000000e+00>
// CHECK-DAG: %[[Z:.*]] = stablehlo.constant dense<0>
// CHECK: %[[B1:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: stablehlo.dynamic_update_slice %[[B1]], %arg0, %arg1, %[[Z]]
// CHECK: %[[B2:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: stablehlo.dynamic_update_slice %[[B2]], %arg0, %[[Z]], %arg1
func.func @updated_twice(%u: tensor<2x2xf32>, %i: tensor<i32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<4x4xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %a = stablehlo.dynamic_update_slice %c, %u, %i, %z : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
  %b = stablehlo.dynamic_update_slice %c, %u, %z, %i : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @scattered_into
// CHECK: %[[C:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<3x2xf32>
// CHECK: %[[I:.*]] = stablehlo.constant dense<{{\[\[}}0], [2]]>
// CHECK: %[[U:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<2x2xf32>
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: "stablehlo.scatter"(%[[B]], %[[I]], %[[U]])
func.func @scattered_into() -> tensor<3x2xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<3x2xf32>
  %i = stablehlo.constant dense<[[0], [2]]> : tensor<2x1xi32>
  %u = stablehlo.constant dense<2.0> : tensor<2x2xf32>
  %0 = "stablehlo.scatter"(%c, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<3x2xf32>, tensor<2x1xi32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// A sort of an iota (no literal constant) and a dynamic_update_slice in a loop body of a
// constant from outside the loop stay as they are (see the pass's documentation).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: optimization_barrier
// CHECK: return
func.func @left_alone(%u: tensor<1x2xf32>, %n: tensor<i32>) -> (tensor<3xi32>, tensor<4x2xf32>) {
  %iota = stablehlo.iota dim = 0 : tensor<3xi32>
  %s = "stablehlo.sort"(%iota) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<3xi32>) -> tensor<3xi32>
  %zeros = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %zeros) : tensor<i32>, tensor<4x2xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %put = stablehlo.dynamic_update_slice %zeros, %u, %i, %c0 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x2xf32>
    %sum = stablehlo.add %acc, %put : tensor<4x2xf32>
    %next = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %next, %sum : tensor<i32>, tensor<4x2xf32>
  }
  return %s, %r#1 : tensor<3xi32>, tensor<4x2xf32>
}
