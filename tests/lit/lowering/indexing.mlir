// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo | filecheck %s

// Negative indices wrap, then indices clamp into range; the slice along `axis` is gathered.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi32>)
// CHECK: %[[NEG:.*]] = stablehlo.compare LT, %[[I]]
// CHECK: %[[WRAP:.*]] = stablehlo.select %[[NEG]]
// CHECK: %[[CL:.*]] = stablehlo.clamp %{{.*}}, %[[WRAP]], %{{.*}} : (tensor<i32>, tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK: %[[COL:.*]] = stablehlo.reshape %[[CL]] : (tensor<2xi32>) -> tensor<2x1xi32>
// CHECK: "stablehlo.gather"(%[[X]], %[[COL]])
// CHECK-SAME: offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1
// CHECK-SAME: slice_sizes = array<i64: 4, 1>
// CHECK-SAME: -> tensor<4x2xf32>
func.func @gather(%x: tensor<4x3xf32>, %i: tensor<2xi32>) -> tensor<4x2xf32> {
  %0 = "tenzr.gather"(%x, %i) {axis = 1} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// Full index tuples: iota on the other dims, the indices on `axis` (clamped, as i32).
// CHECK-LABEL: func.func @take_along_axis
// CHECK: %[[ROWS:.*]] = stablehlo.iota dim = 0 : tensor<4x2x1xi32>
// CHECK: %[[COLS:.*]] = stablehlo.reshape %{{.*}} : (tensor<4x2xi32>) -> tensor<4x2x1xi32>
// CHECK: %[[TUPLES:.*]] = stablehlo.concatenate %[[ROWS]], %[[COLS]], dim = 2
// CHECK: "stablehlo.gather"(%{{.*}}, %[[TUPLES]])
// CHECK-SAME: collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2
func.func @take_along_axis(%x: tensor<4x3xf32>, %i: tensor<4x2xi64>) -> tensor<4x2xf32> {
  %0 = "tenzr.take_along_axis"(%x, %i) {axis = 1} : (tensor<4x3xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// Out-of-range updates are replaced by the combiner's identity (0 for add).
// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi64>, %[[U:.*]]: tensor<2x3xf32>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: %[[SAFE:.*]] = stablehlo.select %{{.*}}, %[[U]], %[[ZERO]]
// CHECK: "stablehlo.scatter"(%[[X]], %{{.*}}, %[[SAFE]])
// CHECK-SAME: update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1
// CHECK: stablehlo.add
// CHECK: stablehlo.return
func.func @scatter_add(%x: tensor<4x3xf32>, %i: tensor<2xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "add"} : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// "set" is deterministic: a max-scatter of update ids finds the last writer of each
// position, then the winners are gathered and selected.
// CHECK-LABEL: func.func @scatter_set
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi64>, %[[U:.*]]: tensor<4x2xf32>)
// CHECK: %[[IDS:.*]] = stablehlo.iota dim = 0 : tensor<2xi64>
// CHECK: %[[NONE:.*]] = stablehlo.constant dense<-1> : tensor<3xi64>
// CHECK: %[[WIN:.*]] = "stablehlo.scatter"(%[[NONE]]
// CHECK: stablehlo.maximum
// CHECK: %[[WRITTEN:.*]] = stablehlo.compare GE, %[[WIN]]
// CHECK: %[[MASK:.*]] = stablehlo.broadcast_in_dim %[[WRITTEN]], dims = [1] : (tensor<3xi1>) -> tensor<4x3xi1>
// CHECK: %[[TAKEN:.*]] = "stablehlo.gather"(%[[U]]
// CHECK: stablehlo.select %[[MASK]], %[[TAKEN]], %[[X]]
func.func @scatter_set(%x: tensor<4x3xf32>, %i: tensor<2xi64>, %u: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 1, mode = "set"} : (tensor<4x3xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @scatter_modes
// CHECK: stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK: "stablehlo.scatter"
// CHECK: stablehlo.multiply
// CHECK: stablehlo.constant dense<0x7F800000> : tensor<2xf32>
// CHECK: "stablehlo.scatter"
// CHECK: stablehlo.minimum
// CHECK: stablehlo.constant dense<0xFF800000> : tensor<2xf32>
// CHECK: "stablehlo.scatter"
// CHECK: stablehlo.maximum
func.func @scatter_modes(%x: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "multiply"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  %1 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "min"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  %2 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "max"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// StableHLO clamps the starts itself; mixed index types are unified to i64.
// CHECK-LABEL: func.func @dynamic_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[S0:.*]]: tensor<i32>, %[[S1:.*]]: tensor<i64>)
// CHECK: %[[C:.*]] = stablehlo.convert %[[S0]] : (tensor<i32>) -> tensor<i64>
// CHECK: stablehlo.dynamic_slice %[[X]], %[[C]], %[[S1]], sizes = [2, 2]
func.func @dynamic_slice(%x: tensor<4x3xf32>, %s0: tensor<i32>, %s1: tensor<i64>) -> tensor<2x2xf32> {
  %0 = "tenzr.dynamic_slice"(%x, %s0, %s1) {sizes = array<i64: 2, 2>} : (tensor<4x3xf32>, tensor<i32>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[U:.*]]: tensor<2x2xf32>, %[[S0:.*]]: tensor<i32>, %[[S1:.*]]: tensor<i32>)
// CHECK: stablehlo.dynamic_update_slice %[[X]], %[[U]], %[[S0]], %[[S1]]
func.func @dynamic_update_slice(%x: tensor<4x3xf32>, %u: tensor<2x2xf32>, %s0: tensor<i32>, %s1: tensor<i32>) -> tensor<4x3xf32> {
  %0 = "tenzr.dynamic_update_slice"(%x, %u, %s0, %s1) : (tensor<4x3xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
