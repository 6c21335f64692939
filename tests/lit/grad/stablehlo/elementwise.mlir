// StableHLO's elementwise ops, comparisons, select, clamp and convert as JAX exports them.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// d(x·y + eˣ): x̄ = ȳ·eˣ + ȳ·y, ȳ_y = ȳ·x (the forward eˣ is reused).
// CHECK-LABEL: func.func @mul_add_vjp
// CHECK: %[[E:.*]] = stablehlo.exponential %arg0
// CHECK: %[[A:.*]] = stablehlo.multiply %arg2, %[[E]]
// CHECK: %[[B:.*]] = stablehlo.multiply %arg2, %arg1
// CHECK: %[[DY:.*]] = stablehlo.multiply %arg2, %arg0
// CHECK: %[[DX:.*]] = stablehlo.add %[[A]], %[[B]]
// CHECK: return %{{.*}}, %[[DX]], %[[DY]]
func.func @mul_add(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<3xf32>
  %1 = stablehlo.exponential %x : tensor<3xf32>
  %2 = stablehlo.add %0, %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}

// q = log(x)/y: x̄ = ȳ/y/x, ȳ_y = -(ȳ·q)/y.
// CHECK-LABEL: func.func @div_log_vjp
// CHECK: %[[Q:.*]] = stablehlo.divide %{{.*}}, %arg1
// CHECK: %[[T:.*]] = stablehlo.multiply %arg2, %[[Q]]
// CHECK: %[[U:.*]] = stablehlo.divide %[[T]], %arg1
// CHECK: %[[DY:.*]] = stablehlo.negate %[[U]]
// CHECK: %[[V:.*]] = stablehlo.divide %arg2, %arg1
// CHECK: %[[DX:.*]] = stablehlo.divide %[[V]], %arg0
// CHECK: return %[[Q]], %[[DX]], %[[DY]]
func.func @div_log(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.log %x : tensor<3xf32>
  %1 = stablehlo.divide %0, %y : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// tᵖ: t̄ = ȳ·p·t^(p-1) with the exponent 1 where p = 0 (so that its own derivative is
// finite there), p̄ = ȳ·log(t)·tᵖ with log(1) where t = 0; tanh's x̄ = t̄·sech²(x),
// written 4e^(-2|x|)/(1 + e^(-2|x|))², which does not overflow.
// CHECK-LABEL: func.func @tanh_pow_vjp
// CHECK: %[[T:.*]] = stablehlo.tanh %arg0
// CHECK: %[[P:.*]] = stablehlo.power %[[T]], %arg1
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00>
// CHECK: %[[P0:.*]] = stablehlo.compare EQ, %arg1, %[[ZERO]]
// CHECK: %[[PM1:.*]] = stablehlo.subtract %arg1
// CHECK: %[[EXP:.*]] = stablehlo.select %[[P0]], %{{.*}}, %[[PM1]]
// CHECK: %[[TP:.*]] = stablehlo.power %[[T]], %[[EXP]]
// CHECK: %[[D:.*]] = stablehlo.multiply %arg1, %[[TP]]
// CHECK: %[[DT:.*]] = stablehlo.multiply %arg2, %[[D]]
// CHECK: %[[T0:.*]] = stablehlo.compare EQ, %[[T]], %[[ZERO]]
// CHECK: %[[SAFE:.*]] = stablehlo.select %[[T0]], %{{.*}}, %[[T]]
// CHECK: %[[LOG:.*]] = stablehlo.log %[[SAFE]]
// CHECK: %[[L:.*]] = stablehlo.multiply %[[LOG]], %[[P]]
// CHECK: %[[DP:.*]] = stablehlo.multiply %arg2, %[[L]]
// CHECK: stablehlo.abs %arg0
// CHECK: %[[SECH2:.*]] = stablehlo.divide
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[DT]], %[[SECH2]]
// CHECK: return %[[P]], %[[DX]], %[[DP]]
func.func @tanh_pow(%x: tensor<3xf32>, %p: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.tanh %x : tensor<3xf32>
  %1 = stablehlo.power %0, %p : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// max(x, 0) with a constant: ȳ to the larger operand, ½ each at a tie (as JAX); the
// constant's share is not computed.
// CHECK-LABEL: func.func @relu_vjp
// CHECK: %[[HALF:.*]] = stablehlo.constant dense<5.000000e-01>
// CHECK: %[[GT:.*]] = stablehlo.compare GT, %arg0, %[[Z:.*]], FLOAT
// CHECK: %[[EQ:.*]] = stablehlo.compare EQ, %arg0, %[[Z]], FLOAT
// CHECK: %[[TIE:.*]] = stablehlo.select %[[EQ]], %[[HALF]], %{{.*}}
// CHECK: %[[W:.*]] = stablehlo.select %[[GT]], %{{.*}}, %[[TIE]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[W]]
// CHECK-NOT: stablehlo.subtract
// CHECK: return %{{.*}}, %[[DX]]
func.func @relu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.maximum %x, %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}

