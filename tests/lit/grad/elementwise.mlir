// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// The sweep un-broadcasts: the [3] operand's cotangent sums ybar over the broadcast dim.
// CHECK-LABEL: func.func @add_broadcast_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<2x3xf32>)
// CHECK: %[[SUM:.*]] = stablehlo.reduce(%[[YBAR]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[YBAR]], %[[SUM]]
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul_scalar_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>, %[[YBAR:.*]]: tensor<2x3xf32>)
// CHECK: %[[SB:.*]] = stablehlo.broadcast_in_dim %[[S]], dims = []
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[YBAR]], %[[SB]]
// CHECK: %[[P:.*]] = stablehlo.multiply %[[YBAR]], %[[X]]
// CHECK: %[[DS:.*]] = stablehlo.reduce(%[[P]] init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
// CHECK: return %{{.*}}, %[[DX]], %[[DS]]
func.func @mul_scalar(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "tenzr.mul"(%x, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// The divisor's adjoint reuses the forward quotient: -ybar * out / y.
// CHECK-LABEL: func.func @div_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK: %[[OUT:.*]] = "tenzr.div"(%[[X]], %[[Y]])
// CHECK: %[[T:.*]] = stablehlo.multiply %[[YBAR]], %[[OUT]]
// CHECK: %[[U:.*]] = stablehlo.divide %[[T]], %[[Y]]
// CHECK: %[[DY:.*]] = stablehlo.negate %[[U]]
// CHECK: %[[DX:.*]] = stablehlo.divide %[[YBAR]], %[[Y]]
// CHECK: return %[[OUT]], %[[DX]], %[[DY]]
func.func @div(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.div"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// x̄ = ȳ·y·x^(y-1), with the exponent 1 where y = 0 (so x̄ = 0 there, and no 0^-1 appears even
// in this rule's own derivative; tenzr-expand-math makes the power exact for negative
// bases); ȳ' = ȳ·log(x)·out with log(1) where x = 0.
// CHECK-LABEL: func.func @pow_vjp
// CHECK: %[[YZERO:.*]] = stablehlo.compare EQ, %arg1
// CHECK: %[[YM1:.*]] = stablehlo.subtract %arg1, %{{.*}} : tensor<3xf32>
// CHECK: %[[E:.*]] = stablehlo.select %[[YZERO]], %{{.*}}, %[[YM1]]
// CHECK: %[[P:.*]] = stablehlo.power %arg0, %[[E]]
// CHECK: %[[SLOPE:.*]] = stablehlo.multiply %arg1, %[[P]]
// CHECK: stablehlo.multiply %arg2, %[[SLOPE]]
// CHECK: stablehlo.log
// CHECK: return
func.func @pow(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.pow"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Ties split the cotangent: the larger operand gets weight 1, an equal one 0.5.
// CHECK-LABEL: func.func @maximum_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK-DAG: %[[HALF:.*]] = stablehlo.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK-DAG: %[[GT:.*]] = stablehlo.compare GT, %[[X]], %[[Y]]
// CHECK-DAG: %[[EQ:.*]] = stablehlo.compare EQ, %[[X]], %[[Y]]
// CHECK: %[[TIE:.*]] = stablehlo.select %[[EQ]], %[[HALF]]
// CHECK: %[[W:.*]] = stablehlo.select %[[GT]], %{{.*}}, %[[TIE]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[YBAR]], %[[W]]
// CHECK: %[[DY:.*]] = stablehlo.subtract %[[YBAR]], %[[DX]]
// CHECK: return %{{.*}}, %[[DX]], %[[DY]]
func.func @maximum(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.maximum"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// The condition gets no cotangent.
// CHECK-LABEL: func.func @select_vjp
// CHECK-SAME: (%[[C:.*]]: tensor<3xi1>, %[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK-SAME: -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00>
// CHECK: %[[DA:.*]] = stablehlo.select %[[C]], %[[YBAR]], %[[ZERO]]
// CHECK: %[[DB:.*]] = stablehlo.select %[[C]], %[[ZERO]], %[[YBAR]]
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @select(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.select"(%c, %x, %y) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// tanh's slope is sech² = 4e/(1+e)², e = exp(-2|x|) (exact where tanh rounds to ±1);
// exp's adjoint reuses its forward output.
// CHECK-LABEL: func.func @exp_tanh_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = "tenzr.exp"(%[[X]])
// CHECK: %[[T:.*]] = "tenzr.tanh"(%[[E]])
// CHECK: %[[A:.*]] = stablehlo.abs %[[E]]
// CHECK: %[[M:.*]] = stablehlo.multiply %{{.*}}, %[[A]]
// CHECK: %[[EM:.*]] = stablehlo.exponential %[[M]]
// CHECK: %[[S:.*]] = stablehlo.divide
// CHECK: %[[DT:.*]] = stablehlo.multiply %[[YBAR]], %[[S]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[DT]], %[[E]]
// CHECK: return %[[T]], %[[DX]]
func.func @exp_tanh(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.tanh"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// x feeds two ops: their cotangents accumulate with one add.
// CHECK-LABEL: func.func @fan_out_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[YBAR:.*]]: tensor<3xf32>)
// CHECK: %[[S:.*]] = "tenzr.sin"(%[[X]])
// CHECK: %[[DS:.*]] = stablehlo.multiply %[[YBAR]], %[[X]]
// CHECK: %[[DX1:.*]] = stablehlo.multiply %[[YBAR]], %[[S]]
// CHECK: %[[COS:.*]] = stablehlo.cosine %[[X]]
// CHECK: %[[DX2:.*]] = stablehlo.multiply %[[DS]], %[[COS]]
// CHECK: %[[DX:.*]] = stablehlo.add %[[DX1]], %[[DX2]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @fan_out(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.mul"(%0, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// A zero-gradient op on the only path: the argument's cotangent is a zero constant.
// CHECK-LABEL: func.func @zero_gradient_vjp
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %[[Z]]
func.func @zero_gradient(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.floor"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
