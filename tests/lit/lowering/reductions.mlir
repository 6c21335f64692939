// The lowering, with the reduction and sort forms the lowering pipeline then picks.
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo --tenzr-split-reductions --tenzr-sort-rows | filecheck %s

// CHECK-LABEL: func.func @reduce_sum
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK: stablehlo.reduce(%{{.*}} init: %[[ZERO]]) applies stablehlo.add across dimensions = [1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
func.func @reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = "tenzr.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Negative axes count from the end; several axes reduce one at a time, innermost first;
// keepdims reshapes the reduced result.
// CHECK-LABEL: func.func @reduce_prod_keepdims
// CHECK: stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[R1:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.multiply across dimensions = [2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[R:.*]] = stablehlo.reduce(%[[R1]] init: %{{.*}}) applies stablehlo.multiply across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: stablehlo.reshape %[[R]] : (tensor<3xf32>) -> tensor<1x3x1xf32>
func.func @reduce_prod_keepdims(%x: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
  %0 = "tenzr.reduce_prod"(%x) {axes = array<i64: 0, -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// CHECK-LABEL: func.func @reduce_max_all
// CHECK: stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[ROWS:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [1]
// CHECK: stablehlo.reduce(%[[ROWS]] init: %{{.*}}) applies stablehlo.maximum across dimensions = [0]
func.func @reduce_max_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "tenzr.reduce_max"(%x) : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @reduce_min_i32
// CHECK: stablehlo.constant dense<2147483647> : tensor<i32>
// CHECK: applies stablehlo.minimum across dimensions = [0]
func.func @reduce_min_i32(%x: tensor<2x3xi32>) -> tensor<3xi32> {
  %0 = "tenzr.reduce_min"(%x) {axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// A two-operand reduce carries (value, index); ties and NaNs pick the first index.
// CHECK-LABEL: func.func @argmax
// CHECK: %[[IDS:.*]] = stablehlo.iota dim = 1 : tensor<2x3xi64>
// CHECK: %[[R:.*]]:2 = stablehlo.reduce(%{{.*}} init: %{{.*}}), (%[[IDS]] init: %{{.*}}) across dimensions = [1]
// CHECK: stablehlo.compare GT
// CHECK: stablehlo.return
// CHECK: return %[[R]]#1 : tensor<2xi64>
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %0 = "tenzr.argmax"(%x) {axis = 1} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @sort_descending
// CHECK: "stablehlo.sort"(%{{.*}}) <{dimension = 0 : i64, is_stable = true}>
// CHECK: ^bb0(%[[L:.*]]: tensor<f32>, %[[R:.*]]: tensor<f32>):
// CHECK: stablehlo.compare LT, %[[R]], %[[L]], FLOAT
func.func @sort_descending(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "tenzr.sort"(%x) {descending = true} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// The iota operand breaks ties by position: IREE's sort is not stable on its own. The
// order is then total, so the sort is marked unstable (tenzr-sort-rows adds no iota).
// CHECK-LABEL: func.func @argsort
// CHECK: %[[IDS:.*]] = stablehlo.iota dim = 1 : tensor<2x5xi64>
// CHECK: %[[S:.*]]:2 = "stablehlo.sort"(%{{.*}}, %[[IDS]]) <{dimension = 1 : i64, is_stable = false}>
// CHECK: ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %[[I:.*]]: tensor<i64>, %[[J:.*]]: tensor<i64>):
// CHECK: stablehlo.compare LT, %[[I]], %[[J]], SIGNED
// CHECK: return %[[S]]#1
func.func @argsort(%x: tensor<2x5xf32>) -> tensor<2x5xi64> {
  %0 = "tenzr.argsort"(%x) {axis = 1} : (tensor<2x5xf32>) -> tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
}
