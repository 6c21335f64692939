// tenzr-sort-rows: a stable sort of several operands breaks ties by position (an iota
// along its dim: its own, or one added), as IREE ignores is_stable; a rank-1 sort of two
// operands runs as one row of rank 2, keeping its comparator; a rank-1 sort of one operand
// stays.
// RUN: tenzr-opt %s --tenzr-sort-rows | filecheck %s

// CHECK-LABEL: func.func @two_operands
// CHECK: %[[I:.*]] = stablehlo.iota dim = 0 : tensor<5xi32>
// CHECK: %[[A:.*]] = stablehlo.reshape %arg0 : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: %[[B:.*]] = stablehlo.reshape %arg1 : (tensor<5xi32>) -> tensor<1x5xi32>
// CHECK: %[[C:.*]] = stablehlo.reshape %[[I]] : (tensor<5xi32>) -> tensor<1x5xi32>
// CHECK: %[[S:.*]]:3 = "stablehlo.sort"(%[[A]], %[[B]], %[[C]]) <{dimension = 1 : i64, is_stable = false}>
// CHECK: ^bb0(%[[X:[^:]*]]: tensor<f32>, %[[Y:[^:]*]]: tensor<f32>, %{{[^:]*}}: tensor<i32>, %{{[^:]*}}: tensor<i32>, %[[P:[^:]*]]: tensor<i32>, %[[Q:[^:]*]]: tensor<i32>):
// CHECK: %[[LT:.*]] = stablehlo.compare LT, %[[X]], %[[Y]], FLOAT
// CHECK: %[[GT:.*]] = stablehlo.compare LT, %[[Y]], %[[X]], FLOAT
// CHECK: %[[E:.*]] = stablehlo.compare LT, %[[P]], %[[Q]], SIGNED
// CHECK: %[[N:.*]] = stablehlo.not %[[GT]]
// CHECK: %[[T:.*]] = stablehlo.and %[[N]], %[[E]]
// CHECK: %[[R:.*]] = stablehlo.or %[[LT]], %[[T]]
// CHECK: stablehlo.return %[[R]]
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

// An argsort as JAX exports it breaks ties by its own iota: no other is added.
// CHECK-LABEL: func.func @own_iota
// CHECK-COUNT-1: stablehlo.iota
// CHECK-NOT: stablehlo.iota
// CHECK: "stablehlo.sort"({{.*}}) <{dimension = 1 : i64, is_stable = false}>
// CHECK: ^bb0({{.*}}, %[[P:[^:]*]]: tensor<i32>, %[[Q:[^:]*]]: tensor<i32>):
// CHECK: stablehlo.compare LT, %[[P]], %[[Q]], SIGNED
func.func @own_iota(%x: tensor<2x5xf32>) -> tensor<2x5xi32> {
  %i = stablehlo.iota dim = 1 : tensor<2x5xi32>
  %0:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x5xf32>, tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %0#1 : tensor<2x5xi32>
}
