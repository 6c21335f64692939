// tenzr-copy-in-place-operands: a scatter, dynamic_update_slice, sort or loop of a value
// computed from constants alone (an iota, a 64-bit or complex splat; for a sort, any constant
// or slice of an argument), or of an argument the function also returns, gets a copy of it,
// behind a barrier and reversed twice along its widest dim (a one-element value broadcast to
// two elements first); dense constants, splats IREE
// fills per use (32-bit elements, 64-bit ones whose halves repeat, such as zero) and values
// computed from the arguments stay.
// RUN: tenzr-opt %s --tenzr-copy-in-place-operands | filecheck %s

// CHECK-LABEL: func.func @float64_ones
// CHECK: %[[ONES:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<5xf64>
// CHECK: %[[KEPT:.*]] = stablehlo.optimization_barrier %[[ONES]] : tensor<5xf64>
// CHECK: %[[R:.*]] = stablehlo.reverse %[[KEPT]], dims = [0] : tensor<5xf64>
// CHECK: %[[COPY:.*]] = stablehlo.reverse %[[R]], dims = [0] : tensor<5xf64>
// CHECK: stablehlo.dynamic_update_slice %[[COPY]], %arg0, %arg1
// CHECK: return %{{.*}}, %[[ONES]]
func.func @float64_ones(%u: tensor<1xf64>, %i: tensor<i64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %ones = stablehlo.constant dense<1.0> : tensor<5xf64>
  %0 = stablehlo.dynamic_update_slice %ones, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  return %0, %ones : tensor<5xf64>, tensor<5xf64>
}

// An iota (of any type), and a complex zero built from two real ones and reshaped: the copy
// is along the widest dim.
// CHECK-LABEL: func.func @computed_from_constants
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<2x3xi32>
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[IOTA]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [1]
// CHECK: %[[C:.*]] = stablehlo.reverse %[[R]], dims = [1]
// CHECK: stablehlo.dynamic_update_slice %[[C]], %arg0
// CHECK: %[[Z:.*]] = stablehlo.reshape %{{.*}} : (tensor<4xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
// CHECK: %[[ZB:.*]] = stablehlo.optimization_barrier %[[Z]]
// CHECK: %[[ZR:.*]] = stablehlo.reverse %[[ZB]], dims = [0]
// CHECK: %[[ZC:.*]] = stablehlo.reverse %[[ZR]], dims = [0]
// CHECK: "stablehlo.scatter"(%[[ZC]],
func.func @computed_from_constants(%v: tensor<1x1xi32>, %i: tensor<1x1xi32>, %u: tensor<1x2xcomplex<f32>>)
    -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x2xcomplex<f32>>) {
  %iota = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %iota, %v, %c, %c : (tensor<2x3xi32>, tensor<1x1xi32>, tensor<i32>, tensor<i32>) -> tensor<2x3xi32>
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %z = stablehlo.complex %zero, %zero : tensor<4xcomplex<f32>>
  %r = stablehlo.reshape %z : (tensor<4xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %1 = "stablehlo.scatter"(%r, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>):
    %s = stablehlo.add %a, %b : tensor<complex<f32>>
    stablehlo.return %s : tensor<complex<f32>>
  }) : (tensor<2x2xcomplex<f32>>, tensor<1x1xi32>, tensor<1x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  return %0, %iota, %1 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x2xcomplex<f32>>
}

