// Forward mode through loops and conditionals (tenzr's and StableHLO's alike).
// RUN: tenzr-opt %s --tenzr-jvp | filecheck %s

// A loop carries the tangents of its varying carries beside them (the counter, an
// integer, has none), its body the body's JVP: d(sin v · v) = v̇·(cos v · v + sin v).
// Nothing is stored: forward mode needs no tape.
// CHECK-LABEL: func.func @fori_jvp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[DX:.*]]: tensor<3xf32>)
// CHECK-NOT: dynamic_update_slice
// CHECK: %[[L:.*]]:3 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %[[X]], %[[T:.*]] = %[[DX]])
// CHECK: } do {
// CHECK-DAG: %[[SIN:.*]] = "tenzr.sin"(%[[V]])
// CHECK-DAG: %[[COS:.*]] = stablehlo.cosine %[[V]]
// CHECK-DAG: stablehlo.multiply %[[T]], %[[COS]]
// CHECK-DAG: "tenzr.mul"(%[[SIN]], %[[T]])
// CHECK: stablehlo.return
// CHECK: return %[[L]]#1, %[[L]]#2
func.func @fori(%x: tensor<3xf32>) -> tensor<3xf32> {
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
    %v2 = "tenzr.mul"(%s, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%i2, %v2) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %r#1 : tensor<3xf32>
}

// A carry that starts without a tangent gets one when the body computes it from a varying
// value: w starts from a constant but takes v's.
// CHECK-LABEL: func.func @late_jvp
// CHECK: stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK-SAME: tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
func.func @late(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %w0 = "tenzr.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %r:3 = "tenzr.while"(%zero, %x, %w0) ({
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>, %w: tensor<3xf32>):
    %n = "tenzr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %c = "tenzr.compare"(%i, %n) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>, %w: tensor<3xf32>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "tenzr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %w2 = "tenzr.mul"(%w, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%i2, %v, %w2) : (tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>, tensor<3xf32>)
  return %r#2 : tensor<3xf32>
}

// A case: a case on the same index whose branches give the value and its tangent.
// CHECK-LABEL: func.func @select_branch_jvp
// CHECK-SAME: (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<3xf32>, %[[DX:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]]:2 = "stablehlo.case"(%[[I]]) ({
// CHECK: %[[E:.*]] = "tenzr.exp"(%[[X]])
// CHECK: %[[DE:.*]] = stablehlo.multiply %[[DX]], %[[E]]
// CHECK: stablehlo.return %[[E]], %[[DE]]
// CHECK: }, {
// CHECK: "tenzr.mul"(%[[X]], %[[X]])
// CHECK: stablehlo.return
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @select_branch(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<3xf32>):
    %e = "tenzr.exp"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%e) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%v: tensor<3xf32>):
    %s = "tenzr.mul"(%v, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%s) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// StableHLO's if (as torch-mlir writes conditionals): a case on the negated predicate.
// CHECK-LABEL: func.func @branch_if_jvp
// CHECK: %[[NOT:.*]] = stablehlo.not %arg0
// CHECK: %[[INDEX:.*]] = stablehlo.convert %[[NOT]] : (tensor<i1>) -> tensor<i32>
// CHECK: "stablehlo.case"(%[[INDEX]])
// CHECK: stablehlo.sine
// CHECK: stablehlo.cosine
func.func @branch_if(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %x : tensor<3xf32>
    stablehlo.return %s : tensor<3xf32>
  }, {
    %n = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
