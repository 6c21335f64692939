// tenzr-simplify-loops: counters of one loop that start and step alike become one,
// carried values that never change and start as the same value become one, and carried
// values nothing reads are dropped. Counters that differ in start or step stay apart.
// RUN: tenzr-opt %s --tenzr-simplify-loops | filecheck %s

// Two counters from 0 by 1 (a scan's, and the one an adjoint adds for its tape), and two
// copies of the same invariant: one of each is left.
// CHECK-LABEL: func.func @two_counters
// CHECK: %[[R:.*]]:3 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[X:.*]] = %arg0, %[[K:.*]] = %arg1)
// CHECK: stablehlo.compare LT, %[[I]]
// CHECK: } do {
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[I]]
// CHECK-NOT: stablehlo.add %[[I]]
// CHECK: %[[AT:.*]] = stablehlo.multiply %[[I]]
// CHECK: stablehlo.dynamic_slice %[[K]], %[[AT]]
// CHECK: stablehlo.return %[[NEXT]], %{{.*}}, %[[K]] :
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#0
func.func @two_counters(%x: tensor<4xf32>, %k: tensor<16xf32>) -> (tensor<i32>, tensor<4xf32>, tensor<i32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %r:5 = stablehlo.while(%i = %zero, %j = %zero, %v = %x, %a = %k, %b = %k) : tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>
  cond {
    %c = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %j1 = stablehlo.add %one, %j : tensor<i32>
    %at = stablehlo.multiply %j, %four : tensor<i32>
    %s = stablehlo.dynamic_slice %b, %at, sizes = [4] : (tensor<16xf32>, tensor<i32>) -> tensor<4xf32>
    %v1 = stablehlo.add %v, %s : tensor<4xf32>
    stablehlo.return %i1, %j1, %v1, %a, %b : tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>
  }
  return %r#0, %r#2, %r#1 : tensor<i32>, tensor<4xf32>, tensor<i32>
}

// Counters of other starts or steps (or not counting by a constant) are separate values.
// CHECK-LABEL: func.func @different
// CHECK: stablehlo.while({{.*}}, {{.*}}, {{.*}}, {{.*}})
func.func @different(%n: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %r:4 = stablehlo.while(%i = %zero, %j = %one, %k = %zero, %m = %zero) : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %j1 = stablehlo.add %j, %one : tensor<i32>
    %k1 = stablehlo.add %k, %two : tensor<i32>
    %m1 = stablehlo.add %m, %i : tensor<i32>
    stablehlo.return %i1, %j1, %k1, %m1 : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
}

// A carried value that only counts, read by nothing else, is dropped (inner loops too); one
// whose result is read stays.
// CHECK-LABEL: func.func @unread
// CHECK: %[[OUT:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %arg0) : tensor<i32>, tensor<4xf32>
// CHECK: stablehlo.while(%[[J:.*]] = %{{.*}}, %{{.*}} = %[[V]]) : tensor<i32>, tensor<4xf32>
// CHECK: return %[[OUT]]#1
func.func @unread(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %w = %zero) : tensor<i32>, tensor<4xf32>, tensor<i32>
  cond {
    %c = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %inner:3 = stablehlo.while(%j = %zero, %u = %v, %unused = %three) : tensor<i32>, tensor<4xf32>, tensor<i32>
    cond {
      %c = stablehlo.compare LT, %j, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %j1 = stablehlo.add %j, %one : tensor<i32>
      %u1 = stablehlo.multiply %u, %u : tensor<4xf32>
      %unused1 = stablehlo.multiply %unused, %three : tensor<i32>
      stablehlo.return %j1, %u1, %unused1 : tensor<i32>, tensor<4xf32>, tensor<i32>
    }
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %w1 = stablehlo.add %w, %three : tensor<i32>
    stablehlo.return %i1, %inner#1, %w1 : tensor<i32>, tensor<4xf32>, tensor<i32>
  }
  return %r#1 : tensor<4xf32>
}

