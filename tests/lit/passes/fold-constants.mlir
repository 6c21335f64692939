// tenzr-fold-constants: arithmetic on constants becomes a constant (IREE would hoist it
// into a global computed at load, by a dispatch of its own).
// RUN: tenzr-opt %s --tenzr-fold-constants | filecheck %s

// A mean's cotangent: -(1 / 128), broadcast and scaled into a splat tensor; a count
// converted to a float.
// CHECK-LABEL: func.func @scalars
// CHECK-DAG: %[[S:.*]] = stablehlo.constant dense<-7.812500e-03> : tensor<f32>
// CHECK-DAG: %[[T:.*]] = stablehlo.constant dense<-1.562500e-02> : tensor<2x3xf32>
// CHECK-DAG: %[[N:.*]] = stablehlo.constant dense<3.000000e+00> : tensor<f64>
// CHECK-NOT: stablehlo.negate
// CHECK-NOT: stablehlo.divide
// CHECK-NOT: stablehlo.multiply
// CHECK-NOT: stablehlo.convert
// CHECK: return %[[S]], %[[T]], %[[N]]
func.func @scalars() -> (tensor<f32>, tensor<2x3xf32>, tensor<f64>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %n = stablehlo.constant dense<128.0> : tensor<f32>
  %two = stablehlo.constant dense<2.0> : tensor<2x3xf32>
  %0 = stablehlo.divide %one, %n : tensor<f32>
  %1 = stablehlo.negate %0 : tensor<f32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.multiply %two, %2 : tensor<2x3xf32>
  %count = stablehlo.constant dense<3> : tensor<i64>
  %4 = stablehlo.convert %count : (tensor<i64>) -> tensor<f64>
  return %1, %3, %4 : tensor<f32>, tensor<2x3xf32>, tensor<f64>
}

// Constant indices made non-negative and clamped, element by element; integers wrap.
// CHECK-LABEL: func.func @indices
// CHECK-DAG: %[[I:.*]] = stablehlo.constant dense<[0, 4, 3, 2]> : tensor<4xi32>
// CHECK-DAG: %[[W:.*]] = stablehlo.constant dense<-2147483648> : tensor<i32>
// CHECK-NOT: stablehlo.compare
// CHECK-NOT: stablehlo.select
// CHECK-NOT: stablehlo.clamp
// CHECK: return %[[I]], %[[W]]
func.func @indices() -> (tensor<4xi32>, tensor<i32>) {
  %i = stablehlo.constant dense<[0, 7, -2, 2]> : tensor<4xi32>
  %zero = stablehlo.constant dense<0> : tensor<4xi32>
  %five = stablehlo.constant dense<5> : tensor<4xi32>
  %low = stablehlo.constant dense<0> : tensor<i32>
  %high = stablehlo.constant dense<4> : tensor<i32>
  %max = stablehlo.constant dense<2147483647> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.compare LT, %i, %zero, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = stablehlo.add %i, %five : tensor<4xi32>
  %2 = stablehlo.select %0, %1, %i : tensor<4xi1>, tensor<4xi32>
  %3 = stablehlo.clamp %low, %2, %high : (tensor<i32>, tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %4 = stablehlo.add %max, %one : tensor<i32>
  return %3, %4 : tensor<4xi32>, tensor<i32>
}

// Left to IREE: an integer division (NumPy would round it otherwise), a total-order
// comparison, a float converted to an integer, a broadcast of a constant that is not a
// splat, complex numbers, an operand that is not a constant.
// CHECK-LABEL: func.func @kept
// CHECK: stablehlo.divide
// CHECK: stablehlo.compare
// CHECK: stablehlo.negate
// CHECK: stablehlo.add
// CHECK: stablehlo.convert
// CHECK: stablehlo.broadcast_in_dim
func.func @kept(%x: tensor<f32>) -> (tensor<i32>, tensor<i1>, tensor<complex<f32>>, tensor<f32>, tensor<i32>, tensor<2x2xi32>) {
  %a = stablehlo.constant dense<-7> : tensor<i32>
  %b = stablehlo.constant dense<2> : tensor<i32>
  %0 = stablehlo.divide %a, %b : tensor<i32>
  %p = stablehlo.constant dense<-0.0> : tensor<f32>
  %q = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.compare LT, %p, %q, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %2 = stablehlo.negate %c : tensor<complex<f32>>
  %3 = stablehlo.add %x, %q : tensor<f32>
  %h = stablehlo.constant dense<2.5> : tensor<f32>
  %4 = stablehlo.convert %h : (tensor<f32>) -> tensor<i32>
  %v = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %5 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<2xi32>) -> tensor<2x2xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<i32>, tensor<i1>, tensor<complex<f32>>, tensor<f32>, tensor<i32>, tensor<2x2xi32>
}

// Concatenations, pads, slices, transposes, reversals and dynamic slices of splats of one
// value are that splat (IREE folds them itself, then miscompiles a sum of the splat
// converted: 1 for the seven trues below); of other values they stay.
// CHECK-LABEL: func.func @moved_splats
// CHECK: %[[SEVEN:.*]] = stablehlo.constant dense<1> : tensor<7xi32>
// CHECK: stablehlo.reduce(%[[SEVEN]]
// CHECK-DAG: %[[PADDED:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<2x6xf32>
// CHECK-DAG: %[[MOVED:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<2x1xf32>
// CHECK-NOT: stablehlo.pad
// CHECK-NOT: stablehlo.transpose
// CHECK-NOT: stablehlo.reverse
// CHECK-NOT: stablehlo.dynamic_slice
// CHECK: %[[MIXED:.*]] = stablehlo.concatenate
// CHECK: return %{{.*}}, %[[PADDED]], %[[MOVED]], %[[MIXED]]
func.func @moved_splats(%i: tensor<i32>) -> (tensor<i32>, tensor<2x6xf32>, tensor<2x1xf32>, tensor<7xi1>) {
  %t3 = stablehlo.constant dense<true> : tensor<3xi1>
  %t4 = stablehlo.constant dense<true> : tensor<4xi1>
  %f4 = stablehlo.constant dense<false> : tensor<4xi1>
  %0 = stablehlo.concatenate %t3, %t4, dim = 0 : (tensor<3xi1>, tensor<4xi1>) -> tensor<7xi1>
  %1 = stablehlo.convert %0 : (tensor<7xi1>) -> tensor<7xi32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %2 = stablehlo.reduce(%1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<7xi32>, tensor<i32>) -> tensor<i32>
  %two = stablehlo.constant dense<2.0> : tensor<3x2xf32>
  %pad = stablehlo.constant dense<2.0> : tensor<f32>
  %3 = stablehlo.transpose %two, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.pad %3, %pad, low = [0, 1], high = [0, 2], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x6xf32>
  %5 = stablehlo.reverse %4, dims = [1] : tensor<2x6xf32>
  %6 = stablehlo.dynamic_slice %5, %i, %i, sizes = [2, 1] : (tensor<2x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x1xf32>
  %7 = stablehlo.concatenate %t3, %f4, dim = 0 : (tensor<3xi1>, tensor<4xi1>) -> tensor<7xi1>
  return %2, %4, %6, %7 : tensor<i32>, tensor<2x6xf32>, tensor<2x1xf32>, tensor<7xi1>
}
