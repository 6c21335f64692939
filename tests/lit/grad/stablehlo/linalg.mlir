// dot_general and convolution with JAX's dimension numbers, groups, strides and padding.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// dot_general, contracting a's 1 with b's 0: ā = ȳ·bᵀ, b̄ = (ȳᵀ·a)ᵀ, each one dot_general.
// CHECK-LABEL: func.func @matmul_vjp
// CHECK: %[[DA:.*]] = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK: %[[T:.*]] = stablehlo.dot_general %arg2, %arg0, contracting_dims = [0] x [0] : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[DB:.*]] = stablehlo.transpose %[[T]], dims = [1, 0]
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Batching dimensions stay batching dimensions in both cotangents.
// CHECK-LABEL: func.func @batched_vjp
// CHECK: %[[DA:.*]] = stablehlo.dot_general %arg2, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x2x4xf32>, tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[T:.*]] = stablehlo.dot_general %arg2, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<2x2x4xf32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[DB:.*]] = stablehlo.transpose %[[T]], dims = [0, 2, 1]
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @batched(%a: tensor<2x2x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x2x3xf32>, tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// JAX's NHWC/HWIO convolution is viewed channels-first (NCHW/OIHW transposes) and gets
// the tenzr convolution's rule: x̄ convolves ȳ with the flipped kernel (input and output
// features swapped), w̄ contracts ȳ with the input's 3x3 patches; both are transposed
// back to JAX's layouts.
// CHECK-LABEL: func.func @conv_nhwc_vjp
// CHECK: %[[W:.*]] = stablehlo.transpose %arg1, dims = [3, 2, 0, 1] : (tensor<3x3x2x4xf32>) -> tensor<4x2x3x3xf32>
// CHECK: %[[CT:.*]] = stablehlo.transpose %arg2, dims = [0, 3, 1, 2] : (tensor<1x5x5x4xf32>) -> tensor<1x4x5x5xf32>
// CHECK: %[[FLIPPED:.*]] = stablehlo.reverse %[[W]], dims = [2, 3]
// CHECK: %[[DX:.*]] = stablehlo.convolution(%[[CT]], %[[FLIPPED]]) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = {{\[\[}}1, 1], [1, 1]]
// CHECK: %[[PATCHES:.*]] = stablehlo.reshape %{{.*}} : (tensor<1x5x5x9x2xf32>) -> tensor<25x18xf32>
// CHECK: %[[DW:.*]] = stablehlo.dot_general %[[PATCHES]], %{{.*}}, contracting_dims = [0] x [0] : (tensor<25x18xf32>, tensor<25x4xf32>) -> tensor<18x4xf32>
// CHECK: %[[DXT:.*]] = stablehlo.transpose %[[DX]], dims = [0, 2, 3, 1] : (tensor<1x2x5x5xf32>) -> tensor<1x5x5x2xf32>
// CHECK: %[[DWT:.*]] = stablehlo.transpose %{{.*}}, dims = [2, 3, 1, 0] : (tensor<4x2x3x3xf32>) -> tensor<3x3x2x4xf32>
// CHECK: return %{{.*}}, %[[DXT]], %[[DWT]]
func.func @conv_nhwc(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x5x5x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}

// Two feature groups, stride 2: x̄ is a grouped convolution of ȳ dilated by the stride
// (lhs_dilate) with each group's kernel flipped and transposed; w̄ convolves each group's
// input with ȳ as the kernel, dilated by the stride (rhs_dilate).
// CHECK-LABEL: func.func @conv_grouped_vjp
// CHECK: %[[G:.*]] = stablehlo.reshape %arg1 : (tensor<4x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
// CHECK: %[[FLIPPED:.*]] = stablehlo.reverse %{{.*}}, dims = [2, 3] : tensor<2x4x3x3xf32>
// CHECK: %[[DX:.*]] = stablehlo.convolution(%arg2, %[[FLIPPED]]) {{.*}} window = {stride = [1, 1], pad = {{\[\[}}2, 3], [2, 3]], lhs_dilate = [2, 2], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
// CHECK: %[[DW:.*]] = stablehlo.convolution(%{{.*}}, %arg2) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = {{\[\[}}0, -1], [0, -1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
// CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @conv_grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}
