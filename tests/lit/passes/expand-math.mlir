// tenzr-expand-math rewrites the StableHLO math IREE lacks or gets wrong; the rest stays.
// RUN: tenzr-opt %s --split-input-file --tenzr-expand-math | filecheck %s

// float64 tanh goes through expm1 (IREE's CPU backend cannot link a float64 tanh), which
// is Kahan's (u - 1)·x/log(u) for u = exp(x).
// CHECK-LABEL: func.func @tanh_f64
// CHECK-NOT: stablehlo.tanh
// CHECK-NOT: stablehlo.exponential_minus_one
// CHECK: stablehlo.exponential
// CHECK: stablehlo.log
// CHECK: stablehlo.sign
func.func @tanh_f64(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.tanh %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// float64 log1p and expm1 (IREE's lose their precision near 0): Goldberg's log(u)·x/(u - 1)
// for u = 1 + x, and Kahan's (u - 1)·x/log(u) for u = exp(x), each x itself where u is 1.
// float32 keeps the ops.
// CHECK-LABEL: func.func @log1p_expm1_f64
// CHECK-NOT: stablehlo.log_plus_one
// CHECK-NOT: stablehlo.exponential_minus_one
// CHECK-DAG: %[[U:.*]] = stablehlo.add %{{.*}}, %arg0 : tensor<3xf64>
// CHECK-DAG: stablehlo.log %[[U]] : tensor<3xf64>
// CHECK-DAG: %[[E:.*]] = stablehlo.exponential %arg0 : tensor<3xf64>
// CHECK-DAG: stablehlo.compare EQ, %[[E]], %{{.*}} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xi1>
// CHECK: return
// CHECK-LABEL: func.func @log1p_expm1_f32
// CHECK: stablehlo.log_plus_one
// CHECK: stablehlo.exponential_minus_one
func.func @log1p_expm1_f64(%x: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %0 = stablehlo.log_plus_one %x : tensor<3xf64>
  %1 = stablehlo.exponential_minus_one %x : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}

func.func @log1p_expm1_f32(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.log_plus_one %x : tensor<3xf32>
  %1 = stablehlo.exponential_minus_one %x : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// float64 sine and cosine: reduction by pi/2 in three parts, then fdlibm's kernels,
// picked by quadrant.
// CHECK-LABEL: func.func @sine_cosine_f64
// CHECK-NOT: stablehlo.sine
// CHECK-NOT: stablehlo.cosine
// CHECK: stablehlo.round_nearest_even
// CHECK: stablehlo.select
// CHECK: return
func.func @sine_cosine_f64(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.sine %x : tensor<3xf64>
  %1 = stablehlo.cosine %0 : tensor<3xf64>
  return %1 : tensor<3xf64>
}

// -----

// float32 keeps IREE's own ops.
// CHECK-LABEL: func.func @float32_stays
// CHECK: stablehlo.sine
// CHECK: stablehlo.tanh
func.func @float32_stays(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.sine %x : tensor<3xf32>
  %1 = stablehlo.tanh %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

// A float power keeps NumPy's answers for negative and zero bases: the power is taken of
// |x| (1 where x = 0), then 0^y, the sign of odd integer exponents and NaN for fractional
// ones are selected in. Integer powers stay.
// CHECK-LABEL: func.func @power
// CHECK: %[[ABS:.*]] = stablehlo.abs %arg0
// CHECK: %[[SAFE:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[ABS]]
// CHECK: stablehlo.power %[[SAFE]], %arg1 : tensor<3xf32>
// CHECK: stablehlo.floor %arg1
// CHECK: stablehlo.power %arg2, %arg3 : tensor<3xi32>
func.func @power(%x: tensor<3xf32>, %y: tensor<3xf32>, %n: tensor<3xi32>, %m: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = stablehlo.power %x, %y : tensor<3xf32>
  %1 = stablehlo.power %n, %m : tensor<3xi32>
  return %0, %1 : tensor<3xf32>, tensor<3xi32>
}

// -----

// float64 tan is sin over cos (one reduction); atan2 goes through Cephes' atan.
// CHECK-LABEL: func.func @tan_atan2_f64
// CHECK-NOT: stablehlo.tan
// CHECK-NOT: stablehlo.atan2
// CHECK: stablehlo.divide
// CHECK: return
func.func @tan_atan2_f64(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %0 = stablehlo.tan %x : tensor<3xf64>
  %1 = stablehlo.atan2 %y, %x : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}

// -----

// float64 remainder (C's fmod, which IREE's CPU backend cannot link) is x - trunc(x/y)·y
// with one correcting step; float32 keeps IREE's exact remainder.
// CHECK-LABEL: func.func @remainder
// CHECK-NOT: stablehlo.remainder %{{.*}} : tensor<3xf64>
// CHECK: stablehlo.floor
// CHECK: stablehlo.remainder %{{.*}} : tensor<3xf32>
// CHECK: return
func.func @remainder(%x: tensor<3xf64>, %y: tensor<3xf64>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf64>, tensor<3xf32>) {
  %0 = stablehlo.remainder %x, %y : tensor<3xf64>
  %1 = stablehlo.remainder %a, %b : tensor<3xf32>
  return %0, %1 : tensor<3xf64>, tensor<3xf32>
}

// -----

// Complex math is rewritten on the parts, for every complex type: exp(a + bi) =
// e^a (cos b + i sin b); the float64 sine and cosine this makes are expanded in turn.
// CHECK-LABEL: func.func @complex_exp
// CHECK-NOT: stablehlo.exponential %{{.*}} : tensor<3xcomplex<f64>>
// CHECK-DAG: stablehlo.real
// CHECK-DAG: stablehlo.imag
// CHECK-NOT: stablehlo.sine
// CHECK-NOT: stablehlo.cosine
// CHECK: stablehlo.complex
func.func @complex_exp(%z: tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>> {
  %0 = stablehlo.exponential %z : tensor<3xcomplex<f64>>
  return %0 : tensor<3xcomplex<f64>>
}

// -----

// A complex dot_general becomes four real ones on the parts (IREE 3.13 gets some complex
// products with a constant operand wrong); a complex pad pads the parts apart.
// CHECK-LABEL: func.func @complex_dot_and_pad
// CHECK-COUNT-4: stablehlo.dot_general %{{.*}} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
// CHECK-COUNT-2: stablehlo.pad %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x5xf32>
// CHECK-NOT: complex<f32>>) -> tensor<2x3xcomplex
func.func @complex_dot_and_pad(%a: tensor<2x3xcomplex<f32>>, %b: tensor<3x3xcomplex<f32>>, %v: tensor<complex<f32>>) -> tensor<2x5xcomplex<f32>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [1] : (tensor<2x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  %1 = stablehlo.pad %0, %v, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x5xcomplex<f32>>
  return %1 : tensor<2x5xcomplex<f32>>
}

// -----

// A 0-d integer to float64 conversion (IREE's host VM has none) is rebuilt from float32
// parts: an i32's top 20 bits (shifted, signed) and low 12 bits (masked), each widened, then
// top * 4096 + low. A tensor of integers keeps its convert, as does float32.
// CHECK-LABEL: func.func @scalar_int_to_f64
// CHECK: %[[TWELVE:.*]] = stablehlo.constant dense<12> : tensor<i32>
// CHECK: %[[TOP:.*]] = stablehlo.shift_right_arithmetic %arg0, %[[TWELVE]]
// CHECK: %[[TOP32:.*]] = stablehlo.convert %[[TOP]] : (tensor<i32>) -> tensor<f32>
// CHECK: %[[TOP64:.*]] = stablehlo.convert %[[TOP32]] : (tensor<f32>) -> tensor<f64>
// CHECK: %[[MASK:.*]] = stablehlo.constant dense<4095> : tensor<i32>
// CHECK: %[[LOW:.*]] = stablehlo.and %arg0, %[[MASK]]
// CHECK: %[[LOW32:.*]] = stablehlo.convert %[[LOW]] : (tensor<i32>) -> tensor<f32>
// CHECK: %[[LOW64:.*]] = stablehlo.convert %[[LOW32]] : (tensor<f32>) -> tensor<f64>
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %[[TOP64]], %{{.*}} : tensor<f64>
// CHECK: %[[SUM:.*]] = stablehlo.add %[[SCALED]], %[[LOW64]] : tensor<f64>
// CHECK: stablehlo.convert %arg1 : (tensor<3xi32>) -> tensor<3xf64>
// CHECK: stablehlo.convert %arg0 : (tensor<i32>) -> tensor<f32>
// CHECK: return %[[SUM]]
func.func @scalar_int_to_f64(%i: tensor<i32>, %v: tensor<3xi32>) -> (tensor<f64>, tensor<3xf64>, tensor<f32>) {
  %0 = stablehlo.convert %i : (tensor<i32>) -> tensor<f64>
  %1 = stablehlo.convert %v : (tensor<3xi32>) -> tensor<3xf64>
  %2 = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f64>, tensor<3xf64>, tensor<f32>
}

// -----

// An i64 is three 21-bit parts: (top * 2^21 + middle) * 2^21 + low.
// CHECK-LABEL: func.func @scalar_i64_to_f64
// CHECK: stablehlo.shift_right_arithmetic %arg0, %{{.*}} : tensor<i64>
// CHECK: stablehlo.shift_right_arithmetic %arg0, %{{.*}} : tensor<i64>
// CHECK: stablehlo.and
// CHECK: stablehlo.and
// CHECK-NOT: (tensor<i64>) -> tensor<f64>
// CHECK: return
func.func @scalar_i64_to_f64(%i: tensor<i64>) -> tensor<f64> {
  %0 = stablehlo.convert %i : (tensor<i64>) -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

// A boolean converted to a real float is a select of 1 and 0 (IREE's data tiling fails on
// a matmul that reads the conversion); to an integer or a complex type it stays a convert.
// CHECK-LABEL: func.func @bool_to_float
// CHECK: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<4x3xf32>
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK: %[[MASK:.*]] = stablehlo.select %arg0, %[[ONE]], %[[ZERO]] : tensor<4x3xi1>, tensor<4x3xf32>
// CHECK: stablehlo.dot_general %[[MASK]], %arg1
// CHECK: stablehlo.convert %arg0 : (tensor<4x3xi1>) -> tensor<4x3xi32>
// CHECK-NOT: stablehlo.convert %arg0 : (tensor<4x3xi1>) -> tensor<4x3xf32>
func.func @bool_to_float(%b: tensor<4x3xi1>, %w: tensor<3x2xf32>) -> (tensor<4x2xf32>, tensor<4x3xi32>) {
  %0 = stablehlo.convert %b : (tensor<4x3xi1>) -> tensor<4x3xf32>
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.convert %b : (tensor<4x3xi1>) -> tensor<4x3xi32>
  return %1, %2 : tensor<4x2xf32>, tensor<4x3xi32>
}

// -----

// An int64 bit count counts the two 32-bit halves (IREE 3.13's portable Vulkan target
// fails on 64-bit ones); int32 counts stay.
// CHECK-LABEL: func.func @bit_counts
// CHECK: %[[LOW:.*]] = stablehlo.convert %arg0 : (tensor<3xi64>) -> tensor<3xi32>
// CHECK: %[[SHIFTED:.*]] = stablehlo.shift_right_logical %arg0, %{{.*}} : tensor<3xi64>
// CHECK: %[[HIGH:.*]] = stablehlo.convert %[[SHIFTED]] : (tensor<3xi64>) -> tensor<3xi32>
// CHECK: %[[A:.*]] = stablehlo.popcnt %[[LOW]] : tensor<3xi32>
// CHECK: %[[B:.*]] = stablehlo.popcnt %[[HIGH]] : tensor<3xi32>
// CHECK: %[[SUM:.*]] = stablehlo.add %[[A]], %[[B]] : tensor<3xi32>
// CHECK: %[[COUNT:.*]] = stablehlo.convert %[[SUM]] : (tensor<3xi32>) -> tensor<3xi64>
// CHECK: stablehlo.count_leading_zeros %{{.*}} : tensor<3xi32>
// CHECK: %[[ZERO:.*]] = stablehlo.compare EQ
// CHECK: stablehlo.select %[[ZERO]]
// CHECK: stablehlo.popcnt %arg1 : tensor<3xi32>
// CHECK-NOT: stablehlo.popcnt
func.func @bit_counts(%x: tensor<3xi64>, %y: tensor<3xi32>) -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi32>) {
  %0 = stablehlo.popcnt %x : tensor<3xi64>
  %1 = stablehlo.count_leading_zeros %x : tensor<3xi64>
  %2 = stablehlo.popcnt %y : tensor<3xi32>
  return %0, %1, %2 : tensor<3xi64>, tensor<3xi64>, tensor<3xi32>
}

// -----

// An unsigned integer converts to a float through a wider signed one (IREE 3.13 converts as
// signed where it looks through the conversion into a data-tiled matmul); a uint64's
// 32-bit halves go through float64.
// CHECK-LABEL: func.func @unsigned
// CHECK: %[[B:.*]] = stablehlo.bitcast_convert %arg0 : (tensor<3xui32>) -> tensor<3xi32>
// CHECK: %[[W:.*]] = stablehlo.convert %[[B]] : (tensor<3xi32>) -> tensor<3xi64>
// CHECK: %[[M:.*]] = stablehlo.and %[[W]], %{{.*}} : tensor<3xi64>
// CHECK: stablehlo.convert %[[M]] : (tensor<3xi64>) -> tensor<3xf64>
// CHECK: %[[H:.*]] = stablehlo.shift_right_logical %arg1, %{{.*}} : tensor<2xui64>
// CHECK: %[[HI:.*]] = stablehlo.bitcast_convert %[[H]] : (tensor<2xui64>) -> tensor<2xi64>
// CHECK: %[[L:.*]] = stablehlo.and %arg1, %{{.*}} : tensor<2xui64>
// CHECK: %[[LO:.*]] = stablehlo.bitcast_convert %[[L]] : (tensor<2xui64>) -> tensor<2xi64>
// CHECK: %[[HF:.*]] = stablehlo.convert %[[HI]] : (tensor<2xi64>) -> tensor<2xf64>
// CHECK: %[[S:.*]] = stablehlo.multiply %[[HF]], %{{.*}} : tensor<2xf64>
// CHECK: %[[LF:.*]] = stablehlo.convert %[[LO]] : (tensor<2xi64>) -> tensor<2xf64>
// CHECK: %[[T:.*]] = stablehlo.add %[[S]], %[[LF]] : tensor<2xf64>
// CHECK: stablehlo.convert %[[T]] : (tensor<2xf64>) -> tensor<2xf32>
// CHECK: stablehlo.convert %arg2 : (tensor<3xui8>) -> tensor<3xi32>
// A reverse of unsigned integers reverses signless ones (IREE 3.13 fails on the unsigned).
// CHECK: %[[S:.*]] = stablehlo.bitcast_convert %arg2 : (tensor<3xui8>) -> tensor<3xi8>
// CHECK: %[[R:.*]] = stablehlo.reverse %[[S]], dims = [0] : tensor<3xi8>
// CHECK: stablehlo.bitcast_convert %[[R]] : (tensor<3xi8>) -> tensor<3xui8>
func.func @unsigned(%u: tensor<3xui32>, %v: tensor<2xui64>, %w: tensor<3xui8>) -> (tensor<3xf64>, tensor<2xf32>, tensor<3xi32>, tensor<3xui8>) {
  %0 = stablehlo.convert %u : (tensor<3xui32>) -> tensor<3xf64>
  %1 = stablehlo.convert %v : (tensor<2xui64>) -> tensor<2xf32>
  %2 = stablehlo.convert %w : (tensor<3xui8>) -> tensor<3xi32>
  %3 = stablehlo.reverse %w, dims = [0] : tensor<3xui8>
  return %0, %1, %2, %3 : tensor<3xf64>, tensor<2xf32>, tensor<3xi32>, tensor<3xui8>
}

// -----

// A 0-d conversion between 32- and 64-bit integers, one unsigned, goes through signless
// ones (IREE's host VM has no unsigned integers): truncation, or sign extension and a mask.
// CHECK-LABEL: func.func @unsigned_scalars
// CHECK: stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<i32>) -> tensor<ui32>
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<ui32>) -> tensor<i32>
// CHECK: %[[W:.*]] = stablehlo.convert %{{.*}} : (tensor<i32>) -> tensor<i64>
// CHECK: stablehlo.and %[[W]], %{{.*}} : tensor<i64>
func.func @unsigned_scalars(%x: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.convert %x : (tensor<i64>) -> tensor<ui32>
  %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<i64>
  return %1 : tensor<i64>
}
