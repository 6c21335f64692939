// reduce_window (pooling, cumulative sums and products) and select_and_scatter (the
// gradient of max pooling) as JAX exports them.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// jnp.cumsum: a window sum's transpose pads ȳ by the window's reach and sums windows
// again (here a reverse cumulative sum).
// CHECK-LABEL: func.func @cumsum_vjp
// CHECK: %[[P:.*]] = stablehlo.pad %arg1, %{{.*}}, low = [0, 0], high = [0, 3], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
// CHECK: %[[DX:.*]] = "stablehlo.reduce_window"(%[[P]], %{{.*}})
// CHECK-SAME: window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]]
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %z) <{padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// 2x2 max pooling: as JAX, ȳ goes to each window's first maximum by a select_and_scatter
// (tenzr-expand-select-and-scatter later writes it as slices IREE compiles).
// CHECK-LABEL: func.func @max_pool_vjp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DX:.*]] = "stablehlo.select_and_scatter"(%arg0, %arg1, %[[ZERO]])
// CHECK-SAME: window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>
// CHECK: stablehlo.compare GE
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]]
func.func @max_pool(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// jnp.cumprod, exact with zeros: windows without zeros give ȳ·y/x, a window with one
// zero gives that zero the product of the rest.
// CHECK-LABEL: func.func @cumprod_vjp
// CHECK: %[[ISZERO:.*]] = stablehlo.compare EQ, %arg0, %{{.*}}, FLOAT
// CHECK: %[[NONZERO:.*]] = stablehlo.select %[[ISZERO]], %{{.*}}, %arg0
// CHECK: "stablehlo.reduce_window"(%[[NONZERO]]
// CHECK: stablehlo.multiply
// CHECK: %[[ZEROS:.*]] = stablehlo.convert %[[ISZERO]]
// CHECK: "stablehlo.reduce_window"(%[[ZEROS]]
// CHECK: %[[ONE_ZERO:.*]] = "stablehlo.reduce_window"
// CHECK: %[[NO_ZERO:.*]] = "stablehlo.reduce_window"
// CHECK: %[[DIVIDED:.*]] = stablehlo.divide %[[NO_ZERO]], %[[NONZERO]]
// CHECK: %[[DX:.*]] = stablehlo.select %[[ISZERO]], %[[ONE_ZERO]], %[[DIVIDED]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @cumprod(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %one) <{padding = dense<[[2, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// The gradient of max pooling, differentiated again (a Hessian-vector product): sourcē is
// ȳ at the element each window chose, found by a running choice over strided slices;
// initē = sum(ȳ); x̄ = 0 (x only chooses).
// CHECK-LABEL: func.func @max_pool_grad_vjp
// CHECK: %[[FIRST:.*]] = stablehlo.slice %{{.*}} [0:3:2, 0:3:2]
// CHECK: %[[SECOND:.*]] = stablehlo.slice %{{.*}} [0:3:2, 1:4:2]
// CHECK: %[[KEEP:.*]] = stablehlo.compare GE, %[[FIRST]], %[[SECOND]], FLOAT
// CHECK: %[[CT:.*]] = stablehlo.pad %arg3, %{{.*}}, low = [1, 0], high = [0, 0], interior = [0, 0]
// CHECK: %[[AT:.*]] = stablehlo.slice %[[CT]] [0:3:2, 0:3:2]
// CHECK: stablehlo.select %{{.*}}, %[[AT]], %{{.*}}
// CHECK: %[[DINIT:.*]] = stablehlo.reduce(%arg3 init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1]
// CHECK: %[[DX:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x4xf32>
// CHECK: return %{{.*}}, %[[DX]], %{{.*}}, %[[DINIT]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>
func.func @max_pool_grad(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>, %init: tensor<f32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.select_and_scatter"(%x, %s, %init) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
