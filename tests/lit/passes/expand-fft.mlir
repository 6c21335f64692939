// tenzr-expand-fft: StableHLO's fft (as JAX exports jnp.fft) becomes products with DFT
// matrices, one per transformed axis, which IREE compiles for every length (its own
// lowering takes only real power-of-two ones) and tenzr-grad differentiates.
// RUN: tenzr-opt %s --tenzr-expand-fft | filecheck %s

// RFFT: the n // 2 + 1 terms' real parts from cosines, imaginary parts from minus sines
// (exact zeros and ones at multiples of π/2).
// CHECK-LABEL: func.func @rfft
// CHECK-NOT: stablehlo.fft
// CHECK: %[[COS:.*]] = stablehlo.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 0.000000e+00, -1.000000e+00], [1.000000e+00, -1.000000e+00, 1.000000e+00], [1.000000e+00, -0.000000e+00, -1.000000e+00]]> : tensor<4x3xf32>
// CHECK: %[[RE:.*]] = stablehlo.dot_general %arg0, %[[COS]], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x3xf32>) -> tensor<3x3xf32>
// CHECK: %[[SIN:.*]] = stablehlo.constant dense<{{\[\[}}-0.000000e+00, -0.000000e+00, -0.000000e+00], [-0.000000e+00, -1.000000e+00, -0.000000e+00], [-0.000000e+00, -0.000000e+00, -0.000000e+00], [-0.000000e+00, 1.000000e+00, -0.000000e+00]]> : tensor<4x3xf32>
// CHECK: %[[IM:.*]] = stablehlo.dot_general %arg0, %[[SIN]]
// CHECK: %[[Z:.*]] = stablehlo.complex %[[RE]], %[[IM]] : tensor<3x3xcomplex<f32>>
// CHECK: return %[[Z]]
func.func @rfft(%x: tensor<3x4xf32>) -> tensor<3x3xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [4] : (tensor<3x4xf32>) -> tensor<3x3xcomplex<f32>>
  return %0 : tensor<3x3xcomplex<f32>>
}

// IFFT over two axes: a complex product along each, exp(2πi jk/n) / n, the first
// transposed back into place.
// CHECK-LABEL: func.func @ifft2
// CHECK: %[[HALF:.*]] = stablehlo.constant dense<{{\[\[}}5.000000e-01, 5.000000e-01], [5.000000e-01, -5.000000e-01]]> : tensor<2x2xf64>
// CHECK: %[[W2:.*]] = stablehlo.complex %[[HALF]], %{{.*}} : tensor<2x2xcomplex<f64>>
// CHECK: %[[A:.*]] = stablehlo.dot_general %arg0, %[[W2]], contracting_dims = [0] x [0] : (tensor<2x3xcomplex<f64>>, tensor<2x2xcomplex<f64>>) -> tensor<3x2xcomplex<f64>>
// CHECK: %[[B:.*]] = stablehlo.transpose %[[A]], dims = [1, 0]
// CHECK: %[[W3:.*]] = stablehlo.complex %{{.*}}, %{{.*}} : tensor<3x3xcomplex<f64>>
// CHECK: %[[C:.*]] = stablehlo.dot_general %[[B]], %[[W3]], contracting_dims = [1] x [0]
// CHECK: return %[[C]]
func.func @ifft2(%x: tensor<2x3xcomplex<f64>>) -> tensor<2x3xcomplex<f64>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [2, 3] : (tensor<2x3xcomplex<f64>>) -> tensor<2x3xcomplex<f64>>
  return %0 : tensor<2x3xcomplex<f64>>
}

// IRFFT: the real result from the terms' real and imaginary parts, each but the zero and
// Nyquist terms weighed twice (their Hermitian partners), whose imaginary parts get zeros.
// CHECK-LABEL: func.func @irfft
// CHECK: %[[RE:.*]] = stablehlo.real %arg0
// CHECK: %[[COS:.*]] = stablehlo.constant dense<{{\[\[}}2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01], [5.000000e-01, 0.000000e+00, -5.000000e-01, -0.000000e+00], [2.500000e-01, -2.500000e-01, 2.500000e-01, -2.500000e-01]]> : tensor<3x4xf32>
// CHECK: %[[A:.*]] = stablehlo.dot_general %[[RE]], %[[COS]]
// CHECK: %[[IM:.*]] = stablehlo.imag %arg0
// CHECK: %[[SIN:.*]] = stablehlo.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 5.000000e-01, 0.000000e+00, -5.000000e-01], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x4xf32>
// CHECK: %[[B:.*]] = stablehlo.dot_general %[[IM]], %[[SIN]]
// CHECK: %[[X:.*]] = stablehlo.subtract %[[A]], %[[B]] : tensor<5x4xf32>
// CHECK: return %[[X]]
func.func @irfft(%x: tensor<5x3xcomplex<f32>>) -> tensor<5x4xf32> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [4] : (tensor<5x3xcomplex<f32>>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
