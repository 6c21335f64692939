// tenzr-jvp's options and signatures: wrt, the default (every float argument), width=n,
// custom JVPs, and tangents that stay zero without being built.
// RUN: tenzr-opt %s --tenzr-jvp="func=f" | filecheck %s --check-prefix=JVP
// RUN: tenzr-opt %s --tenzr-jvp="func=f wrt=2" | filecheck %s --check-prefix=WRT
// RUN: tenzr-opt %s --pass-pipeline="builtin.module(tenzr-jvp{func=f width=4})" | filecheck %s --check-prefix=WIDTH
// RUN: tenzr-opt %s --tenzr-jvp="func=uses_custom" | filecheck %s --check-prefix=CUSTOM

// One tangent per float argument (the i32 one gets none), one per result.
// JVP-LABEL: func.func @f_jvp
// JVP-SAME: (%[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[Y:.*]]: tensor<3xf32>, %[[DX:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>)
// JVP-SAME: -> (tensor<f32>, tensor<f32>)
// JVP-DAG: %[[E:.*]] = "tenzr.exp"(%[[Y]])
// JVP-DAG: "tenzr.mul"(%[[DX]], %[[X]])
// JVP-DAG: "tenzr.mul"(%[[X]], %[[DX]])
// JVP-DAG: stablehlo.multiply %[[DY]], %[[E]]
// JVP: %[[S:.*]] = "tenzr.reduce_sum"
// JVP: %[[DS:.*]] = "tenzr.reduce_sum"
// JVP: return %[[S]], %[[DS]]

// With wrt=2 only y has a tangent: nothing is built for x*x.
// WRT-LABEL: func.func @f_jvp
// WRT-SAME: (%{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xi32>, %[[Y:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>)
// WRT-NOT: "tenzr.mul"(%{{.*}}, %[[DY]])
// WRT: %[[E:.*]] = "tenzr.exp"(%[[Y]])
// WRT: stablehlo.multiply %[[DY]], %[[E]]

// width=4: the tangents have four directions, batched by tenzr-batch: the tangent ops
// take the directions as a leading dimension (the primal operands broadcast against it,
// no loop), and the outputs run once.
// WIDTH-LABEL: func.func @f_jvp
// WIDTH-SAME: (%[[X:.*]]: tensor<3xf32>, %{{.*}}: tensor<3xi32>, %{{.*}}: tensor<3xf32>, %[[DX:.*]]: tensor<4x3xf32>, %{{.*}}: tensor<4x3xf32>)
// WIDTH-SAME: -> (tensor<f32>, tensor<4xf32>)
// WIDTH-NOT: stablehlo.while
// WIDTH: "tenzr.mul"(%[[DX]], %[[X]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// WIDTH: %[[DS:.*]] = "tenzr.reduce_sum"(%{{.*}}) {axes = array<i64: 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
// WIDTH: %[[S:.*]] = "tenzr.reduce_sum"(%{{.*}}) : (tensor<3xf32>) -> tensor<f32>
// WIDTH: return %[[S]], %[[DS]]

func.func @f(%x: tensor<3xf32>, %n: tensor<3xi32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.exp"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "tenzr.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "tenzr.reduce_sum"(%2) : (tensor<3xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// A call to a function with tenzr.custom_jvp calls its rule, which gives the output and
// its tangent; calls to ordinary functions are inlined.
// CUSTOM-LABEL: func.func @uses_custom_jvp
// CUSTOM-SAME: (%[[A:.*]]: tensor<3xf32>, %[[DA:.*]]: tensor<3xf32>)
// CUSTOM-NOT: call @clipped
// CUSTOM: %[[R:.*]]:2 = call @rule(%[[A]], %[[DA]])
// CUSTOM-NOT: call @plain
// CUSTOM: stablehlo.cosine %[[R]]#0
// CUSTOM: return

func.func private @clipped(%x: tensor<3xf32>) -> tensor<3xf32> attributes {tenzr.custom_jvp = @rule} {
  %0 = "tenzr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func private @rule(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "tenzr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.mul"(%0, %t) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

func.func private @plain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tenzr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func @uses_custom(%a: tensor<3xf32>) -> tensor<f32> {
  %0 = call @clipped(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = call @plain(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "tenzr.reduce_sum"(%1) : (tensor<3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
