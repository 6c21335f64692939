// tenzr-transpose-after-concatenate: a concatenation of transposes of one permutation is
// the transpose of one concatenation (along the permuted dim); a transpose of a transpose
// is one transpose, or none. Mixed permutations, or an operand that is not a transpose,
// stay as they are. (canonicalize removes the transposes left unused.)
// RUN: tenzr-opt %s --tenzr-transpose-after-concatenate --canonicalize | filecheck %s

// CHECK-LABEL: func.func @hstack
// CHECK: %[[J:.*]] = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[J]], dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK: return %[[T]]
func.func @hstack(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// The outer transpose undoes the one the concatenation gained.
// CHECK-LABEL: func.func @undone
// CHECK: %[[J:.*]] = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: return %[[J]]
func.func @undone(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x8x4xf32> {
  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %b, dims = [2, 0, 1] : (tensor<2x5x4xf32>) -> tensor<4x2x5xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 2 : (tensor<4x2x3xf32>, tensor<4x2x5xf32>) -> tensor<4x2x8xf32>
  %3 = stablehlo.transpose %2, dims = [1, 2, 0] : (tensor<4x2x8xf32>) -> tensor<2x8x4xf32>
  return %3 : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @composed
// CHECK: %[[T:.*]] = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @composed(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// CHECK-LABEL: func.func @mixed
// CHECK: stablehlo.concatenate %{{.*}}, %arg1, dim = 1
func.func @mixed(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.concatenate %0, %b, dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
