func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<3xf32>
}
