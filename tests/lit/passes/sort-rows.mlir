// tenzr-sort-rows: a rank-1 sort of two operands runs as one row of rank 2, keeping its
// comparator; a rank-1 sort of one operand stays.
// RUN: tenzr-opt %s --tenzr-sort-rows | filecheck %s

// CHECK-LABEL: func.func @two_operands
// CHECK: %[[A:.*]] = stablehlo.reshape %arg0 : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: %[[B:.*]] = stablehlo.reshape %arg1 : (tensor<5xi32>) -> tensor<1x5xi32>
// CHECK: %[[S:.*]]:2 = "stablehlo.sort"(%[[A]], %[[B]]) <{dimension = 1 : i64, is_stable = true}>
// CHECK: stablehlo.compare LT
// CHECK: stablehlo.reshape %[[S]]#0 : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK: stablehlo.reshape %[[S]]#1 : (tensor<1x5xi32>) -> tensor<5xi32>
func.func @two_operands(%x: tensor<5xf32>, %i: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %0:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @one_operand
// CHECK-NOT: stablehlo.reshape
// CHECK: "stablehlo.sort"(%arg0) <{dimension = 0 : i64
func.func @one_operand(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// A constant operand is sorted behind an optimization barrier (IREE sorts in place and may
// not write into a constant's global).
// CHECK-LABEL: func.func @constant_operand
// CHECK: %[[C:.*]] = stablehlo.constant
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: "stablehlo.sort"(%[[B]])
func.func @constant_operand() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[3.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = "stablehlo.sort"(%c) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A slice of an argument is sorted as a copy of its own, behind a barrier and reversed
// twice along its widest dim (IREE sorts in place and may not write into an argument); the
// slice itself stays.
// CHECK-LABEL: func.func @slice_of_an_argument
// CHECK: %[[S:.*]] = stablehlo.slice %arg0 [0:2, 0:4]
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[S]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [1]
// CHECK: %[[RR:.*]] = stablehlo.reverse %[[R]], dims = [1]
// CHECK: %[[O:.*]] = "stablehlo.sort"(%[[RR]])
// CHECK: return %[[O]], %[[S]]
func.func @slice_of_an_argument(%x: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = stablehlo.slice %x [0:2, 0:4] : (tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = "stablehlo.sort"(%s) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %s : tensor<2x4xf32>, tensor<2x4xf32>
}

// A sort along a dim of one element is its operands.
// CHECK-LABEL: func.func @rows_of_one
// CHECK-NOT: stablehlo.sort
// CHECK: return %arg0, %arg1
func.func @rows_of_one(%x: tensor<1x4xf32>, %i: tensor<1x4xi32>) -> (tensor<1x4xf32>, tensor<1x4xi32>) {
  %0:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<1x4xf32>, tensor<1x4xi32>) -> (tensor<1x4xf32>, tensor<1x4xi32>)
  return %0#0, %0#1 : tensor<1x4xf32>, tensor<1x4xi32>
}
