// tenzr-grad's modes, options and signatures, activity analysis, calls and custom VJPs.
// RUN: tenzr-opt %s --tenzr-grad="func=f" | filecheck %s --check-prefix=GRAD
// RUN: tenzr-opt %s --tenzr-grad="func=f wrt=2 mode=value_and_grad" | filecheck %s --check-prefix=VAG
// RUN: tenzr-opt %s --pass-pipeline="builtin.module(tenzr-grad{func=f mode=vjp})" | filecheck %s --check-prefix=VJP
// RUN: tenzr-opt %s --tenzr-grad="func=uses_custom" | filecheck %s --check-prefix=CUSTOM

// The default wrt is every float argument; the i32 one is skipped. The forward value of
// the sum is not returned in grad mode, so it is removed; exp(y) stays for y's adjoint.
// GRAD-LABEL: func.func @f_grad
// GRAD-SAME: (%[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[Y:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// GRAD-DAG: %[[SEED:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// GRAD-DAG: %[[E:.*]] = "tenzr.exp"(%[[Y]])
// GRAD-NOT: "tenzr.reduce_sum"
// GRAD: return

// With wrt=2 the x path is inactive: no adjoint of x*x is built.
// VAG-LABEL: func.func @f_value_and_grad
// VAG-SAME: -> (tensor<f32>, tensor<3xf32>)
// VAG: %[[E:.*]] = "tenzr.exp"
// VAG: %[[V:.*]] = "tenzr.reduce_sum"
// VAG-NOT: stablehlo.multiply %{{.*}}, %arg0
// VAG: %[[DY:.*]] = stablehlo.multiply %{{.*}}, %[[E]]
// VAG: return %[[V]], %[[DY]]

// VJP-LABEL: func.func @f_vjp
// VJP-SAME: (%{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xi32>, %{{.*}}: tensor<3xf32>, %[[YBAR:.*]]: tensor<f32>)
// VJP-SAME: -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>)
// VJP: stablehlo.broadcast_in_dim %[[YBAR]]

func.func @f(%x: tensor<3xf32>, %n: tensor<3xi32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.exp"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "tenzr.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "tenzr.reduce_sum"(%2) : (tensor<3xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// A call to a function with tenzr.custom_vjp stays a call forward and calls @bwd backward;
// calls to ordinary functions are inlined.
// CUSTOM-LABEL: func.func @uses_custom_grad
// CUSTOM: %[[G:.*]] = call @g(%arg0)
// CUSTOM-NOT: call @helper
// CUSTOM: %[[COS:.*]] = stablehlo.cosine %[[G]]
// CUSTOM: %[[CT:.*]] = stablehlo.multiply %{{.*}}, %[[COS]]
// CUSTOM: call @g_bwd(%arg0, %[[CT]]) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> attributes {tenzr.custom_vjp = @g_bwd} {
  %0 = "tenzr.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @g_bwd(%x: tensor<2xf32>, %ct: tensor<2xf32>) -> tensor<2xf32> {
  return %ct : tensor<2xf32>
}
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @uses_custom(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = call @helper(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "tenzr.reduce_sum"(%1) : (tensor<2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
