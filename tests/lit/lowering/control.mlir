// tenzr.while and tenzr.case become stablehlo.while and stablehlo.case: the regions move
// over, tenzr.yield becomes stablehlo.return, and a case's branch arguments become the
// operands they stand for (StableHLO's branches read them from outside).
// RUN: tenzr-opt %s --convert-tenzr-to-stablehlo | filecheck %s

// CHECK-LABEL: func.func @fori
// CHECK: %[[R:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %arg0) : tensor<i32>, tensor<3xf32>
// CHECK: cond {
// CHECK: %[[P:.*]] = stablehlo.compare LT, %[[I]], %{{.*}}, SIGNED
// CHECK: stablehlo.return %[[P]] : tensor<i1>
// CHECK: } do {
// CHECK: %[[S:.*]] = stablehlo.sine %[[V]]
// CHECK: %[[N:.*]] = stablehlo.multiply %[[S]], %[[V]]
// CHECK: stablehlo.return %{{.*}}, %[[N]] : tensor<i32>, tensor<3xf32>
// CHECK: return %[[R]]#1
func.func @fori(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "tenzr.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %n = "tenzr.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
    %c = "tenzr.compare"(%i, %n) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "tenzr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "tenzr.sin"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    %v2 = "tenzr.mul"(%s, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%i2, %v2) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %r#1 : tensor<3xf32>
}

// CHECK-LABEL: func.func @select_branch
// CHECK: %[[R:.*]] = "stablehlo.case"(%arg0) ({
// CHECK: %[[E:.*]] = stablehlo.exponential %arg1
// CHECK: stablehlo.return %[[E]]
// CHECK: }, {
// CHECK: %[[M:.*]] = stablehlo.multiply %arg1, %arg1
// CHECK: stablehlo.return %[[M]]
// CHECK: }) : (tensor<i32>) -> tensor<3xf32>
func.func @select_branch(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<3xf32>):
    %e = "tenzr.exp"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%e) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%v: tensor<3xf32>):
    %s = "tenzr.mul"(%v, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%s) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
