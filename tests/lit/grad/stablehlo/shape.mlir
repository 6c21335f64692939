// StableHLO's data-movement ops: broadcast_in_dim, reshape, transpose, reverse, slice,
// pad (negative and interior too), concatenate, dynamic_slice, dynamic_update_slice.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// broadcast_in_dim: x̄ sums ȳ over the new dimensions.
// CHECK-LABEL: func.func @broadcast_vjp
// CHECK: %[[DX:.*]] = stablehlo.reduce(%arg1 init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @broadcast(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A transpose's cotangent transposes back by the inverse permutation, a reshape's reshapes back.
// CHECK-LABEL: func.func @reshape_transpose_vjp
// CHECK: %[[T:.*]] = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[DX:.*]] = stablehlo.reshape %[[T]] : (tensor<3x2xf32>) -> tensor<6xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @reshape_transpose(%x: tensor<6xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reshape %x : (tensor<6xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// A slice's cotangent pads ȳ back to the operand with zeros; a reverse's reverses.
// CHECK-LABEL: func.func @reverse_slice_vjp
// CHECK: %[[P:.*]] = stablehlo.pad %arg1, %{{.*}}, low = [1], high = [1], interior = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[DX:.*]] = stablehlo.reverse %[[P]], dims = [0]
// CHECK: return %{{.*}}, %[[DX]]
func.func @reverse_slice(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.reverse %x, dims = [0] : tensor<4xf32>
  %1 = stablehlo.slice %0 [1:3] : (tensor<4xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// A strided slice's cotangent is an interior pad by the stride minus one.
// CHECK-LABEL: func.func @strided_slice_vjp
// CHECK: %[[DX:.*]] = stablehlo.pad %arg1, %{{.*}}, low = [1], high = [1], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<7xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @strided_slice(%x: tensor<7xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %x [1:6:2] : (tensor<7xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// pad: x̄ is ȳ without the edges, then every (interior + 1)-th element; the padding
// value's cotangent is what is left, Σȳ - Σx̄.
// CHECK-LABEL: func.func @pad_vjp
// CHECK: %[[CROP:.*]] = stablehlo.slice %arg2 [1:6]
// CHECK: %[[DX:.*]] = stablehlo.slice %[[CROP]] [0:5:2] : (tensor<5xf32>) -> tensor<3xf32>
// CHECK: %[[ALL:.*]] = stablehlo.reduce(%arg2 init: %{{.*}}) applies stablehlo.add
// CHECK: %[[MINE:.*]] = stablehlo.reduce(%[[DX]] init: %{{.*}}) applies stablehlo.add
// CHECK: %[[DV:.*]] = stablehlo.subtract %[[ALL]], %[[MINE]]
// CHECK: return %{{.*}}, %[[DX]], %[[DV]]
func.func @pad(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<8xf32> {
  %0 = stablehlo.pad %x, %v, low = [1], high = [2], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// A negative pad crops: the cropped elements get zeros, written with positive pads only.
// CHECK-LABEL: func.func @negative_pad_vjp
// CHECK: %[[CROP:.*]] = stablehlo.slice %arg2 [0:4] : (tensor<5xf32>) -> tensor<4xf32>
// CHECK: %[[DX:.*]] = stablehlo.pad %[[CROP]], %{{.*}}, low = [2], high = [0], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>
// CHECK: return %{{.*}}, %[[DX]], %{{.*}}
func.func @negative_pad(%x: tensor<6xf32>, %v: tensor<f32>) -> tensor<5xf32> {
  %0 = stablehlo.pad %x, %v, low = [-2], high = [1], interior = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// concatenate: each operand's cotangent is its slice of ȳ.
// CHECK-LABEL: func.func @concat_vjp
// CHECK: %[[DX:.*]] = stablehlo.slice %arg2 [0:2]
// CHECK: %[[DY:.*]] = stablehlo.slice %arg2 [2:5]
// CHECK: return %{{.*}}, %[[DX]], %[[DY]]
func.func @concat(%x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<5xf32> {
  %0 = stablehlo.concatenate %x, %y, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// dynamic_slice: ȳ written into zeros at the same (clamped alike) start.
// CHECK-LABEL: func.func @dynamic_slice_vjp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK: %[[DX:.*]] = stablehlo.dynamic_update_slice %[[ZERO]], %arg2, %arg1
// CHECK: return %{{.*}}, %[[DX]]
func.func @dynamic_slice(%x: tensor<5xf32>, %i: tensor<i32>) -> tensor<2xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<5xf32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// dynamic_update_slice: x̄ is ȳ with the written window zeroed, ū is ȳ's window; the
// start index gets none.
// CHECK-LABEL: func.func @dynamic_update_slice_vjp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: %[[DX:.*]] = stablehlo.dynamic_update_slice %arg3, %[[ZERO]], %arg2
// CHECK: %[[DU:.*]] = stablehlo.dynamic_slice %arg3, %arg2, sizes = [2]
// CHECK: return %{{.*}}, %[[DX]], %[[DU]] : tensor<5xf32>, tensor<5xf32>, tensor<2xf32>
func.func @dynamic_update_slice(%x: tensor<5xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> tensor<5xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<5xf32>, tensor<2xf32>, tensor<i32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
