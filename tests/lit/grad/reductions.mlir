// The adjoints; the rank-1 sort as tenzr-sort-rows then makes it for IREE.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp --tenzr-sort-rows | filecheck %s

// CHECK-LABEL: func.func @reduce_sum_vjp
// CHECK: stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
func.func @reduce_sum(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "tenzr.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @reduce_sum_keepdims_vjp
// CHECK: stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
func.func @reduce_sum_keepdims(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %0 = "tenzr.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// No division: each element's cotangent is ȳ times the running product of the elements before
// it times that of those after (doubling steps of shift-and-multiply: exact with zeros, and
// differentiable again).
// CHECK-LABEL: func.func @reduce_prod_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[YBAR:.*]]: tensor<2xf32>)
// CHECK: %[[S1:.*]] = stablehlo.slice %[[X]] [0:2, 0:2]
// CHECK: %[[P1:.*]] = stablehlo.pad %[[S1]], %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: %[[R1:.*]] = stablehlo.multiply %[[X]], %[[P1]]
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 2], high = [0, 0]
// CHECK: %[[BEFORE:.*]] = stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: stablehlo.slice %[[X]] [0:2, 1:3]
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [0, 1]
// CHECK: %[[OTHERS:.*]] = stablehlo.multiply %[[BEFORE]], %{{.*}}
// CHECK: %[[Y:.*]] = stablehlo.broadcast_in_dim %[[YBAR]], dims = [0]
// CHECK: stablehlo.multiply %[[Y]], %[[OTHERS]]
// CHECK-NOT: stablehlo.divide
func.func @reduce_prod(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "tenzr.reduce_prod"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// ybar is split evenly among the elements equal to the max.
// CHECK-LABEL: func.func @reduce_max_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[YBAR:.*]]: tensor<f32>)
// CHECK: %[[M:.*]] = "tenzr.reduce_max"(%[[X]])
// CHECK: %[[MB:.*]] = stablehlo.broadcast_in_dim %[[M]], dims = []
// CHECK: %[[HIT:.*]] = stablehlo.compare EQ, %[[X]], %[[MB]], FLOAT
// CHECK: %[[HITF:.*]] = stablehlo.convert %[[HIT]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK: %[[N:.*]] = stablehlo.reduce(%[[HITF]] init: %{{.*}}) applies stablehlo.add across dimensions = [0, 1]
// CHECK: %[[SHARE:.*]] = stablehlo.divide %[[YBAR]], %[[N]] : tensor<f32>
// CHECK: %[[SB:.*]] = stablehlo.broadcast_in_dim %[[SHARE]], dims = []
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[HITF]], %[[SB]]
// CHECK: return %[[M]], %[[DX]]
func.func @reduce_max(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "tenzr.reduce_max"(%x) : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Values follow the sorting permutation back: ybar is scattered to the original positions.
// CHECK-LABEL: func.func @sort_vjp
// (A rank-1 sort of several operands is done as one row: IREE's Vulkan compiler crashes
// on the rank-1 form.)
// CHECK: %[[IDS:.*]] = stablehlo.iota dim = 0 : tensor<5xi64>
// CHECK: %[[ROW:.*]] = stablehlo.reshape %arg0 : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: %[[IDROW:.*]] = stablehlo.reshape %[[IDS]] : (tensor<5xi64>) -> tensor<1x5xi64>
// CHECK: %[[S:.*]]:2 = "stablehlo.sort"(%[[ROW]], %[[IDROW]])
// CHECK: %[[P:.*]] = stablehlo.reshape %[[S]]#1 : (tensor<1x5xi64>) -> tensor<5xi64>
// CHECK: %[[PERM:.*]] = stablehlo.convert %[[P]] : (tensor<5xi64>) -> tensor<5xi32>
// CHECK: %[[COL:.*]] = stablehlo.reshape %[[PERM]]
// CHECK: %[[DX:.*]] = "stablehlo.scatter"(%{{.*}}, %[[COL]], %arg1)
// CHECK: return %{{.*}}, %[[DX]]
func.func @sort(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "tenzr.sort"(%x) : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
