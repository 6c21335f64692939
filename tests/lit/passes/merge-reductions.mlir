// tenzr-merge-reductions: independent reductions of operands of one type over the same dims
// become one reduce of several operands, where the last one was; ops reading an earlier
// one's result move after it. A reduction reading another's result stays apart, as do
// reductions of other types or dims, reductions of constants and reductions inside loop
// bodies (IREE 3.13 miscompiles a merged reduce of what it finds constant), and reductions a
// transpose or pad reads, directly or through elementwise ops (IREE 3.13 fails to compile
// such a merged reduce).
// RUN: tenzr-opt %s --tenzr-merge-reductions | filecheck %s

// CHECK-LABEL: func.func @primal_and_tangent
// CHECK: %[[H:.*]] = stablehlo.sine %arg0
// CHECK: %[[S:.*]] = stablehlo.sine %[[H]]
// CHECK: %[[HT:.*]] = stablehlo.multiply %[[S]], %arg1
// CHECK: %[[R:.*]]:2 = stablehlo.reduce(%[[H]] init: %{{.*}}), (%[[HT]] init: %{{.*}}) across dimensions = [1]
// CHECK: stablehlo.add
// CHECK: stablehlo.maximum
// CHECK: %[[D:.*]] = stablehlo.multiply %[[R]]#0, %[[R]]#0 : tensor<4xf32>
// CHECK: return %[[D]], %[[R]]#1
func.func @primal_and_tangent(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %h = stablehlo.sine %x : tensor<4x8xf32>
  %sum = stablehlo.reduce(%h init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %sq = stablehlo.multiply %sum, %sum : tensor<4xf32>
  %s = stablehlo.sine %h : tensor<4x8xf32>
  %ht = stablehlo.multiply %s, %t : tensor<4x8xf32>
  %max = stablehlo.reduce(%ht init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %sq, %max : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-2: applies stablehlo.add across dimensions = [1]
func.func @dependent(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %mean = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %m = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = stablehlo.subtract %x, %m : tensor<4x8xf32>
  %var = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %var : tensor<4xf32>
}

// CHECK-LABEL: func.func @unlike
// CHECK-COUNT-3: applies stablehlo.add across dimensions
func.func @unlike(%x: tensor<4x8xf32>, %y: tensor<4x8xf64>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf64>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zero64 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %cols = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %wide = stablehlo.reduce(%y init: %zero64) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf64>, tensor<f64>) -> tensor<4xf64>
  return %rows, %cols, %wide : tensor<4xf32>, tensor<8xf32>, tensor<4xf64>
}

// A row sum read only by an optimization barrier (tenzr-tile-heavy-results') stays apart.
// CHECK-LABEL: func.func @barrier
// CHECK-COUNT-2: applies stablehlo.add across dimensions = [1]
func.func @barrier(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %loss = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %rows = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %b:2 = stablehlo.optimization_barrier %y, %rows : tensor<4x8xf32>, tensor<4xf32>
  return %loss, %b#0 : tensor<4xf32>, tensor<4x8xf32>
}

// At most four reductions share one reduce: of five, four merge and one stays alone.
// CHECK-LABEL: func.func @five
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}), (%arg1 init: %{{.*}}), (%arg2 init: %{{.*}}), (%arg3 init: %{{.*}}) across dimensions = [1]
// CHECK: stablehlo.reduce(%arg4 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
func.func @five(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>, %e: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reduce(%b init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.reduce(%c init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Past four, the next reductions of the same kind make another group: of six, four and two
// merge. Groups of two kinds interleaved (rows of %a..%f, columns of %a and %b) all merge.
// CHECK-LABEL: func.func @six_and_interleaved
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}), (%arg1 init: %{{.*}}) across dimensions = [0]
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}), (%arg1 init: %{{.*}}), (%arg2 init: %{{.*}}), (%arg3 init: %{{.*}}) across dimensions = [1]
// CHECK: stablehlo.reduce(%arg4 init: %{{.*}}), (%arg5 init: %{{.*}}) across dimensions = [1]
// CHECK-NOT: stablehlo.reduce
func.func @six_and_interleaved(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>, %d: tensor<4x8xf32>, %e: tensor<4x8xf32>, %f: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %c0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.reduce(%b init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.reduce(%c init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %c1 = stablehlo.reduce(%b init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = stablehlo.reduce(%f init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %c0, %c1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>
}

// Not inside a loop's body (IREE 3.13 folds invariant carries there into constants, whose
// merged reduce it miscompiles).
// CHECK-LABEL: func.func @in_a_loop
// CHECK: stablehlo.while
// CHECK: } do {
// CHECK-COUNT-2: applies stablehlo.add across dimensions = [0]
func.func @in_a_loop(%x: tensor<8xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r:2 = stablehlo.while(%v = %x, %s = %zero) : tensor<8xf32>, tensor<f32>
  cond {
    %c = stablehlo.compare LT, %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a = stablehlo.sine %v : tensor<8xf32>
    %sa = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %b = stablehlo.sine %a : tensor<8xf32>
    %sb = stablehlo.reduce(%b init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    %t = stablehlo.add %sa, %sb : tensor<f32>
    stablehlo.return %b, %t : tensor<8xf32>, tensor<f32>
  }
  return %r#1 : tensor<f32>
}

// CHECK-LABEL: func.func @of_a_constant
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [1]
func.func @of_a_constant() -> (tensor<2xf32>, tensor<2xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]]> : tensor<2x3xf32>
  %e = stablehlo.exponential %c : tensor<2x3xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %max = stablehlo.reduce(%e init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %sum, %max : tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @read_by_transposes
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
func.func @read_by_transposes(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %a = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %b = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %e = stablehlo.exponential %b : tensor<2x4xf32>
  %at = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %et = stablehlo.transpose %e, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  return %at, %et : tensor<4x2xf32>, tensor<4x2xf32>
}

// CHECK-LABEL: func.func @read_by_a_pad
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
func.func @read_by_a_pad(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<2x4xf32>, tensor<2x7xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %a = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %b = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %p = stablehlo.pad %b, %zero, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = stablehlo.slice %p [0:2, 0:7] : (tensor<2x8xf32>) -> tensor<2x7xf32>
  return %a, %s : tensor<2x4xf32>, tensor<2x7xf32>
}
