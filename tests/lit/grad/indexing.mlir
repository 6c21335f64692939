// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// The adjoint of a gather is a scatter-add into zeros: duplicate indices add up.
// CHECK-LABEL: func.func @gather_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<3xi32>, %[[YBAR:.*]]: tensor<3x3xf32>)
// CHECK: %[[CL:.*]] = stablehlo.clamp
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK: %[[COL:.*]] = stablehlo.reshape %[[CL]] : (tensor<3xi32>) -> tensor<3x1xi32>
// CHECK: %[[DX:.*]] = "stablehlo.scatter"(%[[ZERO]], %[[COL]], %[[YBAR]])
// CHECK-SAME: update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]
// CHECK: stablehlo.add
// CHECK: return %{{.*}}, %[[DX]] : tensor<3x3xf32>, tensor<4x3xf32>
func.func @gather(%x: tensor<4x3xf32>, %i: tensor<3xi32>) -> tensor<3x3xf32> {
  %0 = "tenzr.gather"(%x, %i) {axis = 0} : (tensor<4x3xf32>, tensor<3xi32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @take_along_axis_vjp
// CHECK: %[[TUPLES:.*]] = stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 2 : (tensor<4x2x1xi32>, tensor<4x2x1xi32>) -> tensor<4x2x2xi32>
// CHECK: "stablehlo.scatter"(%{{.*}}, %[[TUPLES]], %arg2)
// CHECK-SAME: inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2
// CHECK: stablehlo.add
func.func @take_along_axis(%x: tensor<4x3xf32>, %i: tensor<4x2xi32>) -> tensor<4x2xf32> {
  %0 = "tenzr.take_along_axis"(%x, %i) {axis = 1} : (tensor<4x3xf32>, tensor<4x2xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// mode "add": the operand gets ybar unchanged, each update gets ybar at its position.
// CHECK-LABEL: func.func @scatter_add_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi32>, %[[U:.*]]: tensor<2x3xf32>, %[[YBAR:.*]]: tensor<4x3xf32>)
// CHECK: %[[AT:.*]] = "stablehlo.gather"(%[[YBAR]]
// CHECK: %[[DU:.*]] = stablehlo.select %{{.*}}, %[[AT]], %{{.*}} : tensor<2x3xi1>, tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[YBAR]], %[[DU]]
func.func @scatter_add(%x: tensor<4x3xf32>, %i: tensor<2xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "add"} : (tensor<4x3xf32>, tensor<2xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// mode "set": written positions of the operand get zero; an update gets ybar only where
// it was the last writer (winner id == its own id).
// CHECK-LABEL: func.func @scatter_set_vjp
// CHECK: %[[WIN:.*]] = "stablehlo.scatter"(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: stablehlo.maximum
// CHECK: %[[WRITTEN:.*]] = stablehlo.compare GE, %[[WIN]]
// CHECK: %[[DX:.*]] = stablehlo.select %[[WRITTEN]], %{{.*}}, %arg3
// CHECK: %[[MINE:.*]] = "stablehlo.gather"(%[[WIN]]
// CHECK: %[[IDS:.*]] = stablehlo.iota dim = 0 : tensor<2xi32>
// CHECK: %[[WON:.*]] = stablehlo.compare EQ, %[[MINE]], %[[IDS]]
// CHECK: return %{{.*}}, %[[DX]], %{{.*}}
func.func @scatter_set(%x: tensor<4xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "set"} : (tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// mode "max": ybar is split evenly among the operand and updates equal to the result.
// CHECK-LABEL: func.func @scatter_max_vjp
// CHECK: %[[OUT:.*]] = "tenzr.scatter"
// CHECK: stablehlo.compare EQ, %arg0, %[[OUT]], FLOAT
// CHECK: %[[COUNT:.*]] = "stablehlo.scatter"
// CHECK: stablehlo.add
// CHECK: stablehlo.divide %{{.*}}, %[[COUNT]]
func.func @scatter_max(%x: tensor<4xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "max"} : (tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// mode "multiply": each update's cotangent is the product of the other updates at its
// position, from a KxK mask (exact when an update is zero; no division).
// CHECK-LABEL: func.func @scatter_multiply_vjp
// CHECK: stablehlo.multiply
// CHECK: stablehlo.iota dim = 0 : tensor<2x2xi64>
// CHECK: stablehlo.iota dim = 1 : tensor<2x2xi64>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.multiply across dimensions = [1]
// CHECK-NOT: stablehlo.divide
// CHECK: return
func.func @scatter_multiply(%x: tensor<4xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "multiply"} : (tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @dynamic_slice_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[S:.*]]: tensor<i32>, %[[YBAR:.*]]: tensor<2x2xf32>)
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK: stablehlo.dynamic_update_slice %[[Z]], %[[YBAR]], %[[S]], %[[S]]
func.func @dynamic_slice(%x: tensor<4x3xf32>, %s: tensor<i32>) -> tensor<2x2xf32> {
  %0 = "tenzr.dynamic_slice"(%x, %s, %s) {sizes = array<i64: 2, 2>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @dynamic_update_slice_vjp
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[U:.*]]: tensor<2x2xf32>, %[[S:.*]]: tensor<i32>, %[[YBAR:.*]]: tensor<4x3xf32>)
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK: %[[DX:.*]] = stablehlo.dynamic_update_slice %[[YBAR]], %[[Z]], %[[S]], %[[S]]
// CHECK: %[[DU:.*]] = stablehlo.dynamic_slice %[[YBAR]], %[[S]], %[[S]], sizes = [2, 2]
// CHECK: return %{{.*}}, %[[DX]], %[[DU]]
func.func @dynamic_update_slice(%x: tensor<4x3xf32>, %u: tensor<2x2xf32>, %s: tensor<i32>) -> tensor<4x3xf32> {
  %0 = "tenzr.dynamic_update_slice"(%x, %u, %s, %s) : (tensor<4x3xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