// CHECK-LABEL: func.func @updated_where_they_are
// CHECK-NOT: stablehlo.optimization_barrier
// CHECK: stablehlo.dynamic_update_slice %cst, %arg0, %arg2
// CHECK: stablehlo.dynamic_update_slice %cst_0, %arg1, %arg2
// CHECK: stablehlo.dynamic_update_slice %c, %{{.*}}, %arg2
// CHECK: stablehlo.dynamic_update_slice %cst_1, %arg0, %arg2
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %arg0, %arg2
// CHECK: %[[WIDE:.*]] = stablehlo.broadcast_in_dim %cst_2
// CHECK: stablehlo.dynamic_update_slice %[[WIDE]], %arg1, %arg2
func.func @updated_where_they_are(%u: tensor<1xf64>, %v: tensor<1xf32>, %i: tensor<i64>, %x: tensor<5xf64>)
    -> (tensor<5xf64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf32>) {
  %zeros = stablehlo.constant dense<0.0> : tensor<5xf64>
  %ones = stablehlo.constant dense<1.0> : tensor<5xf32>
  %halves = stablehlo.constant dense<4294967297> : tensor<5xi64>
  %dense = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf64>
  %0 = stablehlo.dynamic_update_slice %zeros, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  %1 = stablehlo.dynamic_update_slice %ones, %v, %i : (tensor<5xf32>, tensor<1xf32>, tensor<i64>) -> tensor<5xf32>
  %w = stablehlo.convert %u : (tensor<1xf64>) -> tensor<1xi64>
  %2 = stablehlo.dynamic_update_slice %halves, %w, %i : (tensor<5xi64>, tensor<1xi64>, tensor<i64>) -> tensor<5xi64>
  %3 = stablehlo.dynamic_update_slice %dense, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  %y = stablehlo.add %x, %dense : tensor<5xf64>
  %4 = stablehlo.dynamic_update_slice %y, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %wide = stablehlo.broadcast_in_dim %two, dims = [] : (tensor<f32>) -> tensor<5xf32>
  %5 = stablehlo.dynamic_update_slice %wide, %v, %i : (tensor<5xf32>, tensor<1xf32>, tensor<i64>) -> tensor<5xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<5xf64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf32>
}

