// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// CHECK-LABEL: func.func @reshape_transpose_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[YBAR:.*]]: tensor<3x2xf32>)
// CHECK: %[[R1:.*]] = stablehlo.reshape %[[YBAR]] : (tensor<3x2xf32>) -> tensor<6xf32>
// CHECK: %[[R2:.*]] = stablehlo.reshape %[[R1]] : (tensor<6xf32>) -> tensor<3x2xf32>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[R2]], dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[T]]
func.func @reshape_transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "tenzr.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "tenzr.reshape"(%0) : (tensor<3x2xf32>) -> tensor<6xf32>
  %2 = "tenzr.reshape"(%1) : (tensor<6xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// Broadcast dims are summed (dropped leading ones, kept size-1 ones reshaped back).
// CHECK-LABEL: func.func @broadcast_to_vjp
// CHECK: %[[S:.*]] = stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.add across dimensions = [0, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[S]] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: return %{{.*}}, %[[R]]
func.func @broadcast_to(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = "tenzr.broadcast_to"(%x) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Undo the edges (slice off what the pad added, zero-fill what it cut), then stride over the
// interior; the padding value gets everything that did not come from the operand.
// CHECK-LABEL: func.func @pad_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>, %[[V:.*]]: tensor<f32>, %[[YBAR:.*]]: tensor<6x4xf32>)
// CHECK: %[[KEPT:.*]] = stablehlo.slice %[[YBAR]] [1:6, 0:2] : (tensor<6x4xf32>) -> tensor<5x2xf32>
// CHECK: %[[U:.*]] = stablehlo.pad %[[KEPT]], %{{.*}}, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<5x2xf32>, tensor<f32>) -> tensor<5x3xf32>
// CHECK: %[[DX:.*]] = stablehlo.slice %[[U]] [0:5:2, 0:3:2] : (tensor<5x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[ALL:.*]] = stablehlo.reduce(%[[YBAR]]{{.*}} across dimensions = [0, 1]
// CHECK: %[[MINE:.*]] = stablehlo.reduce(%[[DX]]{{.*}} across dimensions = [0, 1]
// CHECK: %[[DV:.*]] = stablehlo.subtract %[[ALL]], %[[MINE]] : tensor<f32>
// CHECK: return %{{.*}}, %[[DX]], %[[DV]]
func.func @pad(%x: tensor<3x2xf32>, %v: tensor<f32>) -> tensor<6x4xf32> {
  %0 = "tenzr.pad"(%x, %v) {low = array<i64: 1, -1>, high = array<i64: 0, 2>, interior = array<i64: 1, 1>} : (tensor<3x2xf32>, tensor<f32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @slice_vjp
// CHECK: stablehlo.pad %arg1, %{{.*}}, low = [1, 0], high = [3, 0], interior = [2, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<8x5xf32>
func.func @slice(%x: tensor<8x5xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.slice"(%x) {start = array<i64: 1, 0>, stop = array<i64: 7, 5>, step = array<i64: 3, 2>} : (tensor<8x5xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reverse_vjp
// CHECK: stablehlo.reverse %arg1, dims = [1]
func.func @reverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.reverse"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @concatenate_vjp
// CHECK: %[[A:.*]] = stablehlo.slice %arg2 [0:2, 0:1]
// CHECK: %[[B:.*]] = stablehlo.slice %arg2 [0:2, 1:4]
// CHECK: return %{{.*}}, %[[A]], %[[B]]
func.func @concatenate(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = "tenzr.concatenate"(%a, %b) {axis = 1} : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// The cotangent converts back to the operand's element type.
// CHECK-LABEL: func.func @convert_vjp
// CHECK: stablehlo.convert %arg1 : (tensor<3xf64>) -> tensor<3xf32>
func.func @convert(%x: tensor<3xf32>) -> tensor<3xf64> {
  %0 = "tenzr.convert"(%x) : (tensor<3xf32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
