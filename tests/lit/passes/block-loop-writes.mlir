// tenzr-block-loop-writes: a counted loop writing one row per iteration into a large carried
// buffer (here 64 rows of 1,024 floats, 256 KiB) becomes an outer loop over blocks of k
// iterations (k = 8, a divisor of 64 near its root), each running an inner loop that writes a
// block of k rows, then the block into the buffer. The inner body reads the counter as the
// block's first iteration plus the inner counter.
// RUN: tenzr-opt %s --tenzr-block-loop-writes | filecheck %s

// CHECK-LABEL: func.func @stacked
// CHECK: %[[EMPTY:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<8x1024xf32>
// CHECK: %[[OUT:.*]]:5 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[X:.*]] = %arg0, %[[BUF:.*]] = %{{.*}}, %[[BLOCK:.*]] = %[[EMPTY]], %[[B:.*]] = %{{.*}})
// CHECK: stablehlo.compare LT, %[[B]], %{{.*}} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK: } do {
// CHECK: %[[FIRST:.*]] = stablehlo.add
// CHECK: %[[IN:.*]]:5 = stablehlo.while(%[[II:.*]] = %[[I]], %[[IX:.*]] = %[[X]], %[[IBLOCK:.*]] = %[[BLOCK]], %[[IFIRST:.*]] = %[[FIRST]], %[[J:.*]] = %{{.*}})
// CHECK: stablehlo.compare LT, %[[J]], %{{.*}}
// CHECK: } do {
// CHECK: %[[ROW:.*]] = stablehlo.multiply %[[J]]
// CHECK: %[[AT:.*]] = stablehlo.add %[[IFIRST]], %[[J]]
// CHECK: stablehlo.add %[[AT]]
// CHECK: stablehlo.dynamic_update_slice %[[IBLOCK]], %{{.*}}, %[[ROW]], %{{.*}} : (tensor<8x1024xf32>
// CHECK: stablehlo.dynamic_update_slice %[[BUF]], %[[IN]]#2, %{{.*}}, %{{.*}} : (tensor<64x1024xf32>, tensor<8x1024xf32>
// CHECK-NOT: stablehlo.while
// CHECK: return %[[OUT]]#1, %[[OUT]]#2
func.func @stacked(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64x1024xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<64> : tensor<i32>
  %buf = stablehlo.constant dense<0.0> : tensor<64x1024xf32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %s = %buf) : tensor<i32>, tensor<1024xf32>, tensor<64x1024xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v1 = stablehlo.sine %v : tensor<1024xf32>
    %row = stablehlo.reshape %v1 : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %s1 = stablehlo.dynamic_update_slice %s, %row, %i, %zero : (tensor<64x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<64x1024xf32>
    stablehlo.return %i1, %v1, %s1 : tensor<i32>, tensor<1024xf32>, tensor<64x1024xf32>
  }
  return %r#1, %r#2 : tensor<1024xf32>, tensor<64x1024xf32>
}

// Backwards (rows at 63 - i, as a reversed scan writes them) with 67 iterations, which no
// number near its root divides: blocks of 8 from the last row down, and the original loop
// runs the 3 iterations left.
// CHECK-LABEL: func.func @reversed_with_a_rest
// CHECK: %[[OUT:.*]]:5 = stablehlo.while
// CHECK: stablehlo.while
// CHECK: stablehlo.subtract %{{.*}}, %[[J:[^ ]*]] : tensor<i32>
// CHECK: %[[REST:.*]]:3 = stablehlo.while(%{{.*}} = %[[OUT]]#0, %{{.*}} = %[[OUT]]#1, %{{.*}} = %[[OUT]]#2)
// CHECK: return %[[REST]]#2
func.func @reversed_with_a_rest(%x: tensor<1024xf32>) -> tensor<67x1024xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<67> : tensor<i32>
  %last = stablehlo.constant dense<66> : tensor<i32>
  %buf = stablehlo.constant dense<0.0> : tensor<67x1024xf32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %s = %buf) : tensor<i32>, tensor<1024xf32>, tensor<67x1024xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v1 = stablehlo.sine %v : tensor<1024xf32>
    %row = stablehlo.reshape %v1 : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %at = stablehlo.subtract %last, %i : tensor<i32>
    %s1 = stablehlo.dynamic_update_slice %s, %row, %at, %zero : (tensor<67x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<67x1024xf32>
    stablehlo.return %i1, %v1, %s1 : tensor<i32>, tensor<1024xf32>, tensor<67x1024xf32>
  }
  return %r#2 : tensor<67x1024xf32>
}

// Left alone: a small buffer (16 rows of 4 floats), and a buffer the body also reads.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: stablehlo.while
// CHECK-NOT: stablehlo.while
func.func @left_alone(%x: tensor<1024xf32>, %y: tensor<4xf32>) -> (tensor<64x1024xf32>, tensor<16x4xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<64> : tensor<i32>
  %m = stablehlo.constant dense<16> : tensor<i32>
  %buf = stablehlo.constant dense<0.0> : tensor<64x1024xf32>
  %small = stablehlo.constant dense<0.0> : tensor<16x4xf32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %s = %buf) : tensor<i32>, tensor<1024xf32>, tensor<64x1024xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %read = stablehlo.dynamic_slice %s, %zero, %zero, sizes = [1, 1024] : (tensor<64x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1024xf32>
    %s1 = stablehlo.dynamic_update_slice %s, %read, %i, %zero : (tensor<64x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<64x1024xf32>
    stablehlo.return %i1, %v, %s1 : tensor<i32>, tensor<1024xf32>, tensor<64x1024xf32>
  }
  %q:3 = stablehlo.while(%i = %zero, %v = %y, %s = %small) : tensor<i32>, tensor<4xf32>, tensor<16x4xf32>
  cond {
    %c = stablehlo.compare LT, %i, %m, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %v1 = stablehlo.sine %v : tensor<4xf32>
    %row = stablehlo.reshape %v1 : (tensor<4xf32>) -> tensor<1x4xf32>
    %s1 = stablehlo.dynamic_update_slice %s, %row, %i, %zero : (tensor<16x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    stablehlo.return %i1, %v1, %s1 : tensor<i32>, tensor<4xf32>, tensor<16x4xf32>
  }
  return %r#2, %q#2 : tensor<64x1024xf32>, tensor<16x4xf32>
}
