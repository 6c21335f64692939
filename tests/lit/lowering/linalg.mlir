// The lowering, with the convolution and reduction forms the lowering pipeline then picks.
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo --tenzr-split-grouped-convolutions --tenzr-im2col --tenzr-split-reductions | filecheck %s

// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK: stablehlo.dot_general %[[A]], %[[B]], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matmul_batched
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1]
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// A rank-2 right operand needs no broadcast: the batch dims stay free dims of the lhs.
// CHECK-LABEL: func.func @matmul_rhs_2d
// CHECK-NOT: broadcast_in_dim
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [2] x [0] : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
func.func @matmul_rhs_2d(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @matmul_broadcast_batch
// CHECK-SAME: (%[[A:.*]]: tensor<2x1x3x4xf32>, %[[B:.*]]: tensor<5x4x2xf32>)
// CHECK-DAG: %[[BA:.*]] = stablehlo.broadcast_in_dim %[[A]], dims = [0, 1, 2, 3] : (tensor<2x1x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-DAG: %[[BB:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [1, 2, 3] : (tensor<5x4x2xf32>) -> tensor<2x5x4x2xf32>
// CHECK: stablehlo.dot_general %[[BA]], %[[BB]], batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2]
func.func @matmul_broadcast_batch(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32> {
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>
  return %0 : tensor<2x5x3x2xf32>
}

// Grouped convolutions with several channels per group become one convolution per group
// (IREE's Vulkan backend computes the grouped form wrongly; depthwise ones stay whole).
// Ungrouped convolutions without lhs dilation and with small windows become one matmul on
// channels-last im2col patches: one strided slice of the padded input per window offset,
// stacked by selects on an iota, which IREE fuses into one loop (IREE's CPU convolutions
// on NCHW data are slow, and a concatenate is one copy per slice).
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x6x5xf32>, %[[W:.*]]: tensor<6x2x3x2xf32>)
// CHECK-NOT: stablehlo.convolution
// CHECK: %[[X0:.*]] = stablehlo.slice %[[X]] [0:2, 0:2, 0:6, 0:5]
// CHECK: %[[W0:.*]] = stablehlo.slice %[[W]] [0:3, 0:2, 0:3, 0:2]
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[X0]], dims = [0, 2, 3, 1] : (tensor<2x2x6x5xf32>) -> tensor<2x6x5x2xf32>
// CHECK: %[[XP:.*]] = stablehlo.pad %[[XT]], %{{.*}}, low = [0, 1, 0, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0]
// CHECK: stablehlo.slice %[[XP]] [0:2, 0:5:2, 0:5, 0:2]
// CHECK: %[[LAST:.*]] = stablehlo.slice %[[XP]] [0:2, 2:7:2, 1:6, 0:2]
// CHECK: %[[AT:.*]] = stablehlo.iota dim = 3 : tensor<2x3x5x6x2xi32>
// CHECK: stablehlo.broadcast_in_dim %[[LAST]], dims = [0, 1, 2, 4] : (tensor<2x3x5x2xf32>) -> tensor<2x3x5x6x2xf32>
// CHECK: stablehlo.compare EQ, %[[AT]]
// CHECK-COUNT-5: stablehlo.select
// CHECK: %[[P:.*]] = stablehlo.reshape %{{.*}} : (tensor<2x3x5x6x2xf32>) -> tensor<30x12xf32>
// CHECK: %[[WT:.*]] = stablehlo.transpose %[[W0]], dims = [2, 3, 1, 0]
// CHECK: %[[WM:.*]] = stablehlo.reshape %[[WT]] : (tensor<3x2x2x3xf32>) -> tensor<12x3xf32>
// CHECK: %[[Y0:.*]] = stablehlo.dot_general %[[P]], %[[WM]], contracting_dims = [1] x [0] : (tensor<30x12xf32>, tensor<12x3xf32>) -> tensor<30x3xf32>
// CHECK: %[[R0:.*]] = stablehlo.reshape %[[Y0]] : (tensor<30x3xf32>) -> tensor<2x3x5x3xf32>
// CHECK: %[[T0:.*]] = stablehlo.transpose %[[R0]], dims = [0, 3, 1, 2] : (tensor<2x3x5x3xf32>) -> tensor<2x3x3x5xf32>
// CHECK: %[[X1:.*]] = stablehlo.slice %[[X]] [0:2, 2:4, 0:6, 0:5]
// CHECK: %[[T1:.*]] = stablehlo.transpose %{{.*}}, dims = [0, 3, 1, 2]
// CHECK: stablehlo.concatenate %[[T0]], %[[T1]], dim = 1 : (tensor<2x3x3x5xf32>, tensor<2x3x3x5xf32>) -> tensor<2x6x3x5xf32>
func.func @conv2d(%x: tensor<2x4x6x5xf32>, %w: tensor<6x2x3x2xf32>) -> tensor<2x6x3x5xf32> {
  %0 = "tenzr.convolution"(%x, %w) {window_strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 2} : (tensor<2x4x6x5xf32>, tensor<6x2x3x2xf32>) -> tensor<2x6x3x5xf32>
  return %0 : tensor<2x6x3x5xf32>
}

