// tenzr-reverse-before-strided-slice: x[1:6:2] reversed is x reversed, then sliced; a
// reverse of an unstrided slice stays.
// RUN: tenzr-opt %s --tenzr-reverse-before-strided-slice | filecheck %s

// CHECK-LABEL: func.func @strided
// CHECK: %[[R:.*]] = stablehlo.reverse %arg0, dims = [0] : tensor<7xf32>
// CHECK: %[[S:.*]] = stablehlo.slice %[[R]] [1:6:2] : (tensor<7xf32>) -> tensor<3xf32>
// CHECK: return %[[S]]
func.func @strided(%x: tensor<7xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %x [1:6:2] : (tensor<7xf32>) -> tensor<3xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// CHECK-LABEL: func.func @unstrided
// CHECK: %[[S:.*]] = stablehlo.slice %arg0 [1:4]
// CHECK: stablehlo.reverse %[[S]]
func.func @unstrided(%x: tensor<7xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %x [1:4] : (tensor<7xf32>) -> tensor<3xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<3xf32>
  return %1 : tensor<3xf32>
}
