// Reverse mode through loops and conditionals (tenzr's and StableHLO's alike).
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// A counted loop (5 iterations: a counter from the constant 0, compared with the constant
// 5, stepped by 1): the forward stores the carry v at the start of each iteration on a
// 5-slot tape (the counter needs none: it is 0 + k); the adjoint loop runs k = 4 ... 0,
// reads v_k back and sweeps through one iteration (d(sin v · v) = v̄·(v·cos v + sin v)).
// CHECK-LABEL: func.func @fori_vjp
// CHECK: %[[TAPE0:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<5x3xf32>
// CHECK: %[[F:.*]]:4 = stablehlo.while(%[[I:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[V:.*]] = %arg0, %[[T:.*]] = %[[TAPE0]])
// CHECK: stablehlo.constant dense<5> : tensor<i32>
// CHECK: } do {
// CHECK: %[[ROW:.*]] = stablehlo.reshape %[[V]] : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK: %[[STORED:.*]] = stablehlo.dynamic_update_slice %[[T]], %[[ROW]], %[[I]]
// CHECK: "tenzr.sin"(%[[V]])
// CHECK: stablehlo.return %{{.*}}, %{{.*}}, %{{.*}}, %[[STORED]]
// CHECK: %[[A:.*]]:4 = stablehlo.while(%[[M:.*]] = %{{.*}}, %[[CT:.*]] = %arg1, %[[TAPE:.*]] = %[[F]]#3
// CHECK: } do {
// CHECK: %[[LEFT:.*]] = stablehlo.subtract %{{.*}}, %[[M]]
// CHECK: %[[K:.*]] = stablehlo.subtract %[[LEFT]]
// CHECK: %[[VK:.*]] = stablehlo.dynamic_slice %[[TAPE]], %[[K]], %{{.*}}, sizes = [1, 3]
// CHECK: %[[X:.*]] = stablehlo.reshape %[[VK]]
// CHECK: %[[SIN:.*]] = "tenzr.sin"(%[[X]])
// CHECK: %[[A1:.*]] = stablehlo.multiply %[[CT]], %[[X]]
// CHECK: %[[A2:.*]] = stablehlo.multiply %[[CT]], %[[SIN]]
// CHECK: %[[COS:.*]] = stablehlo.cosine %[[X]]
// CHECK: %[[A3:.*]] = stablehlo.multiply %[[A1]], %[[COS]]
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[A2]], %[[A3]]
// CHECK: stablehlo.return %{{.*}}, %[[NEXT]]
// CHECK: return %[[F]]#2, %[[A]]#1
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

// A case: the adjoint is a case on the same index whose branches are the branches' VJPs
// (each recomputes its forward).
// CHECK-LABEL: func.func @select_branch_vjp
// CHECK: %[[Y:.*]] = "tenzr.case"(%arg0, %arg1)
// CHECK: %[[DX:.*]] = "stablehlo.case"(%arg0) ({
// CHECK: %[[E:.*]] = "tenzr.exp"(%arg1)
// CHECK: %[[D0:.*]] = stablehlo.multiply %arg2, %[[E]]
// CHECK: stablehlo.return %[[D0]]
// CHECK: }, {
// CHECK: %[[P:.*]] = stablehlo.multiply %arg2, %arg1
// CHECK: %[[Q:.*]] = stablehlo.multiply %arg2, %arg1
// CHECK: %[[D1:.*]] = stablehlo.add %[[P]], %[[Q]]
// CHECK: stablehlo.return %[[D1]]
// CHECK: return %[[Y]], %[[DX]]
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

