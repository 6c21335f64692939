// tenzr-fuse-elementwise: a constant held as a dense resource (as some exporters write large
// constants) is an input of the map, not a splat to move inside (this crashed the pass).
// RUN: tenzr-opt %s --tenzr-fuse-elementwise | filecheck %s

// CHECK-LABEL: func.func @web
// CHECK: %[[C:.*]] = stablehlo.constant dense_resource<blob1> : tensor<2xf32>
// CHECK: "stablehlo.map"(%arg0, %[[C]]) <{dimensions = array<i64: 0>}> ({
// CHECK: stablehlo.return
module {
  func.func @web(%x: tensor<2xf32>) -> tensor<2xf32> {
    %c = stablehlo.constant dense_resource<blob1> : tensor<2xf32>
    %s = stablehlo.sine %x : tensor<2xf32>
    %a = stablehlo.multiply %s, %c : tensor<2xf32>
    %b = stablehlo.add %a, %s : tensor<2xf32>
    %m = stablehlo.multiply %b, %a : tensor<2xf32>
    return %m : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
