// A module as `jax.jit(f).lower(x).as_text()` prints it: module attributes, a public
// @main with `jax.result_info`, a private helper reached by func.call, and an
// optimization_barrier.
// RUN: tenzr-opt %s --tenzr-grad="func=main mode=value_and_grad" | filecheck %s

// The module and @main are left as they were; @main_value_and_grad is public, without
// the result attributes, with the helper inlined and the barrier kept on the forward
// path (its cotangent passes through it).
// CHECK-LABEL: module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}
// CHECK: func.func public @main(%arg0: tensor<3xf32>) -> (tensor<f32> {jax.result_info = "result"})
// CHECK: func.func private @leaky
// CHECK-LABEL: func.func public @main_value_and_grad(%arg0: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
// CHECK-NOT: call
// CHECK: %[[SIN:.*]] = stablehlo.sine %arg0
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[SIN]]
// CHECK: %[[POS:.*]] = stablehlo.compare GT, %[[B]]
// CHECK: %[[LEAK:.*]] = stablehlo.multiply %[[B]], %[[TENTH:.*]] :
// CHECK: %[[Y:.*]] = stablehlo.select %[[POS]], %[[B]], %[[LEAK]]
// CHECK: %[[VALUE:.*]] = stablehlo.reduce
// CHECK: %[[ONES:.*]] = stablehlo.broadcast_in_dim
// CHECK: %[[DY:.*]] = stablehlo.multiply %[[ONES]], %arg0
// CHECK: %[[DX1:.*]] = stablehlo.multiply %[[ONES]], %[[Y]]
// CHECK: %[[KEEP:.*]] = stablehlo.select %[[POS]], %[[DY]], %{{.*}}
// CHECK: %[[OTHER:.*]] = stablehlo.select %[[POS]], %{{.*}}, %[[DY]]
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[OTHER]], %[[TENTH]]
// CHECK: %[[DB:.*]] = stablehlo.add %[[KEEP]], %[[SCALED]]
// CHECK: %[[COS:.*]] = stablehlo.cosine %arg0
// CHECK: %[[DX2:.*]] = stablehlo.multiply %[[DB]], %[[COS]]
// CHECK: %[[DX:.*]] = stablehlo.add %[[DX1]], %[[DX2]]
// CHECK: return %[[VALUE]], %[[DX]] : tensor<f32>, tensor<3xf32>
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    %1 = stablehlo.optimization_barrier %0 : tensor<3xf32>
    %2 = call @leaky(%1) : (tensor<3xf32>) -> tensor<3xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  func.func private @leaky(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
    %0 = stablehlo.compare GT, %arg0, %cst, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<3xf32>
    %1 = stablehlo.multiply %arg0, %cst_0 : tensor<3xf32>
    %2 = stablehlo.select %0, %arg0, %1 : tensor<3xi1>, tensor<3xf32>
    return %2 : tensor<3xf32>
  }
}
