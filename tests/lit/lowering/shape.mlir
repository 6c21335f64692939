// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo | filecheck %s

// CHECK-LABEL: func.func @reshape
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "tenzr.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: stablehlo.transpose %{{.*}}, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "tenzr.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// NumPy broadcasting right-aligns the operand's dims.
// CHECK-LABEL: func.func @broadcast_to
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [1, 2] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
func.func @broadcast_to(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = "tenzr.broadcast_to"(%x) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: stablehlo.pad %[[X]], %[[V]], low = [1, 0], high = [0, 2], interior = [1, 1]
func.func @pad(%x: tensor<3x2xf32>, %v: tensor<f32>) -> tensor<6x5xf32> {
  %0 = "tenzr.pad"(%x, %v) {low = array<i64: 1, 0>, high = array<i64: 0, 2>, interior = array<i64: 1, 1>} : (tensor<3x2xf32>, tensor<f32>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK: stablehlo.slice %{{.*}} [1:7:3, 0:5:2] : (tensor<8x5xf32>) -> tensor<2x3xf32>
func.func @slice(%x: tensor<8x5xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.slice"(%x) {start = array<i64: 1, 0>, stop = array<i64: 7, 5>, step = array<i64: 3, 2>} : (tensor<8x5xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reverse
// CHECK: stablehlo.reverse %{{.*}}, dims = [1]
func.func @reverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.reverse"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.*]]: tensor<2x1xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK: stablehlo.concatenate %[[A]], %[[B]], dim = 1
func.func @concatenate(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = "tenzr.concatenate"(%a, %b) {axis = 1} : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @iota
// CHECK: stablehlo.iota dim = 1 : tensor<2x3xi32>
func.func @iota() -> tensor<2x3xi32> {
  %0 = "tenzr.iota"() {dimension = 1} : () -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
