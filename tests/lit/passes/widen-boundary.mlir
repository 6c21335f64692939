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

// A private function (JAX exports helpers such as `_where`) is called inside the module,
// not across its boundary: its i1 argument stays, and so does the call.
// CHECK-LABEL: func.func @calls_helper
// CHECK-SAME: (%[[C:.*]]: tensor<3xi32>, %{{.*}}: tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[NARROW:.*]] = stablehlo.convert %[[C]] : (tensor<3xi32>) -> tensor<3xi1>
// CHECK: call @_where(%[[NARROW]], %{{.*}}) : (tensor<3xi1>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-LABEL: func.func private @_where
// CHECK-SAME: (%{{.*}}: tensor<3xi1>, %{{.*}}: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT: iree.reflection
func.func @calls_helper(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @_where(%c, %x) : (tensor<3xi1>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @_where(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %x : tensor<3xf32>
  %1 = stablehlo.select %c, %x, %0 : tensor<3xi1>, tensor<3xf32>
  return %1 : tensor<3xf32>
}
