// tenzr-mark-in-place: a module without ops IREE carries out in an operand's buffer has its
// functions marked; one with a dynamic_update_slice (or scatter, sort, ...) does not.
// RUN: tenzr-opt %s --split-input-file --tenzr-mark-in-place | filecheck %s

// CHECK-LABEL: func.func @pure
// CHECK-SAME: iree.reflection = {tenzr.inputs = "in-place"}
func.func @pure(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @writes
// CHECK-NOT: iree.reflection
func.func @writes(%x: tensor<3xf32>, %u: tensor<1xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<3xf32>, tensor<1xf32>, tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
