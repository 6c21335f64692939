// On CPU, a large result of an elementwise chain with 4 or more transcendentals gets a row
// sum beside it behind an optimization barrier: IREE then tiles the chain's dispatch 8 rows
// by 8 columns instead of one vector at a time (python/tenzr/compiler.py).
// RUN: tenzr-compile %s --emit=stablehlo | filecheck %s
// RUN: tenzr-compile %s --emit=stablehlo --target=vulkan | filecheck %s --check-prefix=VULKAN

// (The chain is one stablehlo.map: each float32 sine reads its operand twice, for its sign.)
// CHECK-LABEL: func.func @heavy
// CHECK: %[[E:[0-9]+]] = "stablehlo.map"
// CHECK: stablehlo.sine
// CHECK: stablehlo.exponential
// CHECK: stablehlo.sine
// CHECK: stablehlo.exponential
// CHECK: %[[ROWS:[0-9]+]] = stablehlo.reduce(%[[E]] init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: %[[OUT:[0-9]+]]:2 = stablehlo.optimization_barrier %[[E]], %[[ROWS]]
// CHECK: return %[[OUT]]#0
func.func @heavy(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "tenzr.exp"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "tenzr.sin"(%1) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "tenzr.exp"(%2) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  return %3 : tensor<256x256xf32>
}

// Fewer transcendentals, or a small result: left alone (and on Vulkan, always).
// CHECK-LABEL: func.func @light
// CHECK-NOT: optimization_barrier
// CHECK-LABEL: func.func @small
// CHECK-NOT: optimization_barrier
// VULKAN-NOT: optimization_barrier
func.func @light(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "tenzr.exp"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

func.func @small(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = "tenzr.exp"(%0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %2 = "tenzr.sin"(%1) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %3 = "tenzr.exp"(%2) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %3 : tensor<16x16xf32>
}
