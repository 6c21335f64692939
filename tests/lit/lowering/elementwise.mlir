// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo | filecheck %s

// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[Y]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[R:.*]] = stablehlo.add %[[X]], %[[B]] : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @outer_product
// CHECK-SAME: (%[[X:.*]]: tensor<2x1xf32>, %[[Y:.*]]: tensor<1x3xf32>)
// CHECK-DAG: %[[BX:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-DAG: %[[BY:.*]] = stablehlo.broadcast_in_dim %[[Y]], dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: stablehlo.multiply %[[BX]], %[[BY]] : tensor<2x3xf32>
func.func @outer_product(%x: tensor<2x1xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.mul"(%x, %y) : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @scalar_operand
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4xf32>
// CHECK: stablehlo.power
func.func @scalar_operand(%x: tensor<4xf32>, %p: tensor<f32>) -> tensor<4xf32> {
  %0 = "tenzr.pow"(%x, %p) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @binary_family
// CHECK: stablehlo.subtract
// CHECK: stablehlo.divide
// CHECK: stablehlo.maximum
// CHECK: stablehlo.minimum
func.func @binary_family(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.sub"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.div"(%0, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "tenzr.maximum"(%1, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "tenzr.minimum"(%2, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}

// CHECK-LABEL: func.func @compare_select
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK: %[[C:.*]] = stablehlo.compare GE, %[[X]], %[[Y]], FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK: stablehlo.select %[[C]], %[[X]], %[[Y]] : tensor<3xi1>, tensor<3xf32>
func.func @compare_select(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %c = "tenzr.compare"(%x, %y) {direction = "ge"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %0 = "tenzr.select"(%c, %x, %y) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @compare_signed
// CHECK: stablehlo.compare LT, %{{.*}}, %{{.*}}, SIGNED
func.func @compare_signed(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi1> {
  %c = "tenzr.compare"(%x, %y) {direction = "lt"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return %c : tensor<3xi1>
}

// CHECK-LABEL: func.func @unary_family
// CHECK: stablehlo.negate
// CHECK: stablehlo.exponential
// CHECK: stablehlo.log
// CHECK: stablehlo.sqrt
// CHECK: stablehlo.rsqrt
// CHECK: stablehlo.tanh
// CHECK: stablehlo.logistic
// CHECK: stablehlo.sine
// CHECK: stablehlo.cosine
// CHECK: stablehlo.abs
// CHECK: stablehlo.log_plus_one
// CHECK: stablehlo.exponential_minus_one
// CHECK: stablehlo.sign
// CHECK: stablehlo.floor
// CHECK: stablehlo.round_nearest_even
// CHECK-NOT: tenzr.
func.func @unary_family(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.exp"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "tenzr.log"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = "tenzr.sqrt"(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = "tenzr.rsqrt"(%3) : (tensor<3xf32>) -> tensor<3xf32>
  %5 = "tenzr.tanh"(%4) : (tensor<3xf32>) -> tensor<3xf32>
  %6 = "tenzr.sigmoid"(%5) : (tensor<3xf32>) -> tensor<3xf32>
  %7 = "tenzr.sin"(%6) : (tensor<3xf32>) -> tensor<3xf32>
  %8 = "tenzr.cos"(%7) : (tensor<3xf32>) -> tensor<3xf32>
  %9 = "tenzr.abs"(%8) : (tensor<3xf32>) -> tensor<3xf32>
  %10 = "tenzr.log1p"(%9) : (tensor<3xf32>) -> tensor<3xf32>
  %11 = "tenzr.expm1"(%10) : (tensor<3xf32>) -> tensor<3xf32>
  %12 = "tenzr.sign"(%11) : (tensor<3xf32>) -> tensor<3xf32>
  %13 = "tenzr.floor"(%12) : (tensor<3xf32>) -> tensor<3xf32>
  %14 = "tenzr.round"(%13) : (tensor<3xf32>) -> tensor<3xf32>
  %15 = "tenzr.stop_gradient"(%14) : (tensor<3xf32>) -> tensor<3xf32>
  return %15 : tensor<3xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: stablehlo.maximum %[[X]], %[[Z]]
func.func @relu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @convert
// CHECK: stablehlo.convert %{{.*}} : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK: stablehlo.convert %{{.*}} : (tensor<3xbf16>) -> tensor<3xi1>
func.func @convert(%x: tensor<3xf32>) -> tensor<3xi1> {
  %0 = "tenzr.convert"(%x) : (tensor<3xf32>) -> tensor<3xbf16>
  %1 = "tenzr.convert"(%0) : (tensor<3xbf16>) -> tensor<3xi1>
  return %1 : tensor<3xi1>
}

// A real float becomes an integer saturating, NaN 0 (as JAX's): brought into the range the
// conversion is defined on (2^31 - 128 is float32's largest below 2^31), the bounds and NaN
// selected after.
// CHECK-LABEL: func.func @convert_saturating
// CHECK: %[[HIGH:.*]] = stablehlo.maximum %[[X:.*]], %{{.*}} : tensor<3xf32>
// CHECK: %[[C:.*]] = stablehlo.minimum %[[HIGH]], %{{.*}} : tensor<3xf32>
// CHECK: %[[I:.*]] = stablehlo.convert %[[C]] : (tensor<3xf32>) -> tensor<3xi32>
// CHECK: %[[ABOVE:.*]] = stablehlo.compare GE, %[[X]], %{{.*}}, FLOAT
// CHECK: %[[S1:.*]] = stablehlo.select %[[ABOVE]], %{{.*}}, %[[I]]
// CHECK: %[[BELOW:.*]] = stablehlo.compare LE, %[[X]], %{{.*}}, FLOAT
// CHECK: %[[S2:.*]] = stablehlo.select %[[BELOW]], %{{.*}}, %[[S1]]
// CHECK: %[[NAN:.*]] = stablehlo.compare NE, %[[X]], %[[X]], FLOAT
// CHECK: stablehlo.select %[[NAN]], %{{.*}}, %[[S2]]
func.func @convert_saturating(%x: tensor<3xf32>) -> tensor<3xi32> {
  %0 = "tenzr.convert"(%x) : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// CHECK-LABEL: func.func @constant
// CHECK: stablehlo.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = "tenzr.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
