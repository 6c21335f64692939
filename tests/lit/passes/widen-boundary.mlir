// tenzr-widen-boundary: i1 and f16 arguments and results cross the boundary as i32 and
// f32, converted inside; the reflection records the original types for the runtime.
// RUN: tenzr-opt %s --tenzr-widen-boundary | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[B:.*]]: tensor<3xi32>, %[[H:.*]]: tensor<3xf32>, %[[X:.*]]: tensor<3xf32>) -> (tensor<3xi32>, tensor<3xf32>)
// CHECK-SAME: iree.reflection = {tenzr.args = "i1,f16,f32", tenzr.results = "i1,f16"}
// CHECK-DAG: stablehlo.convert %[[B]] : (tensor<3xi32>) -> tensor<3xi1>
// CHECK-DAG: stablehlo.convert %[[H]] : (tensor<3xf32>) -> tensor<3xf16>
// CHECK: %[[RB:.*]] = stablehlo.convert %{{.*}} : (tensor<3xi1>) -> tensor<3xi32>
// CHECK: %[[RH:.*]] = stablehlo.convert %{{.*}} : (tensor<3xf16>) -> tensor<3xf32>
// CHECK: return %[[RB]], %[[RH]]
func.func @f(%b: tensor<3xi1>, %h: tensor<3xf16>, %x: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xf16>) {
  %0 = stablehlo.not %b : tensor<3xi1>
  %1 = stablehlo.negate %h : tensor<3xf16>
  return %0, %1 : tensor<3xi1>, tensor<3xf16>
}
