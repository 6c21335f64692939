// The adjoints, with the convolution forms the lowering pipeline then picks for IREE.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp --tenzr-split-grouped-convolutions --tenzr-im2col | filecheck %s

// dot_generals with the right contracting dims, no materialized transposes.
// CHECK-LABEL: func.func @matmul_vjp
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[YBAR:.*]]: tensor<3x5xf32>)
// CHECK-NOT: stablehlo.transpose
// CHECK: %[[DA:.*]] = stablehlo.dot_general %[[YBAR]], %[[B]], contracting_dims = [1] x [1] : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
// CHECK: %[[DB:.*]] = stablehlo.dot_general %[[A]], %[[YBAR]], contracting_dims = [0] x [0] : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// A rank-2 weight's cotangent contracts the batch and row dims at once.
// CHECK-LABEL: func.func @matmul_batched_rhs_2d_vjp
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[YBAR:.*]]: tensor<2x3x5xf32>)
// CHECK: stablehlo.dot_general %[[YBAR]], %[[B]], contracting_dims = [2] x [1] : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
// CHECK: stablehlo.dot_general %[[A]], %[[YBAR]], contracting_dims = [0, 1] x [0, 1] : (tensor<2x3x4xf32>, tensor<2x3x5xf32>) -> tensor<4x5xf32>
func.func @matmul_batched_rhs_2d(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @matmul_batched_vjp
// CHECK: stablehlo.dot_general %arg2, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2]
// CHECK: stablehlo.dot_general %arg0, %arg2, batching_dims = [0] x [0], contracting_dims = [1] x [1]
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// Input cotangent: ybar lhs-dilated by the strides against the flipped kernel, whose
// groups are regrouped [O, I] -> [O/G, G*I]. Kernel cotangent: the input (groups moved
// into the feature dim) against ybar, with the batch contracted. The lowering pipeline
// splits each grouped convolution into one per group, and turns those without lhs
// dilation into matmuls on im2col patches.
// CHECK-LABEL: func.func @conv2d_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x6x5xf32>, %[[W:.*]]: tensor<6x2x3x2xf32>, %[[YBAR:.*]]: tensor<2x6x3x5xf32>)
// CHECK: %[[W1:.*]] = stablehlo.reshape %[[W]] : (tensor<6x2x3x2xf32>) -> tensor<2x3x2x3x2xf32>
// CHECK: %[[W2:.*]] = stablehlo.transpose %[[W1]], dims = [1, 0, 2, 3, 4]
// CHECK: %[[W3:.*]] = stablehlo.reshape %[[W2]] : (tensor<3x2x2x3x2xf32>) -> tensor<3x4x3x2xf32>
// CHECK: %[[FLIP:.*]] = stablehlo.reverse %[[W3]], dims = [2, 3]
// CHECK: %[[G0:.*]] = stablehlo.slice %[[YBAR]] [0:2, 0:3, 0:3, 0:5]
// CHECK: %[[K0:.*]] = stablehlo.slice %[[FLIP]] [0:3, 0:2, 0:3, 0:2]
// CHECK: stablehlo.convolution(%[[G0]], %[[K0]]) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = {{\[\[}}1, 2], [1, 0]], lhs_dilate = [2, 1], rhs_dilate = [1, 1]}
// CHECK: %[[DX:.*]] = stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 1 : (tensor<2x2x6x5xf32>, tensor<2x2x6x5xf32>) -> tensor<2x4x6x5xf32>
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<12x30xf32>, tensor<30x3xf32>) -> tensor<12x3xf32>
// CHECK: %[[DW:.*]] = stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 0 : (tensor<3x2x3x2xf32>, tensor<3x2x3x2xf32>) -> tensor<6x2x3x2xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @conv2d(%x: tensor<2x4x6x5xf32>, %w: tensor<6x2x3x2xf32>) -> tensor<2x6x3x5xf32> {
  %0 = "tenzr.convolution"(%x, %w) {window_strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 1>, feature_group_count = 2} : (tensor<2x4x6x5xf32>, tensor<6x2x3x2xf32>) -> tensor<2x6x3x5xf32>
  return %0 : tensor<2x6x3x5xf32>
}

