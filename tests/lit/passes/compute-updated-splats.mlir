// tenzr-compute-updated-splats: a scatter or dynamic_update_slice of a 64-bit or complex
// splat updates a broadcast of the splat's element behind an optimization barrier; splats
// IREE fills per use (32-bit elements, 64-bit ones whose halves repeat, such as zero) and
// computed values stay.
// RUN: tenzr-opt %s --tenzr-compute-updated-splats | filecheck %s

// CHECK-LABEL: func.func @float64_ones
// CHECK: %[[ONES:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<5xf64>
// CHECK: %[[SLICE:.*]] = stablehlo.slice %[[ONES]] [0:1] : (tensor<5xf64>) -> tensor<1xf64>
// CHECK: %[[ONE:.*]] = stablehlo.reshape %[[SLICE]] : (tensor<1xf64>) -> tensor<f64>
// CHECK: %[[KEPT:.*]] = stablehlo.optimization_barrier %[[ONE]] : tensor<f64>
// CHECK: %[[COPY:.*]] = stablehlo.broadcast_in_dim %[[KEPT]], dims = [] : (tensor<f64>) -> tensor<5xf64>
// CHECK: stablehlo.dynamic_update_slice %[[COPY]], %arg0, %arg1
// CHECK: return %{{.*}}, %[[ONES]]
func.func @float64_ones(%u: tensor<1xf64>, %i: tensor<i64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %ones = stablehlo.constant dense<1.0> : tensor<5xf64>
  %0 = stablehlo.dynamic_update_slice %ones, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  return %0, %ones : tensor<5xf64>, tensor<5xf64>
}

// A splat seen through the shape ops and elementwise ops IREE folds: a complex one built
// from two real ones, reshaped, and scattered into.
// CHECK-LABEL: func.func @complex_zeros_reshaped
// CHECK: %[[Z:.*]] = stablehlo.reshape %{{.*}} : (tensor<4xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
// CHECK: %[[S:.*]] = stablehlo.slice %[[Z]] [0:1, 0:1]
// CHECK: %[[E:.*]] = stablehlo.reshape %[[S]] : (tensor<1x1xcomplex<f32>>) -> tensor<complex<f32>>
// CHECK: %[[B:.*]] = stablehlo.optimization_barrier %[[E]]
// CHECK: %[[C:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [] : (tensor<complex<f32>>) -> tensor<2x2xcomplex<f32>>
// CHECK: "stablehlo.scatter"(%[[C]],
func.func @complex_zeros_reshaped(%i: tensor<1x1xi32>, %u: tensor<1x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>> {
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %z = stablehlo.complex %zero, %zero : tensor<4xcomplex<f32>>
  %r = stablehlo.reshape %z : (tensor<4xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %0 = "stablehlo.scatter"(%r, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>):
    %s = stablehlo.add %a, %b : tensor<complex<f32>>
    stablehlo.return %s : tensor<complex<f32>>
  }) : (tensor<2x2xcomplex<f32>>, tensor<1x1xi32>, tensor<1x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  return %0 : tensor<2x2xcomplex<f32>>
}

// CHECK-LABEL: func.func @filled_per_use
// CHECK-NOT: stablehlo.optimization_barrier
// CHECK: stablehlo.dynamic_update_slice %cst, %arg0, %arg2
// CHECK: stablehlo.dynamic_update_slice %cst_0, %arg1, %arg2
// CHECK: stablehlo.dynamic_update_slice %c, %{{.*}}, %arg2
// CHECK: stablehlo.dynamic_update_slice %arg3, %arg0, %arg2
func.func @filled_per_use(%u: tensor<1xf64>, %v: tensor<1xf32>, %i: tensor<i64>, %x: tensor<5xf64>)
    -> (tensor<5xf64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf64>) {
  %zeros = stablehlo.constant dense<0.0> : tensor<5xf64>
  %ones = stablehlo.constant dense<1.0> : tensor<5xf32>
  %halves = stablehlo.constant dense<4294967297> : tensor<5xi64>
  %0 = stablehlo.dynamic_update_slice %zeros, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  %1 = stablehlo.dynamic_update_slice %ones, %v, %i : (tensor<5xf32>, tensor<1xf32>, tensor<i64>) -> tensor<5xf32>
  %w = stablehlo.convert %u : (tensor<1xf64>) -> tensor<1xi64>
  %2 = stablehlo.dynamic_update_slice %halves, %w, %i : (tensor<5xi64>, tensor<1xi64>, tensor<i64>) -> tensor<5xi64>
  %3 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<5xf64>, tensor<1xf64>, tensor<i64>) -> tensor<5xf64>
  return %0, %1, %2, %3 : tensor<5xf64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf64>
}
