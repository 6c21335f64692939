func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "foo.bar"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