// clamp as JAX differentiates it: x̄ = ȳ strictly inside, low̄ = Σ ȳ where x < low < high,
// high̄ = Σ ȳ where high < x (scalar bounds sum their broadcast cotangent).
// CHECK-LABEL: func.func @clamp_vjp
// CHECK: %[[LO:.*]] = stablehlo.broadcast_in_dim %arg0, dims = []
// CHECK: %[[HI:.*]] = stablehlo.broadcast_in_dim %arg2, dims = []
// CHECK: %[[BELOW:.*]] = stablehlo.compare LT, %arg1, %[[LO]], FLOAT
// CHECK: %[[ABOVE:.*]] = stablehlo.compare LT, %[[HI]], %arg1, FLOAT
// CHECK: %[[GT:.*]] = stablehlo.compare GT, %arg1, %[[LO]], FLOAT
// CHECK: %[[LT:.*]] = stablehlo.compare LT, %arg1, %[[HI]], FLOAT
// CHECK: %[[INSIDE:.*]] = stablehlo.and %[[GT]], %[[LT]]
// CHECK: %[[ORDERED:.*]] = stablehlo.compare LT, %[[LO]], %[[HI]], FLOAT
// CHECK: %[[LOW_WINS:.*]] = stablehlo.and %[[BELOW]], %[[ORDERED]]
// CHECK: %[[DLO:.*]] = stablehlo.select %[[LOW_WINS]], %arg3
// CHECK: %[[DX:.*]] = stablehlo.select %[[INSIDE]], %arg3
// CHECK: %[[DHI:.*]] = stablehlo.select %[[ABOVE]], %arg3
// CHECK: %[[SLO:.*]] = stablehlo.reduce(%[[DLO]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[SHI:.*]] = stablehlo.reduce(%[[DHI]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: return %{{.*}}, %[[SLO]], %[[DX]], %[[SHI]]
func.func @clamp(%lo: tensor<f32>, %x: tensor<3xf32>, %hi: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// jnp.where: each branch gets ȳ where it was chosen; the comparison gets none.
// CHECK-LABEL: func.func @where_vjp
// CHECK: %[[C:.*]] = stablehlo.compare GT, %arg0, %arg1, FLOAT
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00>
// CHECK: %[[DX:.*]] = stablehlo.select %[[C]], %arg2, %[[ZERO]]
// CHECK: %[[DS:.*]] = stablehlo.select %[[C]], %[[ZERO]], %arg2
// CHECK: %[[COS:.*]] = stablehlo.cosine %arg1
// CHECK: %[[DY:.*]] = stablehlo.multiply %[[DS]], %[[COS]]
// CHECK: return %{{.*}}, %[[DX]], %[[DY]]
func.func @where(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.compare GT, %x, %y, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %1 = stablehlo.sine %y : tensor<3xf32>
  %2 = stablehlo.select %0, %x, %1 : tensor<3xi1>, tensor<3xf32>
  return %2 : tensor<3xf32>
}

// A float conversion's cotangent converts back.
// CHECK-LABEL: func.func @convert_vjp
// CHECK: %[[DX:.*]] = stablehlo.convert %arg1 : (tensor<3xf16>) -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @convert(%x: tensor<3xf32>) -> tensor<3xf16> {
  %0 = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// |x|: as JAX, ȳ where x ≥ 0 (so 1 at 0), -ȳ elsewhere.
// CHECK-LABEL: func.func @abs_vjp
// CHECK: %[[GE:.*]] = stablehlo.compare GE, %arg0, %{{.*}}, FLOAT
// CHECK: %[[NEG:.*]] = stablehlo.negate %arg1
// CHECK: %[[DX:.*]] = stablehlo.select %[[GE]], %arg1, %[[NEG]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @abs(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.abs %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
