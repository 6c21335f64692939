// tenzr-single-window-strides: along a spatial dim with a single window, a convolution takes
// stride 1 and its high padding drops by what the window leaves over (negative: a crop);
// dims with several windows, and stride-1 dims, stay.
// RUN: tenzr-opt %s --tenzr-single-window-strides | filecheck %s

// Length 3, window 2, stride 2: one window, one element left over.
// CHECK-LABEL: func.func @left_over
// CHECK: stablehlo.convolution(%arg0, %arg1)
// CHECK-SAME: window = {stride = [1], pad = {{\[\[}}0, -1]], lhs_dilate = [1], rhs_dilate = [1]}
// CHECK-SAME: -> tensor<1x1x1xf64>
func.func @left_over(%x: tensor<1x1x3xf64>, %w: tensor<1x1x2xf64>) -> tensor<1x1x1xf64> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [2], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3xf64>, tensor<1x1x2xf64>) -> tensor<1x1x1xf64>
  return %0 : tensor<1x1x1xf64>
}

// Dilated to [x0, 0, x1], padded by one at each end: length 5, window 2, stride 4; only the
// first spatial dim has a single window.
// CHECK-LABEL: func.func @dilated_and_padded
// CHECK: window = {stride = [1, 2], pad = {{\[\[}}1, -2], [0, 0]], lhs_dilate = [2, 1], rhs_dilate = [1, 1]}
// CHECK-SAME: -> tensor<1x1x1x2xf32>
func.func @dilated_and_padded(%x: tensor<1x1x2x4xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [4, 2], pad = [[1, 1], [0, 0]], lhs_dilate = [2, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32>
  return %0 : tensor<1x1x1x2xf32>
}