// An argument the function also returns (here through a reshape) is updated as a copy; one
// it only reads, or only updates, is updated where it is.
// CHECK-LABEL: func.func @arguments
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %arg0 : tensor<2x3xf32>
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [1]
// CHECK: %[[C:.*]] = stablehlo.reverse %[[R]], dims = [1]
// CHECK: stablehlo.dynamic_update_slice %[[C]], %arg2
// CHECK: stablehlo.dynamic_update_slice %arg1, %arg2
// CHECK-NOT: stablehlo.optimization_barrier
func.func @arguments(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %u: tensor<1x1xf32>, %i: tensor<i32>)
    -> (tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<2x3xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %flat = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = stablehlo.dynamic_update_slice %y, %u, %i, %i : (tensor<2x3xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %2 = stablehlo.multiply %y, %y : tensor<2x3xf32>
  return %0, %flat, %1, %2 : tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// A sort gets a copy of any constant (IREE sorts in place and may not write into a
// constant's global)...
// CHECK-LABEL: func.func @constant_operand
// CHECK: %[[C:.*]] = stablehlo.constant
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[C]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [0]
// CHECK: %[[RR:.*]] = stablehlo.reverse %[[R]], dims = [0]
// CHECK: "stablehlo.sort"(%[[RR]])
func.func @constant_operand() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[3.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = "stablehlo.sort"(%c) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ... and of any slice of an argument (nor into an argument); the slice itself stays.
// CHECK-LABEL: func.func @slice_of_an_argument
// CHECK: %[[S:.*]] = stablehlo.slice %arg0 [0:2, 0:4]
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[S]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [1]
// CHECK: %[[RR:.*]] = stablehlo.reverse %[[R]], dims = [1]
// CHECK: %[[O:.*]] = "stablehlo.sort"(%[[RR]])
// CHECK: return %[[O]], %[[S]]
func.func @slice_of_an_argument(%x: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = stablehlo.slice %x [0:2, 0:4] : (tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = "stablehlo.sort"(%s) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %s : tensor<2x4xf32>, tensor<2x4xf32>
}

// An argument a loop carries to the results counts as returned; the loop itself does not copy
// an argument only it hands on.
// CHECK-LABEL: func.func @carried_through_a_loop
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %arg0
// CHECK: stablehlo.dynamic_update_slice %{{.*}}, %arg1, %arg2
// CHECK: stablehlo.while(%{{.*}} = %arg0)
func.func @carried_through_a_loop(%x: tensor<4xf32>, %u: tensor<1xf32>, %i: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  %1 = stablehlo.while(%b = %x) : tensor<4xf32>
  cond {
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  } do {
    stablehlo.return %b : tensor<4xf32>
  }
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// An argument returned through ops IREE may fold away (maximum(x, x), -(-x), a clamp
// between constants) or out of a conditional counts as returned; through an op with another
// argument (x * y) or one that cannot give x back (x * x), it does not.
// CHECK-LABEL: func.func @returned_through_folds
// CHECK: stablehlo.optimization_barrier %arg0
// CHECK: stablehlo.optimization_barrier %arg1
// CHECK: stablehlo.optimization_barrier %arg2
// CHECK-NOT: stablehlo.optimization_barrier
// CHECK: stablehlo.dynamic_update_slice %arg3
func.func @returned_through_folds(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %w: tensor<4xf32>,
                                  %p: tensor<i1>, %u: tensor<1xf32>, %i: tensor<i32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  %m = stablehlo.maximum %x, %x : tensor<4xf32>
  %n = stablehlo.negate %m : tensor<4xf32>
  %nn = stablehlo.negate %n : tensor<4xf32>
  %1 = stablehlo.dynamic_update_slice %y, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  %lo = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %hi = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %c = stablehlo.clamp %lo, %y, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.dynamic_update_slice %z, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  %if = "stablehlo.if"(%p) ({
    stablehlo.return %z : tensor<4xf32>
  }, {
    %t = stablehlo.add %z, %z : tensor<4xf32>
    stablehlo.return %t : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  %3 = stablehlo.dynamic_update_slice %w, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  %wx = stablehlo.multiply %w, %x : tensor<4xf32>
  %ww = stablehlo.multiply %w, %w : tensor<4xf32>
  return %0, %nn, %1, %c, %2, %if, %wx, %ww : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
      tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A scatter of an argument whose updates may fold to that argument (here behind a bounds
// check of constant indices) gets a copy: IREE 3.13 crashed on it.
// CHECK-LABEL: func.func @updates_that_fold_to_the_operand
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %arg0
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [0]
// CHECK: %[[C:.*]] = stablehlo.reverse %[[R]], dims = [0]
// CHECK: "stablehlo.scatter"(%[[C]],
func.func @updates_that_fold_to_the_operand(%x: tensor<2x1x2xf64>) -> tensor<2x1x2xf64> {
  %i = stablehlo.constant dense<0> : tensor<1x1xi32>
  %zero = stablehlo.constant dense<0.0> : tensor<2x1x2xf64>
  %t = stablehlo.constant dense<true> : tensor<1xi1>
  %m = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<1xi1>) -> tensor<2x1x2xi1>
  %u = stablehlo.select %m, %x, %zero : tensor<2x1x2xi1>, tensor<2x1x2xf64>
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) : (tensor<2x1x2xf64>, tensor<1x1xi32>, tensor<2x1x2xf64>) -> tensor<2x1x2xf64>
  return %0 : tensor<2x1x2xf64>
}

// ... and so does a scatter of a computed value with that value as its updates.
// CHECK-LABEL: func.func @scatter_into_itself
// CHECK: %[[Y:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[Y]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]], dims = [2]
// CHECK: %[[C:.*]] = stablehlo.reverse %[[R]], dims = [2]
// CHECK: "stablehlo.scatter"(%[[C]], %{{.*}}, %[[Y]])
func.func @scatter_into_itself(%x: tensor<2x1x3xf64>) -> tensor<2x1x3xf64> {
  %i = stablehlo.constant dense<0> : tensor<1x1xi32>
  %y = stablehlo.multiply %x, %x : tensor<2x1x3xf64>
  %0 = "stablehlo.scatter"(%y, %i, %y) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) : (tensor<2x1x3xf64>, tensor<1x1xi32>, tensor<2x1x3xf64>) -> tensor<2x1x3xf64>
  return %0 : tensor<2x1x3xf64>
}

// A one-element value cannot be copied by reversing a dim (IREE folds a reverse along a dim
// of one element, and then updated the argument that the add after the scatter reads: 4x
// instead of 3x): it is broadcast to two elements, reversed twice and sliced.
// CHECK-LABEL: func.func @one_element_scatter_into_itself
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %arg0 : tensor<1xf64>
// CHECK: %[[TWO:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [1] : (tensor<1xf64>) -> tensor<2x1xf64>
// CHECK: %[[R:.*]] = stablehlo.reverse %[[TWO]], dims = [0] : tensor<2x1xf64>
// CHECK: %[[RR:.*]] = stablehlo.reverse %[[R]], dims = [0] : tensor<2x1xf64>
// CHECK: %[[ONE:.*]] = stablehlo.slice %[[RR]] [0:1, 0:1] : (tensor<2x1xf64>) -> tensor<1x1xf64>
// CHECK: %[[C:.*]] = stablehlo.reshape %[[ONE]] : (tensor<1x1xf64>) -> tensor<1xf64>
// CHECK: %[[S:.*]] = "stablehlo.scatter"(%[[C]], %{{.*}}, %arg0)
// CHECK: stablehlo.add %arg0, %[[S]]
func.func @one_element_scatter_into_itself(%x: tensor<1xf64>) -> tensor<1xf64> {
  %i = stablehlo.constant dense<0> : tensor<1xi64>
  %0 = "stablehlo.scatter"(%x, %i, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) : (tensor<1xf64>, tensor<1xi64>, tensor<1xf64>) -> tensor<1xf64>
  %1 = stablehlo.add %x, %0 : tensor<1xf64>
  return %1 : tensor<1xf64>
}

// A loop whose body branches, of another loop's result (here through a transpose), gets a
// copy: IREE 3.13 ran such a loop without one of its buffers ("binding table slot requires a
// buffer but none was provided", in the jvp of JAX's expm). A loop without a conditional
// takes the result as it is.
// CHECK-LABEL: func.func @loop_result_into_a_branching_loop
// CHECK: %[[FIRST:.*]] = stablehlo.while
// CHECK: %[[T:.*]] = stablehlo.transpose %[[FIRST]]
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[T]]
// CHECK: %[[R:.*]] = stablehlo.reverse %[[B]]
// CHECK: %[[C:.*]] = stablehlo.reverse %[[R]]
// CHECK: stablehlo.while(%{{.*}} = %[[C]])
// CHECK: stablehlo.case
// CHECK: stablehlo.while(%{{.*}} = %[[T]])
func.func @loop_result_into_a_branching_loop(%x: tensor<2x3xf32>, %p: tensor<i32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = stablehlo.while(%a = %x) : tensor<2x3xf32>
  cond {
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  } do {
    %s = stablehlo.sine %a : tensor<2x3xf32>
    stablehlo.return %s : tensor<2x3xf32>
  }
  %t = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.while(%b = %t) : tensor<3x2xf32>
  cond {
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  } do {
    %c = "stablehlo.case"(%p) ({
      stablehlo.return %b : tensor<3x2xf32>
    }, {
      %n = stablehlo.negate %b : tensor<3x2xf32>
      stablehlo.return %n : tensor<3x2xf32>
    }) : (tensor<i32>) -> tensor<3x2xf32>
    stablehlo.return %c : tensor<3x2xf32>
  }
  %2 = stablehlo.while(%b = %t) : tensor<3x2xf32>
  cond {
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  } do {
    %n = stablehlo.negate %b : tensor<3x2xf32>
    stablehlo.return %n : tensor<3x2xf32>
  }
  return %1, %2 : tensor<3x2xf32>, tensor<3x2xf32>
}
