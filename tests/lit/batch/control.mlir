// tenzr-batch through loops and conditionals: the region ops batch their regions (no
// per-element loop around them).
// RUN: tenzr-opt %s --split-input-file --tenzr-batch="func=f in_axes=0 size=4" | filecheck %s
// RUN: tenzr-opt %s --split-input-file --tenzr-batch="func=f in_axes=0,none size=4" | filecheck %s --check-prefix=FIXED

// The counter does not vary with the batch: it stays a tensor<i32> and the loop still
// counts to 5 (its trip count stays known); the carried value takes the batch, and so
// does the value the body captures when it is batched (the second run leaves it unbatched).
// CHECK-LABEL: func.func @f_batch
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[K:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[L:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %[[X]]) : tensor<i32>, tensor<4x3xf32>
// CHECK: "tenzr.compare"(%[[I]], %{{.*}}) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK: } do {
// CHECK: %[[S:.*]] = "tenzr.sin"(%[[V]]) : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: "tenzr.mul"(%[[S]], %[[K]]) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: return %[[L]]#1
// FIXED-LABEL: func.func @f_batch
// FIXED-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[K:.*]]: tensor<3xf32>) -> tensor<4x3xf32>
// FIXED: stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %[[X]]) : tensor<i32>, tensor<4x3xf32>
// FIXED: "tenzr.mul"(%{{.*}}, %[[K]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @f(%x: tensor<3xf32>, %k: tensor<3xf32>) -> tensor<3xf32> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "tenzr.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %n = "tenzr.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
    %c = "tenzr.compare"(%i, %n) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "tenzr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "tenzr.sin"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    %m = "tenzr.mul"(%s, %k) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%i2, %m) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %r#1 : tensor<3xf32>
}

// -----

// A condition that varies with the batch: the loop runs while any element's holds, and an
// element whose condition fails keeps its carries (a select on its own condition).
// CHECK-LABEL: func.func @f_batch
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %[[LIM:.*]]: tensor<4xf32>)
// CHECK: stablehlo.while
// CHECK: "tenzr.compare"(%{{.*}}, %[[LIM]]) {direction = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.or across dimensions = [0]
// CHECK: } do {
// CHECK: %[[M:.*]] = "tenzr.mul"
// CHECK: %[[C:.*]] = "tenzr.compare"
// CHECK: stablehlo.select %[[C]], %[[M]], %{{.*}} : tensor<4xi1>, tensor<4xf32>
// FIXED-LABEL: func.func @f_batch
// FIXED-SAME: (%{{.*}}: tensor<4xf32>, %[[LIM:.*]]: tensor<f32>)
// FIXED: "tenzr.compare"(%{{.*}}, %[[LIM]]) {direction = "lt"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
// FIXED: stablehlo.reduce
func.func @f(%x: tensor<f32>, %limit: tensor<f32>) -> tensor<f32> {
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>):
    %c = "tenzr.compare"(%v, %limit) {direction = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%v: tensor<f32>):
    %two = "tenzr.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %v2 = "tenzr.mul"(%v, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "tenzr.yield"(%v2) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A batched index: every branch runs batched and each element's result is selected by
// its index (out of range: the last branch). An unbatched one (second run): a case on it whose
// branches are the batched branches.
// CHECK-LABEL: func.func @f_batch
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %{{.*}}: tensor<4xi32>)
// CHECK-NOT: stablehlo.case
// CHECK-DAG: "tenzr.exp"(%[[X]]) : (tensor<4x3xf32>)
// CHECK-DAG: "tenzr.neg"(%[[X]]) : (tensor<4x3xf32>)
// CHECK: stablehlo.select
// FIXED-LABEL: func.func @f_batch
// FIXED-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<i32>)
// FIXED: "stablehlo.case"(%[[I]])
// FIXED: "tenzr.exp"(%[[X]]) : (tensor<4x3xf32>)
// FIXED: "tenzr.neg"(%[[X]]) : (tensor<4x3xf32>)
func.func @f(%x: tensor<3xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%a: tensor<3xf32>):
    %e = "tenzr.exp"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%e) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3xf32>):
    %n = "tenzr.neg"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%n) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
