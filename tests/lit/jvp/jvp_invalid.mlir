// tenzr-jvp's errors: bad options, custom VJPs (no forward mode), ops without rules.
// RUN: not tenzr-opt %s --tenzr-jvp="func=f wrt=1" 2>&1 | filecheck %s --check-prefix=WRT
// RUN: not tenzr-opt %s --tenzr-jvp="func=g" 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not tenzr-opt %s --tenzr-jvp="func=f width=x" 2>&1 | filecheck %s --check-prefix=WIDTH
// RUN: not tenzr-opt %s --tenzr-jvp="func=uses_custom_vjp" 2>&1 | filecheck %s --check-prefix=CUSTOM
// RUN: not tenzr-opt %s --tenzr-jvp="func=unknown_op" 2>&1 | filecheck %s --check-prefix=UNKNOWN

// WRT: error: tenzr-jvp: argument 1 of '@f' has type tensor<3xi32>; only floating-point arguments can be differentiated
// NAME: error: tenzr-jvp: no function named '@g'
// WIDTH: error: option 'width' of pass 'tenzr-jvp' expects int, got 'x'
// CUSTOM: :[[# @LINE + 13]]:8: error: cannot apply forward mode (jvp) to '@with_vjp': it has a custom VJP
// UNKNOWN: :[[# @LINE + 16]]:8: error: 'my.op' op has no JVP rule, but it lies on a differentiated path

func.func @f(%x: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func private @with_vjp(%x: tensor<3xf32>) -> tensor<3xf32> attributes {tenzr.custom_vjp = @bwd} {
  return %x : tensor<3xf32>
}
func.func private @bwd(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  return %ct : tensor<3xf32>
}
func.func @uses_custom_vjp(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @with_vjp(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @unknown_op(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "my.op"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