// A carried buffer written through several ops that nothing reads after the loop (a scan's
// stacked outputs, when only a gradient is wanted) is dropped, and so is what wrote it;
// what a live value needs stays, and so do the loop's attributes.
// CHECK-LABEL: func.func @unneeded_buffer
// CHECK: %[[R:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %arg0) : tensor<i32>, tensor<4xf32> attributes {tenzr.note = 1 : i64}
// CHECK-NOT: dynamic_update_slice
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.sine %[[V]]
// CHECK: return %[[R]]#1
func.func @unneeded_buffer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %fzero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %buffer = stablehlo.constant dense<0.000000e+00> : tensor<3xf32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %ys = %buffer) : tensor<i32>, tensor<4xf32>, tensor<3xf32> attributes {tenzr.note = 1 : i64}
  cond {
    %c = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %v1 = stablehlo.sine %v : tensor<4xf32>
    %s = stablehlo.reduce(%v1 init: %fzero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %row = stablehlo.reshape %s : (tensor<f32>) -> tensor<1xf32>
    %ys1 = stablehlo.dynamic_update_slice %ys, %row, %i : (tensor<3xf32>, tensor<1xf32>, tensor<i32>) -> tensor<3xf32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %v1, %ys1 : tensor<i32>, tensor<4xf32>, tensor<3xf32>
  }
  return %r#1 : tensor<4xf32>
}

// A buffer whose final value nothing reads, read a row at a time and that row then zeroed
// (an adjoint reading the cotangent of a scan's stacked outputs, rows 7 - i): the write goes,
// the reads stay, and the buffer is carried unchanged. A write of rows a later iteration
// reads (here each iteration reads its row and the next, and zeroes its own) stays.
// CHECK-LABEL: func.func @read_then_zeroed
// CHECK: stablehlo.dynamic_slice %[[CT:[^,]*]],
// CHECK-NOT: stablehlo.dynamic_update_slice
// CHECK: stablehlo.return %{{.*}}, %{{.*}}, %[[CT]] :
// CHECK-LABEL: func.func @read_again_later
// CHECK: stablehlo.dynamic_update_slice
func.func @read_then_zeroed(%x: tensor<4xf32>, %ct: tensor<8x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %seven = stablehlo.constant dense<7> : tensor<i32>
  %eight = stablehlo.constant dense<8> : tensor<i32>
  %zeros = stablehlo.constant dense<0.000000e+00> : tensor<1x4xf32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %c = %ct) : tensor<i32>, tensor<4xf32>, tensor<8x4xf32>
  cond {
    %p = stablehlo.compare LT, %i, %eight, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %at = stablehlo.subtract %seven, %i : tensor<i32>
    %row = stablehlo.dynamic_slice %c, %at, %zero, sizes = [1, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %c1 = stablehlo.dynamic_update_slice %c, %zeros, %at, %zero : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
    %flat = stablehlo.reshape %row : (tensor<1x4xf32>) -> tensor<4xf32>
    %v1 = stablehlo.add %v, %flat : tensor<4xf32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %v1, %c1 : tensor<i32>, tensor<4xf32>, tensor<8x4xf32>
  }
  return %r#1 : tensor<4xf32>
}

func.func @read_again_later(%x: tensor<4xf32>, %ct: tensor<9x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %eight = stablehlo.constant dense<8> : tensor<i32>
  %zeros = stablehlo.constant dense<0.000000e+00> : tensor<1x4xf32>
  %fzero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %c = %ct) : tensor<i32>, tensor<4xf32>, tensor<9x4xf32>
  cond {
    %p = stablehlo.compare LT, %i, %eight, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %rows = stablehlo.dynamic_slice %c, %i, %zero, sizes = [2, 4] : (tensor<9x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
    %c1 = stablehlo.dynamic_update_slice %c, %zeros, %i, %zero : (tensor<9x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<9x4xf32>
    %s = stablehlo.reduce(%rows init: %fzero) applies stablehlo.add across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
    %v1 = stablehlo.add %v, %s : tensor<4xf32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %v1, %c1 : tensor<i32>, tensor<4xf32>, tensor<9x4xf32>
  }
  return %r#1 : tensor<4xf32>
}
