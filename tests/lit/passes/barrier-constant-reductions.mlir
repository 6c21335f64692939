// tenzr-barrier-constant-reductions: a reduction of a value no argument reaches reads it
// through an optimization barrier (IREE 3.13 reduced a folded elementwise op of a splat
// over one element: the sum of exp(zeros(7)) was 1).
// RUN: tenzr-opt %s --tenzr-barrier-constant-reductions | filecheck %s

// CHECK-LABEL: func.func @sums
// CHECK: %[[E:.*]] = stablehlo.exponential
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[E]] : tensor<7xf32>
// CHECK: stablehlo.reduce(%[[B]] init:
// A splat itself, and a value an argument reaches, are reduced as they are.
// CHECK: stablehlo.reduce(%{{cst.*}} init:
// CHECK: %[[M:.*]] = stablehlo.multiply
// CHECK-NEXT: stablehlo.reduce(%[[M]] init:
// CHECK-NOT: optimization_barrier
func.func @sums(%x: tensor<7xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %zeros = stablehlo.constant dense<0.0> : tensor<7xf32>
  %0 = stablehlo.exponential %zeros : tensor<7xf32>
  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<7xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.reduce(%zeros init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<7xf32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.multiply %0, %x : tensor<7xf32>
  %4 = stablehlo.reduce(%3 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<7xf32>, tensor<f32>) -> tensor<f32>
  return %1, %2, %4 : tensor<f32>, tensor<f32>, tensor<f32>
}

// A loop with a reduction inside starts from its splat constants made anew, their number
// behind a barrier and broadcast (IREE runs a single trip, or the first test, outside the
// loop, with the start values folded; from a bare barrier it carried two loops in one
// buffer); a start an argument reaches, and a loop without a reduction, start as they are.
// CHECK-LABEL: func.func @loops
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %{{.*}} : tensor<f32>
// CHECK: %[[Z:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [] : (tensor<f32>) -> tensor<4xf32>
// CHECK: stablehlo.while(%{{.*}} = %[[Z]], %{{.*}} = %arg0)
// CHECK: stablehlo.while(%{{.*}} = %{{cst.*}})
func.func @loops(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zeros = stablehlo.constant dense<0.0> : tensor<4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0:2 = stablehlo.while(%s = %zeros, %t = %x) : tensor<4xf32>, tensor<4xf32>
  cond {
    %1 = stablehlo.reduce(%s init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.compare LT, %1, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %3 = stablehlo.exponential %s : tensor<4xf32>
    stablehlo.return %3, %t : tensor<4xf32>, tensor<4xf32>
  }
  %4 = stablehlo.while(%s = %zeros) : tensor<4xf32>
  cond {
    %c = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %s : tensor<4xf32>
  }
  return %0#0, %4 : tensor<4xf32>, tensor<4xf32>
}
