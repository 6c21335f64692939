// tenzr-batch: which ops batch without a loop, how unbatched operands meet batched ones,
// axes, and the per-element loop of the others.
// RUN: tenzr-opt %s --split-input-file --tenzr-batch="func=f in_axes=0,none size=4" | filecheck %s
// RUN: tenzr-opt %s --split-input-file --tenzr-batch="func=f in_axes=1,0 size=4" | filecheck %s --check-prefix=AXES
// RUN: not tenzr-opt %s --split-input-file --tenzr-batch="func=f size=4 out_axes=none" 2>&1 | filecheck %s --check-prefix=ERR

// Elementwise ops broadcast like NumPy: the batched x (4x3) meets the unbatched w (3)
// without a copy; the reduction sums the element's axis, one past the batch.
// CHECK-LABEL: func.func @f_batch
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3xf32>) -> tensor<4xf32>
// CHECK: %[[M:.*]] = "tenzr.mul"(%[[X]], %[[W]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = "tenzr.reduce_sum"(%[[M]]) {axes = array<i64: 1>
// CHECK: return %[[S]]
// A result that depends on the batch cannot be given out_axes none.
// ERR: :[[# @LINE + 3]]:1: error: tenzr-batch: a result of '@f' given out_axes none depends on the batch
// AXES-LABEL: func.func @f_batch
// AXES-SAME: (%{{.*}}: tensor<3x4xf32>, %{{.*}}: tensor<4x3xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A batched argument at axis 1 is moved to the front first; a dot_general with one
// batched operand makes the batch a free dimension and moves it to the front.
// AXES-LABEL: func.func @f_batch
// AXES-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<4x2x3xf32>) -> tensor<4x3xf32>
// AXES: %[[XT:.*]] = stablehlo.transpose %[[X]], dims = [1, 0]
// AXES: stablehlo.dot_general %[[XT]], %[[W]], batching_dims = [0] x [0], contracting_dims = [1] x [1]
// A sort sorts one dimension further; a convolution with a batched kernel runs per element.
// CHECK-LABEL: func.func @f_batch
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: "stablehlo.sort"
// CHECK: dimension = 1 : i64
func.func @f(%x: tensor<2xf32>, %w: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [0] x [0] : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  %1 = "stablehlo.sort"(%0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

// A convolution of the batched images with an unbatched kernel merges the batch into the
// images' batch dimension; one whose kernel is batched too runs once per element.
// CHECK-LABEL: func.func @f_batch
// CHECK: %[[M:.*]] = stablehlo.reshape %{{.*}} : (tensor<4x1x1x4xf32>) -> tensor<4x1x4xf32>
// CHECK: stablehlo.convolution(%[[M]], %{{.*}}){{.*}} : (tensor<4x1x4xf32>, tensor<1x1x2xf32>) -> tensor<4x1x3xf32>
// CHECK: stablehlo.while
// CHECK: stablehlo.dynamic_slice
// CHECK: stablehlo.convolution
// CHECK: stablehlo.dynamic_update_slice
func.func @f(%x: tensor<1x1x4xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x3xf32> {
  %0 = "stablehlo.convolution"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  %k = stablehlo.slice %x [0:1, 0:1, 0:2] : (tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
  %1 = "stablehlo.convolution"(%x, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  %2 = stablehlo.add %0, %1 : tensor<1x1x3xf32>
  return %2 : tensor<1x1x3xf32>
}
