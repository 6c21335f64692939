// tenzr-fold-slices: a slice reads past the concatenation, pad or slice before it; what
// crosses operands, or mixes padding and operand, stays.
// RUN: tenzr-opt %s --tenzr-fold-slices | filecheck %s

// CHECK-LABEL: func.func @of_a_concatenation
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK: %[[C:.*]] = stablehlo.concatenate %[[A]], %[[B]]
// CHECK: %[[S:.*]] = stablehlo.slice %[[B]] [0:3:2, 1:4] : (tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK: %[[X:.*]] = stablehlo.slice %[[C]] [0:2, 0:4]
// CHECK: return %[[A]], %[[S]], %[[X]]
func.func @of_a_concatenation(%a: tensor<1x4xf32>, %b: tensor<3x4xf32>)
    -> (tensor<1x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>) {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.slice %0 [0:1, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %2 = stablehlo.slice %0 [1:4:2, 1:4] : (tensor<4x4xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.slice %0 [0:2, 0:4] : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return %1, %2, %3 : tensor<1x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>
}

// The strided slice [0:5:3] reads rows 0 and 3 of the pad: padding only, as [1:3] is.
// CHECK-LABEL: func.func @of_a_pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: %[[P:.*]] = stablehlo.pad %[[X]], %[[V]]
// CHECK: %[[IN:.*]] = stablehlo.slice %[[X]] [0:2, 1:3]
// CHECK: %[[OUT:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[MIXED:.*]] = stablehlo.slice %[[P]] [0:2, 0:3]
// CHECK: %[[OUT2:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f32>) -> tensor<2x2xf32>
// CHECK: return %[[IN]], %[[OUT]], %[[MIXED]], %[[OUT2]]
func.func @of_a_pad(%x: tensor<2x3xf32>, %v: tensor<f32>)
    -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %0 = stablehlo.pad %x, %v, low = [1, 0], high = [2, 1], interior = [0, 0]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x4xf32>
  %1 = stablehlo.slice %0 [1:3, 1:3] : (tensor<5x4xf32>) -> tensor<2x2xf32>
  %2 = stablehlo.slice %0 [3:5, 0:3] : (tensor<5x4xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.slice %0 [0:2, 0:3] : (tensor<5x4xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.slice %0 [0:5:3, 0:2] : (tensor<5x4xf32>) -> tensor<2x2xf32>
  return %1, %2, %3, %4 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}

// A pad with interior padding stays.
// CHECK-LABEL: func.func @of_an_interior_pad
// CHECK: %[[P:.*]] = stablehlo.pad
// CHECK: stablehlo.slice %[[P]] [0:1]
func.func @of_an_interior_pad(%x: tensor<2xf32>, %v: tensor<f32>) -> tensor<1xf32> {
  %0 = stablehlo.pad %x, %v, low = [0], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.slice %0 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
  return %1 : tensor<1xf32>
}

// x[2:9][1:7:3] is x[3:8:3]; x[0:4:2][0:2:1] is x[0:3:2]; a slice of everything is x.
// CHECK-LABEL: func.func @of_a_slice
// CHECK-SAME: (%[[X:.*]]: tensor<10xf32>)
// CHECK: %[[A:.*]] = stablehlo.slice %[[X]] [3:7:3] : (tensor<10xf32>) -> tensor<2xf32>
// CHECK: %[[B:.*]] = stablehlo.slice %[[X]] [0:3:2] : (tensor<10xf32>) -> tensor<2xf32>
// CHECK: return %[[A]], %[[B]], %[[X]]
func.func @of_a_slice(%x: tensor<10xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<10xf32>) {
  %0 = stablehlo.slice %x [2:9] : (tensor<10xf32>) -> tensor<7xf32>
  %1 = stablehlo.slice %0 [1:7:3] : (tensor<7xf32>) -> tensor<2xf32>
  %2 = stablehlo.slice %x [0:4:2] : (tensor<10xf32>) -> tensor<2xf32>
  %3 = stablehlo.slice %2 [0:2] : (tensor<2xf32>) -> tensor<2xf32>
  %4 = stablehlo.slice %x [0:10] : (tensor<10xf32>) -> tensor<10xf32>
  return %1, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<10xf32>
}
