// tenzr-split-reductions: one dim at a time, innermost first; long float sums in two
// stages, and long float32 contractions with few results; -sum(x) for sum(-x). Reductions
// from a non-identity init stay as they are.
// RUN: tenzr-opt %s --tenzr-split-reductions | filecheck %s

// CHECK-LABEL: func.func @two_dims
// CHECK: %[[INNER:.*]] = stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [2] : (tensor<8x4x3xf32>, tensor<f32>) -> tensor<8x4xf32>
// CHECK: %[[OUTER:.*]] = stablehlo.reduce(%[[INNER]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: return %[[OUTER]]
func.func @two_dims(%x: tensor<8x4x3xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 2] : (tensor<8x4x3xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// 5000 values: padded to 5120, summed as 40 blocks of 128.
// CHECK-LABEL: func.func @long_sum
// CHECK: %[[PADDED:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0], high = [120], interior = [0] : (tensor<5000xf32>, tensor<f32>) -> tensor<5120xf32>
// CHECK: %[[BLOCKS:.*]] = stablehlo.reshape %[[PADDED]] : (tensor<5120xf32>) -> tensor<40x128xf32>
// CHECK: %[[PART:.*]] = stablehlo.reduce(%[[BLOCKS]] init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: stablehlo.reduce(%[[PART]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
func.func @long_sum(%x: tensor<5000xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5000xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @negated
// CHECK: %[[S:.*]] = stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[N:.*]] = stablehlo.negate %[[S]] : tensor<f32>
// CHECK: return %[[N]]
func.func @negated(%x: tensor<3xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.negate %x : tensor<3xf32>
  %0 = stablehlo.reduce(%n init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @from_one
// CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1]
func.func @from_one(%x: tensor<2x3xf32>) -> tensor<f32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %one) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// A reduction over no dims from its identity is its operand (JAX's unique(size=) has one);
// a complex sum's zero init is read as its identity too.
// CHECK-LABEL: func.func @over_no_dims
// CHECK-NOT: stablehlo.reduce
// CHECK: return %arg0
func.func @over_no_dims(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @complex_sum
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.add across dimensions = [0]
func.func @complex_sum(%z: tensor<2x3xcomplex<f32>>) -> tensor<complex<f32>> {
  %zero = stablehlo.constant dense<(0.0,0.0)> : tensor<complex<f32>>
  %0 = stablehlo.reduce(%z init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
  return %0 : tensor<complex<f32>>
}

// A long float32 contraction with few results contracts blocks of about sqrt(k) (k = 5000:
// 40 blocks of 128, padded with zeros) as a batch dim, then sums the blocks; one with many
// results, and a float64 one, stay whole.
// CHECK-LABEL: func.func @long_dots
// CHECK: %[[A:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 0], high = [0, 120], interior = [0, 0]
// CHECK: %[[RA:.*]] = stablehlo.reshape %[[A]] : (tensor<3x5120xf32>) -> tensor<3x40x128xf32>
// CHECK: %[[B:.*]] = stablehlo.pad %arg1
// CHECK: %[[RB:.*]] = stablehlo.reshape %[[B]] : (tensor<5120x2xf32>) -> tensor<40x128x2xf32>
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[RA]], %[[RB]], batching_dims = [1] x [0], contracting_dims = [2] x [1] : (tensor<3x40x128xf32>, tensor<40x128x2xf32>) -> tensor<40x3x2xf32>
// CHECK: stablehlo.reduce(%[[P]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<40x3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK: stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0] : (tensor<512x5000xf32>, tensor<5000x2048xf32>) -> tensor<512x2048xf32>
// CHECK: stablehlo.dot_general %arg4, %arg4, contracting_dims = [0] x [0] : (tensor<5000xf64>, tensor<5000xf64>) -> tensor<f64>
func.func @long_dots(%a: tensor<3x5000xf32>, %b: tensor<5000x2xf32>, %c: tensor<512x5000xf32>, %d: tensor<5000x2048xf32>,
                     %e: tensor<5000xf64>) -> (tensor<3x2xf32>, tensor<512x2048xf32>, tensor<f64>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x5000xf32>, tensor<5000x2xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<512x5000xf32>, tensor<5000x2048xf32>) -> tensor<512x2048xf32>
  %2 = stablehlo.dot_general %e, %e, contracting_dims = [0] x [0] : (tensor<5000xf64>, tensor<5000xf64>) -> tensor<f64>
  return %0, %1, %2 : tensor<3x2xf32>, tensor<512x2048xf32>, tensor<f64>
}
