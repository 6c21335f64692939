// tenzr-barrier-loop-results: what a loop returns is read through one optimization barrier
// (IREE 3.13's stream partitioner put a dispatch feeding a loop and one reading its result
// into one partition, a cycle: the gradient of a 17-step scan did not compile).
// RUN: tenzr-opt %s --tenzr-barrier-loop-results | filecheck %s

// CHECK-LABEL: func.func @reads
// CHECK: %[[L:.*]]:3 = stablehlo.while
// CHECK: %[[B:.*]]:2 = stablehlo.optimization_barrier %[[L]]#1, %[[L]]#2 : tensor<f32>, tensor<f32>
// CHECK: %[[S:.*]] = stablehlo.add %[[B]]#0, %[[B]]#1
// CHECK: stablehlo.multiply %[[S]], %[[B]]#0
// A loop whose results nothing reads has no barrier.
// CHECK: stablehlo.while
// CHECK-NOT: optimization_barrier
// CHECK: return
func.func @reads(%x: tensor<f32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %0:3 = stablehlo.while(%i = %zero, %a = %x, %b = %x) : tensor<i32>, tensor<f32>, tensor<f32>
  cond {
    %1 = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.add %i, %one : tensor<i32>
    %3 = stablehlo.tanh %a : tensor<f32>
    %4 = stablehlo.multiply %b, %x : tensor<f32>
    stablehlo.return %2, %3, %4 : tensor<i32>, tensor<f32>, tensor<f32>
  }
  %5 = stablehlo.add %0#1, %0#2 : tensor<f32>
  %6 = stablehlo.multiply %5, %0#1 : tensor<f32>
  %7 = stablehlo.while(%i = %zero) : tensor<i32>
  cond {
    %8 = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %8 : tensor<i1>
  } do {
    %9 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %9 : tensor<i32>
  }
  return %6 : tensor<f32>
}