// A trip count that depends on data (%n): a first loop counts the iterations N, the stride
// s = max(⌈N / 1024⌉, 1) spreads N carries over the tape's 1024 slots (the iterations
// between them go to slot 1024), and each adjoint step recomputes its carry from the slot
// before it with an inner loop of k - s·⌊k / s⌋ iterations.
// CHECK-LABEL: func.func @while_vjp
// CHECK: %[[COUNTED:.*]]:4 = stablehlo.while
// CHECK: %[[ROUNDED:.*]] = stablehlo.add %[[COUNTED]]#3, %{{.*}}
// CHECK: %[[QUOTIENT:.*]] = stablehlo.divide %[[ROUNDED]], %{{.*}}
// CHECK: %[[STRIDE:.*]] = stablehlo.maximum %[[QUOTIENT]], %{{.*}}
// CHECK: stablehlo.constant dense<0.000000e+00> : tensor<1025x3xf64>
// CHECK: stablehlo.while
// CHECK: stablehlo.constant dense<1024> : tensor<i32>
// CHECK: stablehlo.dynamic_update_slice
// CHECK: stablehlo.while
// CHECK: } do {
// CHECK: %[[SLOT:.*]] = stablehlo.divide
// CHECK: stablehlo.dynamic_slice %{{.*}}, %[[SLOT]]
// CHECK: stablehlo.while
// CHECK: "tenzr.sin"
// CHECK: stablehlo.cosine
func.func @while(%x: tensor<3xf64>, %n: tensor<i32>) -> tensor<3xf64> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "tenzr.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<3xf64>):
    %c = "tenzr.compare"(%i, %n) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<3xf64>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "tenzr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "tenzr.sin"(%v) : (tensor<3xf64>) -> tensor<3xf64>
    %v2 = "tenzr.mul"(%s, %v) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    "tenzr.yield"(%i2, %v2) : (tensor<i32>, tensor<3xf64>) -> ()
  }) : (tensor<i32>, tensor<3xf64>) -> (tensor<i32>, tensor<3xf64>)
  return %r#1 : tensor<3xf64>
}

// tenzr.checkpoint_every = 2 (as tz.lax.scan's checkpoint_every sets it): the forward keeps
// every 2nd carry (3 of the 5, a 4-slot tape whose last slot
// takes the others); the adjoint walks the 3 segments backwards, reruns each from its
// stored carry into a 2-slot buffer (first filled with the first stored carry), and sweeps
// back through it.
// CHECK-LABEL: func.func @segmented_vjp
// CHECK: stablehlo.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK: %[[F:.*]]:4 = stablehlo.while
// CHECK: stablehlo.dynamic_update_slice %{{.*}} : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
// CHECK: %[[FIRST:.*]] = stablehlo.reshape %{{.*}} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: %[[BUFFER:.*]] = stablehlo.broadcast_in_dim %[[FIRST]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: stablehlo.while(%{{.*}}, %{{.*}} = %arg1, %{{.*}} = %[[F]]#3, %{{.*}}, %{{.*}} = %[[BUFFER]])
// CHECK: stablehlo.constant dense<3> : tensor<i32>
// CHECK: } do {
// CHECK: stablehlo.dynamic_slice %{{.*}} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
// CHECK: stablehlo.while
// CHECK: stablehlo.dynamic_update_slice %{{.*}} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
// CHECK: stablehlo.while
// CHECK: stablehlo.dynamic_slice %{{.*}} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
// CHECK: stablehlo.cosine
func.func @segmented(%x: tensor<3xf32>) -> tensor<3xf32> {
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
  }) {tenzr.checkpoint_every = 2 : i64} : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %r#1 : tensor<3xf32>
}

// stablehlo.if (then, else) differentiates as a case whose index is 0 when the predicate holds.
// CHECK-LABEL: func.func @branchy_vjp
// CHECK: %[[Y:.*]] = "stablehlo.if"(%arg0)
// CHECK: %[[NOT:.*]] = stablehlo.not %arg0
// CHECK: %[[INDEX:.*]] = stablehlo.convert %[[NOT]] : (tensor<i1>) -> tensor<i32>
// CHECK: %[[DX:.*]] = "stablehlo.case"(%[[INDEX]]) ({
// CHECK: stablehlo.exponential %arg1
// CHECK: }, {
// CHECK: stablehlo.multiply %arg2, %arg1
// CHECK: return %[[Y]], %[[DX]]
func.func @branchy(%p: tensor<i1>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %r = "stablehlo.if"(%p) ({
    %e = stablehlo.exponential %x : tensor<3xf64>
    stablehlo.return %e : tensor<3xf64>
  }, {
    %s = stablehlo.multiply %x, %x : tensor<3xf64>
    stablehlo.return %s : tensor<3xf64>
  }) : (tensor<i1>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}
