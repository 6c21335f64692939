// tenzr-split-grouped-convolutions: two groups of two channels become two convolutions,
// joined along the output features; a depthwise convolution stays whole.
// RUN: tenzr-opt %s --tenzr-split-grouped-convolutions | filecheck %s

// CHECK-LABEL: func.func @two_groups
// CHECK: %[[X0:.*]] = stablehlo.slice %arg0 [0:1, 0:2, 0:6, 0:6]
// CHECK: %[[W0:.*]] = stablehlo.slice %arg1 [0:3, 0:2, 0:6, 0:6]
// CHECK: %[[Y0:.*]] = stablehlo.convolution(%[[X0]], %[[W0]]) {{.*}} feature_group_count = 1
// CHECK: %[[X1:.*]] = stablehlo.slice %arg0 [0:1, 2:4, 0:6, 0:6]
// CHECK: %[[W1:.*]] = stablehlo.slice %arg1 [3:6, 0:2, 0:6, 0:6]
// CHECK: %[[Y1:.*]] = stablehlo.convolution(%[[X1]], %[[W1]]) {{.*}} feature_group_count = 1
// CHECK: %[[Y:.*]] = stablehlo.concatenate %[[Y0]], %[[Y1]], dim = 1
// CHECK: return %[[Y]]
func.func @two_groups(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x6x6xf32>) -> tensor<1x6x1x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<6x2x6x6xf32>) -> tensor<1x6x1x1xf32>
  return %0 : tensor<1x6x1x1xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}} feature_group_count = 3
// CHECK-NOT: stablehlo.concatenate
func.func @depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x6x6xf32>) -> tensor<1x3x1x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x3x6x6xf32>, tensor<3x1x6x6xf32>) -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}
