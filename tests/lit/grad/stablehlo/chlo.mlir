// The CHLO ops JAX exports for special functions and inverse trigonometry (chlo.erf,
// chlo.lgamma, chlo.atan, ...) and StableHLO's tan. The lowering legalizes CHLO after
// tenzr-grad, so rules see the ops as JAX printed them.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// erf' = 2/√π·e^(-x²).
// CHECK-LABEL: func.func @erf_vjp
// CHECK: %[[C:.*]] = stablehlo.constant dense<1.12837923>
// CHECK: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK: %[[NEG:.*]] = stablehlo.negate %[[SQ]]
// CHECK: %[[E:.*]] = stablehlo.exponential %[[NEG]]
// CHECK: %[[D:.*]] = stablehlo.multiply %[[C]], %[[E]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[D]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @erf(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.erf %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// lgamma' = digamma.
// CHECK-LABEL: func.func @lgamma_vjp
// CHECK: %[[D:.*]] = chlo.digamma %arg0
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[D]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @lgamma(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.lgamma %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// atan' = 1/(1 + x²).
// CHECK-LABEL: func.func @atan_vjp
// CHECK: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK: %[[D:.*]] = stablehlo.add %{{.*}}, %[[SQ]]
// CHECK: %[[DX:.*]] = stablehlo.divide %arg1, %[[D]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @atan(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.atan %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// asinh' = 1/√(x² + 1).
// CHECK-LABEL: func.func @asinh_vjp
// CHECK: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK: %[[S:.*]] = stablehlo.add %[[SQ]], %{{.*}}
// CHECK: %[[R:.*]] = stablehlo.rsqrt %[[S]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[R]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @asinh(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.asinh %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// erf_inv' = √π/2·e^(y²), from the forward result y.
// CHECK-LABEL: func.func @erf_inv_vjp
// CHECK: %[[Y:.*]] = chlo.erf_inv %arg0
// CHECK: %[[C:.*]] = stablehlo.constant dense<0.886226952>
// CHECK: %[[SQ:.*]] = stablehlo.multiply %[[Y]], %[[Y]]
// CHECK: %[[E:.*]] = stablehlo.exponential %[[SQ]]
// CHECK: %[[D:.*]] = stablehlo.multiply %[[C]], %[[E]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[D]]
// CHECK: return %[[Y]], %[[DX]]
func.func @erf_inv(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.erf_inv %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// tan' = 1 + tan², from the forward result.
// CHECK-LABEL: func.func @tan_vjp
// CHECK: %[[T:.*]] = stablehlo.tan %arg0
// CHECK: %[[SQ:.*]] = stablehlo.multiply %[[T]], %[[T]]
// CHECK: %[[D:.*]] = stablehlo.add %{{.*}}, %[[SQ]]
// CHECK: %[[DX:.*]] = stablehlo.multiply %arg1, %[[D]]
// CHECK: return %[[T]], %[[DX]]
func.func @tan(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.tan %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
