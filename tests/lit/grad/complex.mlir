// Complex values follow JAX's convention: the cotangent of a holomorphic op is ȳ·f'(z)
// (no conjugate), tenzr.real's is ȳ + 0i, tenzr.imag's 0 - ȳi, and a complex tenzr.abs
// gives ȳ·conj(z)/|z|.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// CHECK-LABEL: func.func @real_of_exp_vjp
// CHECK-SAME: (%[[Z:.*]]: tensor<3xcomplex<f64>>, %[[YBAR:.*]]: tensor<3xf64>)
// CHECK: %[[E:.*]] = "tenzr.exp"(%[[Z]])
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf64>
// CHECK: %[[CT:.*]] = stablehlo.complex %[[YBAR]], %[[ZERO]] : tensor<3xcomplex<f64>>
// CHECK: %[[DZ:.*]] = stablehlo.multiply %[[CT]], %[[E]] : tensor<3xcomplex<f64>>
// CHECK: return %{{.*}}, %[[DZ]]
func.func @real_of_exp(%z: tensor<3xcomplex<f64>>) -> tensor<3xf64> {
  %e = "tenzr.exp"(%z) : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
  %r = "tenzr.real"(%e) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}

// CHECK-LABEL: func.func @imag_vjp
// CHECK-SAME: (%[[Z:.*]]: tensor<3xcomplex<f32>>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK: %[[NEG:.*]] = stablehlo.negate %[[YBAR]]
// CHECK: %[[DZ:.*]] = stablehlo.complex %{{.*}}, %[[NEG]] : tensor<3xcomplex<f32>>
// CHECK: return %{{.*}}, %[[DZ]]
func.func @imag(%z: tensor<3xcomplex<f32>>) -> tensor<3xf32> {
  %i = "tenzr.imag"(%z) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  return %i : tensor<3xf32>
}

// CHECK-LABEL: func.func @modulus_vjp
// CHECK-SAME: (%[[Z:.*]]: tensor<3xcomplex<f64>>, %[[YBAR:.*]]: tensor<3xf64>)
// CHECK: %[[A:.*]] = "tenzr.abs"(%[[Z]])
// CHECK: %[[S:.*]] = stablehlo.divide %[[YBAR]], %[[A]] : tensor<3xf64>
// CHECK-DAG: stablehlo.real %[[Z]]
// CHECK-DAG: stablehlo.imag %[[Z]]
// CHECK: stablehlo.complex
func.func @modulus(%z: tensor<3xcomplex<f64>>) -> tensor<3xf64> {
  %a = "tenzr.abs"(%z) : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  return %a : tensor<3xf64>
}

// tenzr.complex's operands get Re ȳ and -Im ȳ.
// CHECK-LABEL: func.func @build_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2xf64>, %[[Y:.*]]: tensor<2xf64>, %[[YBAR:.*]]: tensor<2xcomplex<f64>>)
// CHECK-DAG: %[[RE:.*]] = stablehlo.real %[[YBAR]]
// CHECK-DAG: %[[IM:.*]] = stablehlo.imag %[[YBAR]]
// CHECK-DAG: %[[NIM:.*]] = stablehlo.negate %[[IM]]
// CHECK: return %{{.*}}, %[[RE]], %[[NIM]]
func.func @build(%x: tensor<2xf64>, %y: tensor<2xf64>) -> tensor<2xcomplex<f64>> {
  %c = "tenzr.complex"(%x, %y) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xcomplex<f64>>
  return %c : tensor<2xcomplex<f64>>
}