// Without groups or dilation and with a small window, both cotangents are matmuls: the
// input's through the flipped kernel on ybar's im2col patches, the kernel's as the input's
// patches contracted with ybar, one partial sum per example (a batch of one needs none).
// CHECK-LABEL: func.func @conv1d_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x7xf32>, %[[W:.*]]: tensor<3x2x3xf32>, %[[YBAR:.*]]: tensor<1x3x5xf32>)
// CHECK-NOT: stablehlo.convolution
// CHECK: %[[FLIP:.*]] = stablehlo.reverse %[[W]], dims = [2]
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<7x9xf32>, tensor<9x2xf32>) -> tensor<7x2xf32>
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [0, 2, 1]
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [0] x [0] : (tensor<5x6xf32>, tensor<5x3xf32>) -> tensor<6x3xf32>
// CHECK: %[[DW:.*]] = stablehlo.transpose %{{.*}}, dims = [2, 1, 0] : (tensor<3x2x3xf32>) -> tensor<3x2x3xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[DW]]
func.func @conv1d(%x: tensor<1x2x7xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x5xf32> {
  %0 = "tenzr.convolution"(%x, %w) : (tensor<1x2x7xf32>, tensor<3x2x3xf32>) -> tensor<1x3x5xf32>
  return %0 : tensor<1x3x5xf32>
}

// A strided convolution's input cotangent multiplies no zeros: ybar (channels last) times the
// kernel in one matmul, then col2im by stride phase: each phase of the input sums shifted
// slices of that product, and a select on the phase number (from iotas) weaves the phases
// into place. Here phase (1, 1) collects the four corner taps.
// CHECK-LABEL: func.func @conv2d_strided_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5x5xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[YBAR:.*]]: tensor<2x4x3x3xf32>)
// CHECK-NOT: stablehlo.convolution
// CHECK: %[[Y:.*]] = stablehlo.transpose %[[YBAR]], dims = [0, 2, 3, 1]
// CHECK: %[[YPAD:.*]] = stablehlo.pad %[[Y]], %{{.*}}, low = [0, 0, 0, 0], high = [0, 1, 1, 0]
// CHECK: %[[COL:.*]] = stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<32x4xf32>, tensor<4x27xf32>) -> tensor<32x27xf32>
// CHECK: %[[COL6:.*]] = stablehlo.reshape %[[COL]] : (tensor<32x27xf32>) -> tensor<2x4x4x3x3x3xf32>
// CHECK: %[[T00:.*]] = stablehlo.slice %[[COL6]] [0:2, 1:4, 1:4, 0:1, 0:1, 0:3]
// CHECK: %[[PHASE:.*]] = stablehlo.add %{{.*}}, %{{.*}} : tensor<2x3x2x3x2x3xi32>
// CHECK: stablehlo.compare EQ, %[[PHASE]], %{{.*}}, SIGNED
// CHECK: %[[WOVEN:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x3x2x3x2x3xf32>) -> tensor<2x6x6x3xf32>
// CHECK: %[[CROP:.*]] = stablehlo.slice %[[WOVEN]] [0:2, 0:5, 0:5, 0:3]
// CHECK: %[[DX:.*]] = stablehlo.transpose %[[CROP]], dims = [0, 3, 1, 2] : (tensor<2x5x5x3xf32>) -> tensor<2x3x5x5xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @conv2d_strided(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %0 = "tenzr.convolution"(%x, %w) {window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>} : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// With a batch, the kernel cotangent is one partial sum per example (a batched matmul over
// each example's output positions), then summed: IREE runs one long contraction with a
// tiny result on a single thread.
// CHECK-LABEL: func.func @conv2d_batch_vjp
// CHECK: %[[PARTIAL:.*]] = stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<4x9x18xf32>, tensor<4x9x5xf32>) -> tensor<4x18x5xf32>
// CHECK: stablehlo.reduce(%[[PARTIAL]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<4x18x5xf32>, tensor<f32>) -> tensor<18x5xf32>
func.func @conv2d_batch(%x: tensor<4x2x5x5xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<4x5x3x3xf32> {
  %0 = "tenzr.convolution"(%x, %w) {window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>} : (tensor<4x2x5x5xf32>, tensor<5x2x3x3xf32>) -> tensor<4x5x3x3xf32>
  return %0 : tensor<4x5x3x3xf32>
}
