// Complex tensors: tenzr.real, tenzr.imag and tenzr.complex lower to their StableHLO twins,
// tenzr.abs of a complex tensor gives its real modulus, and complex math stays StableHLO
// until tenzr-expand-math.
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo | filecheck %s

// CHECK-LABEL: func.func @parts
// CHECK-SAME: (%[[Z:.*]]: tensor<3xcomplex<f64>>)
// CHECK-DAG: %[[RE:.*]] = stablehlo.real %[[Z]] : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK-DAG: %[[IM:.*]] = stablehlo.imag %[[Z]] : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK: %[[C:.*]] = stablehlo.complex %[[IM]], %[[RE]] : tensor<3xcomplex<f64>>
// CHECK: %[[A:.*]] = stablehlo.abs %[[C]] : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
// CHECK: return %[[A]]
func.func @parts(%z: tensor<3xcomplex<f64>>) -> tensor<3xf64> {
  %re = "tenzr.real"(%z) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %im = "tenzr.imag"(%z) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %c = "tenzr.complex"(%im, %re) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xcomplex<f64>>
  %a = "tenzr.abs"(%c) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  return %a : tensor<3xf64>
}

// CHECK-LABEL: func.func @math
// CHECK: stablehlo.exponential %{{.*}} : tensor<2xcomplex<f32>>
// CHECK: stablehlo.multiply %{{.*}} : tensor<2xcomplex<f32>>
func.func @math(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %e = "tenzr.exp"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %m = "tenzr.mul"(%e, %z) : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %m : tensor<2xcomplex<f32>>
}
