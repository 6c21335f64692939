// RUN: tenzr-opt %s --split-input-file --tenzr-grad=mode=value_and_grad | filecheck %s
// RUN: tenzr-opt %s --split-input-file --tenzr-grad=mode=grad | filecheck %s --check-prefix=GRAD
// RUN: tenzr-opt %s --split-input-file --tenzr-grad="mode=value_and_grad recompute=false" | filecheck %s --check-prefix=KEPT

// Large elementwise values computed from the arguments alone are recomputed for the sweep
// from an optimization barrier on the arguments (so CSE cannot merge the copies back),
// instead of being kept from the forward pass: IREE then fuses the recomputation into the
// adjoint's loop and stores nothing. The returned value still comes from the forward ops.
// CHECK-LABEL: func.func @chain_value_and_grad
// CHECK-SAME: (%[[X:.*]]: tensor<256x256xf32>)
// CHECK: %[[SIN:.*]] = "tenzr.sin"(%[[X]])
// CHECK: %[[EXP:.*]] = "tenzr.exp"(%[[SIN]])
// CHECK: %[[SUM:.*]] = "tenzr.reduce_sum"
// CHECK: %[[XB:.*]] = stablehlo.optimization_barrier %[[X]] : tensor<256x256xf32>
// CHECK: %[[SIN2:.*]] = "tenzr.sin"(%[[XB]])
// CHECK: %[[EXP2:.*]] = "tenzr.exp"(%[[SIN2]])
// CHECK: stablehlo.multiply %{{.*}}, %[[EXP2]]
// CHECK: stablehlo.cosine %[[XB]]
// CHECK: return %[[SUM]], %{{.*}}
// With recompute=false the sweep reads the forward values.
// KEPT-LABEL: func.func @chain_value_and_grad
// KEPT-NOT: optimization_barrier
// KEPT: stablehlo.cosine %arg0
// Without forward outputs to return, nothing would be computed twice: no copies.
// GRAD-LABEL: func.func @chain_grad
// GRAD-NOT: optimization_barrier
// GRAD: return
func.func @chain(%x: tensor<256x256xf32>) -> tensor<f32> {
  %0 = "tenzr.sin"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "tenzr.exp"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "tenzr.add"(%1, %x) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "tenzr.reduce_sum"(%2) : (tensor<256x256xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// -----

// Small values, or values that depend on a non-elementwise op, are kept.
// CHECK-LABEL: func.func @small_value_and_grad
// CHECK-NOT: optimization_barrier
// CHECK: return
func.func @small(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<f32> {
  %0 = "tenzr.sin"(%x) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = "tenzr.exp"(%0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = "tenzr.matmul"(%1, %w) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %3 = "tenzr.tanh"(%2) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %4 = "tenzr.reduce_sum"(%3) : (tensor<16x16xf32>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// A cone of more than 3 transcendental ops is not recomputed: computing it twice costs more
// than the few values IREE then stores for the adjoint (tenzr_grad.REMAT_MAX_TRANSCENDENTALS).
// CHECK-LABEL: func.func @long_value_and_grad
// CHECK-NOT: optimization_barrier
// CHECK: return
func.func @long(%x: tensor<256x256xf32>) -> tensor<f32> {
  %0 = "tenzr.sin"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "tenzr.exp"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "tenzr.sin"(%1) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "tenzr.exp"(%2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %4 = "tenzr.reduce_sum"(%3) : (tensor<256x256xf32>) -> tensor<f32>
  return %4 : tensor<f32>
}