// CHECK-LABEL: func.func @conv1d_defaults
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x7xf32>, %[[W:.*]]: tensor<3x2x3xf32>)
// CHECK-NOT: stablehlo.pad
// CHECK: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [0, 2, 1] : (tensor<1x2x7xf32>) -> tensor<1x7x2xf32>
// CHECK: %[[S0:.*]] = stablehlo.slice %[[XT]] [0:1, 0:5, 0:2]
// CHECK: %[[S1:.*]] = stablehlo.slice %[[XT]] [0:1, 1:6, 0:2]
// CHECK: %[[S2:.*]] = stablehlo.slice %[[XT]] [0:1, 2:7, 0:2]
// CHECK: %[[AT:.*]] = stablehlo.iota dim = 2 : tensor<1x5x3x2xi32>
// CHECK: %[[B2:.*]] = stablehlo.broadcast_in_dim %[[S2]], dims = [0, 1, 3]
// CHECK: %[[IS1:.*]] = stablehlo.compare EQ, %[[AT]], %{{.*}}
// CHECK: %[[B1:.*]] = stablehlo.broadcast_in_dim %[[S1]], dims = [0, 1, 3]
// CHECK: %[[U1:.*]] = stablehlo.select %[[IS1]], %[[B1]], %[[B2]]
// CHECK: %[[IS0:.*]] = stablehlo.compare EQ, %[[AT]], %{{.*}}
// CHECK: %[[B0:.*]] = stablehlo.broadcast_in_dim %[[S0]], dims = [0, 1, 3]
// CHECK: %[[PS:.*]] = stablehlo.select %[[IS0]], %[[B0]], %[[U1]] : tensor<1x5x3x2xi1>, tensor<1x5x3x2xf32>
// CHECK: %[[P:.*]] = stablehlo.reshape %[[PS]] : (tensor<1x5x3x2xf32>) -> tensor<5x6xf32>
// CHECK: %[[WT:.*]] = stablehlo.transpose %[[W]], dims = [2, 1, 0]
// CHECK: %[[WM:.*]] = stablehlo.reshape %[[WT]] : (tensor<3x2x3xf32>) -> tensor<6x3xf32>
// CHECK: %[[Y:.*]] = stablehlo.dot_general %[[P]], %[[WM]], contracting_dims = [1] x [0] : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
// CHECK: %[[YR:.*]] = stablehlo.reshape %[[Y]] : (tensor<5x3xf32>) -> tensor<1x5x3xf32>
// CHECK: stablehlo.transpose %[[YR]], dims = [0, 2, 1] : (tensor<1x5x3xf32>) -> tensor<1x3x5xf32>
func.func @conv1d_defaults(%x: tensor<1x2x7xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x5xf32> {
  %0 = "tenzr.convolution"(%x, %w) : (tensor<1x2x7xf32>, tensor<3x2x3xf32>) -> tensor<1x3x5xf32>
  return %0 : tensor<1x3x5xf32>
}

// CHECK-LABEL: func.func @conv3d_dilated
// CHECK: window = {stride = [1, 1, 1], pad = {{\[\[}}0, 0], [1, 2], [1, 2]], lhs_dilate = [2, 1, 1], rhs_dilate = [1, 2, 2]}
// CHECK-SAME: -> tensor<1x1x6x5x5xf32>
func.func @conv3d_dilated(%x: tensor<1x1x4x4x4xf32>, %w: tensor<1x1x2x2x2xf32>) -> tensor<1x1x6x5x5xf32> {
  %0 = "tenzr.convolution"(%x, %w) {lhs_dilation = array<i64: 2, 1, 1>, rhs_dilation = array<i64: 1, 2, 2>, padding_low = array<i64: 0, 1, 1>, padding_high = array<i64: 0, 2, 2>} : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x6x5x5xf32>
  return %0 : tensor<1x1x6x5x5xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}} {batch_group_count = 1 : i64, feature_group_count = 3 : i64}
func.func @depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "tenzr.convolution"(%x, %w) {feature_group_count = 3} : (tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
