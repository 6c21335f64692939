// tenzr-expand-select-and-scatter: max pooling's gradient as strided slices (one per
// window position), a running choice that follows the select body (GE: the first maximum;
// the padding is never chosen), and pads that put each source element back where its
// window chose. IREE 3.13 cannot compile a select_and_scatter with padding.
// RUN: tenzr-opt %s --tenzr-expand-select-and-scatter | filecheck %s

// CHECK-LABEL: func.func @max_pool_grad
// CHECK-NOT: select_and_scatter
// CHECK: %[[X:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<5x4xf32>
// CHECK: %[[VALID:.*]] = stablehlo.pad %{{.*}}, %{{.*}}, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<4x4xi1>, tensor<i1>) -> tensor<5x4xi1>
// CHECK: %[[E0:.*]] = stablehlo.slice %[[X]] [0:3:2, 0:3:2]
// CHECK: %[[E1:.*]] = stablehlo.slice %[[X]] [0:3:2, 1:4:2]
// CHECK: %[[KEEP:.*]] = stablehlo.compare GE, %[[E0]], %[[E1]], FLOAT
// CHECK: %[[TAKE:.*]] = stablehlo.not %[[KEEP]]
// CHECK-COUNT-2: stablehlo.slice %[[X]]
// CHECK: %[[ROUTED:.*]] = stablehlo.select %{{.*}}, %arg1, %{{.*}} : tensor<2x2xi1>, tensor<2x2xf32>
// CHECK: stablehlo.pad %[[ROUTED]], %{{.*}}, low = [0, 0], high = [2, 1], interior = [1, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<5x4xf32>
// CHECK: %[[CROPPED:.*]] = stablehlo.slice %{{.*}} [1:5, 0:4] : (tensor<5x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[INIT:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
// CHECK: %[[OUT:.*]] = stablehlo.add %[[CROPPED]], %[[INIT]]
// CHECK: return %[[OUT]]
func.func @max_pool_grad(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %z) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
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
