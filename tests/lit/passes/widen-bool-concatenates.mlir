// tenzr-widen-bool-concatenates: booleans are concatenated as int32 and compared with zero
// (IREE 3.13 wrote two concatenations of booleans sharing an operand into one buffer).
// RUN: tenzr-opt %s --tenzr-widen-bool-concatenates | filecheck %s

// CHECK-LABEL: func.func @shared_prefix
// CHECK: %[[WA:.*]] = stablehlo.convert %{{.*}} : (tensor<1xi1>) -> tensor<1xi32>
// CHECK: %[[WB:.*]] = stablehlo.convert %{{.*}} : (tensor<3xi1>) -> tensor<3xi32>
// CHECK: %[[J:.*]] = stablehlo.concatenate %[[WA]], %[[WB]], dim = 0 : (tensor<1xi32>, tensor<3xi32>) -> tensor<4xi32>
// CHECK: %[[B:.*]] = stablehlo.compare NE, %[[J]], %{{.*}}, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK: stablehlo.concatenate {{.*}} -> tensor<4xi32>
// The other types stay.
// CHECK: stablehlo.concatenate {{.*}} -> tensor<4xf32>
// CHECK: return %[[B]],
func.func @shared_prefix(%x: tensor<3xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
  %t = stablehlo.constant dense<true> : tensor<1xi1>
  %zero = stablehlo.constant dense<0.0> : tensor<3xf32>
  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %a = stablehlo.compare GT, %x, %zero, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %b = stablehlo.compare LT, %x, %one, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %0 = stablehlo.concatenate %t, %a, dim = 0 : (tensor<1xi1>, tensor<3xi1>) -> tensor<4xi1>
  %1 = stablehlo.concatenate %t, %b, dim = 0 : (tensor<1xi1>, tensor<3xi1>) -> tensor<4xi1>
  %f = stablehlo.constant dense<7.0> : tensor<1xf32>
  %2 = stablehlo.concatenate %f, %x, dim = 0 : (tensor<1xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
}
