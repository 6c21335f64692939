// tenzr-fuse-elementwise: a web of elementwise ops (a value read by two of its ops) with
// one result read outside becomes one stablehlo.map; its splat constants move inside.
// Trees, webs with two results read outside, and 0-d ops are left alone.
// RUN: tenzr-opt %s --tenzr-fuse-elementwise | filecheck %s

// CHECK-LABEL: func.func @web
// CHECK-NOT: stablehlo.sine
// CHECK: %[[M:.*]] = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>):
// CHECK-NEXT:   %[[H:.*]] = stablehlo.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:   %[[S:.*]] = stablehlo.sine %[[X]] : tensor<f32>
// CHECK-NEXT:   %[[C:.*]] = stablehlo.cosine %[[X]] : tensor<f32>
// CHECK-NEXT:   %[[SH:.*]] = stablehlo.multiply %[[S]], %[[H]] : tensor<f32>
// CHECK-NEXT:   %[[CT:.*]] = stablehlo.multiply %[[C]], %[[T]] : tensor<f32>
// CHECK-NEXT:   %[[E:.*]] = stablehlo.exponential %[[SH]] : tensor<f32>
// CHECK-NEXT:   %[[P:.*]] = stablehlo.multiply %[[E]], %[[CT]] : tensor<f32>
// CHECK-NEXT:   %[[R:.*]] = stablehlo.add %[[P]], %[[S]] : tensor<f32>
// CHECK-NEXT:   stablehlo.return %[[R]] : tensor<f32>
// CHECK-NEXT: }) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[M]]
func.func @web(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %h = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %s = stablehlo.sine %x : tensor<4x8xf32>
  %c = stablehlo.cosine %x : tensor<4x8xf32>
  %sh = stablehlo.multiply %s, %h : tensor<4x8xf32>
  %ct = stablehlo.multiply %c, %t : tensor<4x8xf32>
  %e = stablehlo.exponential %sh : tensor<4x8xf32>
  %p = stablehlo.multiply %e, %ct : tensor<4x8xf32>
  %r = stablehlo.add %p, %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Mixed element types: a comparison selects, a conversion widens.
// CHECK-LABEL: func.func @mixed
// CHECK: "stablehlo.map"(%arg0) <{dimensions = array<i64: 0>}> ({
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<f32>):
// CHECK: stablehlo.compare GT, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<f32>
// CHECK: stablehlo.convert %{{.*}} : (tensor<f32>) -> tensor<f64>
// CHECK: stablehlo.return %{{.*}} : tensor<f64>
// CHECK-NEXT: }) : (tensor<16xf32>) -> tensor<16xf64>
func.func @mixed(%x: tensor<16xf32>) -> tensor<16xf64> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<16xf32>
  %pos = stablehlo.compare GT, %x, %zero : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %e = stablehlo.exponential %x : tensor<16xf32>
  %relu = stablehlo.select %pos, %x, %e : tensor<16xi1>, tensor<16xf32>
  %w = stablehlo.multiply %relu, %e : tensor<16xf32>
  %d = stablehlo.convert %w : (tensor<16xf32>) -> tensor<16xf64>
  return %d : tensor<16xf64>
}

// CHECK-LABEL: func.func @tree
// CHECK-NOT: stablehlo.map
func.func @tree(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %0 = stablehlo.sine %x : tensor<64xf32>
  %1 = stablehlo.exponential %y : tensor<64xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<64xf32>
  %3 = stablehlo.tanh %2 : tensor<64xf32>
  return %3 : tensor<64xf32>
}

// CHECK-LABEL: func.func @two_results
// CHECK-NOT: stablehlo.map
func.func @two_results(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = stablehlo.sine %x : tensor<64xf32>
  %1 = stablehlo.exponential %0 : tensor<64xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<64xf32>
  %3 = stablehlo.add %2, %0 : tensor<64xf32>
  return %2, %3 : tensor<64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @scalars
// CHECK-NOT: stablehlo.map
func.func @scalars(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.sine %x : tensor<f32>
  %1 = stablehlo.exponential %0 : tensor<f32>
  %2 = stablehlo.multiply %0, %1 : tensor<f32>
  return %2 : tensor<f32>
}

// A web inside a loop body is fused in place.
// CHECK-LABEL: func.func @loop
// CHECK: stablehlo.while
// CHECK: do {
// CHECK: "stablehlo.map"(%{{.*}}) <{dimensions = array<i64: 0>}> ({
// CHECK: }) : (tensor<64xf32>) -> tensor<64xf32>
// CHECK-NOT: stablehlo.sine
// CHECK: stablehlo.return
func.func @loop(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<64xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.sine %v : tensor<64xf32>
      %e = stablehlo.exponential %s : tensor<64xf32>
      %w = stablehlo.multiply %s, %e : tensor<64xf32>
      %n = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %n, %w : tensor<i32>, tensor<64xf32>
    }
  return %r#1 : tensor<64xf32>
}
