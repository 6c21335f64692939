// tz.debug.print: tenzr.debug_print lowers to IREE's flow.tensor.trace, and
// tenzr-order-prints merges the prints of each stretch between ops with regions into one
// (IREE 3.13 ran the prints of one stretch in an order of its own).
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo --tenzr-order-prints | filecheck %s

// CHECK-LABEL: func.func @prints
// CHECK: flow.tensor.trace "{\22tz.debug.prints\22: [\22a\22, \22b\22], \22counts\22: [1, 2]}" = [%arg0 : tensor<3xf32>, %{{.*}} : tensor<3xf32>, %arg1 : tensor<i32>]
// CHECK: stablehlo.while
// CHECK: flow.tensor.trace "c" = [%{{.*}} : tensor<i32>]
// CHECK: flow.tensor.trace "d" = [%{{.*}} : tensor<3xf32>]
// CHECK: return
func.func @prints(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  "tenzr.debug_print"(%x) {key = "a"} : (tensor<3xf32>) -> ()
  %0 = "tenzr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  "tenzr.debug_print"(%0, %n) {key = "b"} : (tensor<3xf32>, tensor<i32>) -> ()
  %1 = "tenzr.while"(%n) ({
  ^bb0(%i: tensor<i32>):
    %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %more = "tenzr.compare"(%i, %zero) {direction = "gt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%more) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>):
    "tenzr.debug_print"(%i) {key = "c"} : (tensor<i32>) -> ()
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "tenzr.sub"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "tenzr.yield"(%next) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  "tenzr.debug_print"(%0) {key = "d"} : (tensor<3xf32>) -> ()
  return %0 : tensor<3xf32>
}
