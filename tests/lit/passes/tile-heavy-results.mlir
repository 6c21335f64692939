// tenzr-tile-heavy-results: a large result of four transcendentals gets a row sum beside
// it behind a barrier; two transcendentals, or a small result, are left alone.
// RUN: tenzr-opt %s --tenzr-tile-heavy-results | filecheck %s

// CHECK-LABEL: func.func @heavy
// CHECK: stablehlo.exponential
// CHECK: %[[V:.*]] = stablehlo.exponential %{{.*}} : tensor<256x256xf32>
// CHECK: %[[ROWS:.*]] = stablehlo.reduce(%[[V]] init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK: %[[B:.*]]:2 = stablehlo.optimization_barrier %[[V]], %[[ROWS]]
// CHECK: return %[[B]]#0
func.func @heavy(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.sine %x : tensor<256x256xf32>
  %1 = stablehlo.exponential %0 : tensor<256x256xf32>
  %2 = stablehlo.sine %1 : tensor<256x256xf32>
  %3 = stablehlo.exponential %2 : tensor<256x256xf32>
  return %3 : tensor<256x256xf32>
}

// CHECK-LABEL: func.func @light
// CHECK-NOT: optimization_barrier
func.func @light(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.sine %x : tensor<256x256xf32>
  %1 = stablehlo.exponential %0 : tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

// CHECK-LABEL: func.func @small
// CHECK-NOT: optimization_barrier
func.func @small(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.sine %x : tensor<16x16xf32>
  %1 = stablehlo.exponential %0 : tensor<16x16xf32>
  %2 = stablehlo.sine %1 : tensor<16x16xf32>
  %3 = stablehlo.exponential %2 : tensor<16x16xf32>
  return %3 : tensor<16x16xf32>
}
