// tenzr-im2col: an ungrouped small-window convolution becomes one matmul on channels-last
// im2col patches; a larger window stays a convolution.
// RUN: tenzr-opt %s --tenzr-im2col | filecheck %s

// CHECK-LABEL: func.func @small_window
// CHECK: %[[NHWC:.*]] = stablehlo.transpose %arg0, dims = [0, 2, 3, 1]
// CHECK: stablehlo.slice %[[NHWC]] [0:1, 0:4, 0:4, 0:2]
// CHECK: stablehlo.iota dim = 3 : tensor<1x4x4x4x2xi32>
// CHECK: %[[P:.*]] = stablehlo.reshape %{{.*}} : (tensor<1x4x4x4x2xf32>) -> tensor<16x8xf32>
// CHECK: %[[K:.*]] = stablehlo.transpose %arg1, dims = [2, 3, 1, 0]
// CHECK: %[[KM:.*]] = stablehlo.reshape %[[K]] : (tensor<2x2x2x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[Y:.*]] = stablehlo.dot_general %[[P]], %[[KM]], contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
// CHECK: %[[YR:.*]] = stablehlo.reshape %[[Y]] : (tensor<16x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK: %[[OUT:.*]] = stablehlo.transpose %[[YR]], dims = [0, 3, 1, 2]
// CHECK-NOT: stablehlo.convolution
// CHECK: return %[[OUT]]
func.func @small_window(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// 36 taps: more than IM2COL_MAX_WINDOW (27).
// CHECK-LABEL: func.func @large_window
// CHECK: stablehlo.convolution
func.func @large_window(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x6x6xf32>) -> tensor<1x3x3x3xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<3x2x6x6xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// Lhs dilation (a transposed convolution) stays a convolution.
// CHECK-LABEL: func.func @lhs_dilated
// CHECK: stablehlo.convolution
func.func @lhs_dilated(%x: tensor<1x1x3xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {lhs_dilate = [2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3xf32>, tensor<1x1x2xf32>) -> tensor<1x1x4xf32>
  return %0 : tensor<1x1x4xf32>
}
