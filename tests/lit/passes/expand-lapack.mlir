// tenzr-expand-lapack: JAX's LAPACK calls on the CPU (as `jax.jit(f).lower(...)` exports
// jnp.linalg.cholesky and solve_triangular) become StableHLO loops, which IREE compiles
// and tenzr-grad differentiates. potrf: one column of L per iteration, and info = 1 where a
// diagonal entry is not positive; trsm: one row of X per iteration, from A's strict
// triangle, divided by A's diagonal. Complex calls stay.
// RUN: tenzr-opt %s --tenzr-expand-lapack | filecheck %s

// CHECK-LABEL: func.func @cholesky
// CHECK-NOT: custom_call
// CHECK: %[[LOOP:.*]]:3 = stablehlo.while(%[[J:.*]] = %{{.*}}, %[[A:.*]] = %arg0, %[[L:.*]] = %{{.*}})
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[L]], %[[J]], %{{.*}}, sizes = [1, 3]
// CHECK: %[[DONE:.*]] = stablehlo.dot_general %[[L]], %[[ROW]], contracting_dims = [1] x [1]
// CHECK: %[[COLUMN:.*]] = stablehlo.dynamic_slice %[[A]], %{{.*}}, %[[J]], sizes = [3, 1]
// CHECK: %[[REST:.*]] = stablehlo.subtract %[[COLUMN]], %[[DONE]]
// CHECK: %[[PIVOT:.*]] = stablehlo.dynamic_slice %[[REST]], %[[J]], %{{.*}}, sizes = [1, 1]
// CHECK: stablehlo.sqrt %[[PIVOT]]
// CHECK: stablehlo.compare GE
// CHECK: %[[NEW:.*]] = stablehlo.dynamic_update_slice %[[L]], %{{.*}}, %{{.*}}, %[[J]]
// CHECK: stablehlo.return %{{.*}}, %[[A]], %[[NEW]]
// CHECK: %[[POSITIVE:.*]] = stablehlo.compare GT, %[[LOOP]]#2
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0, 1]
// CHECK: %[[INFO:.*]] = stablehlo.subtract
// CHECK: return %[[LOOP]]#2, %[[INFO]]
func.func @cholesky(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}

// CHECK-LABEL: func.func @solve_lower
// CHECK-NOT: custom_call
// CHECK: %[[BELOW:.*]] = stablehlo.compare GT, %{{.*}}, %{{.*}}, SIGNED : (tensor<3x3xi32>, tensor<3x3xi32>)
// CHECK: %[[STRICT:.*]] = stablehlo.select %[[BELOW]], %arg0, %{{.*}}
// CHECK: %[[LOOP:.*]]:5 = stablehlo.while(%[[T:.*]] = %{{.*}}, %[[S:.*]] = %[[STRICT]], %[[FULL:.*]] = %arg0, %[[B:.*]] = %arg1, %[[X:.*]] = %{{.*}})
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[S]], %[[T]], %{{.*}}, sizes = [1, 3]
// CHECK: %[[KNOWN:.*]] = stablehlo.dot_general %[[ROW]], %[[X]], contracting_dims = [1] x [0]
// CHECK: %[[TARGET:.*]] = stablehlo.dynamic_slice %[[B]], %[[T]], %{{.*}}, sizes = [1, 2]
// CHECK: %[[LEFT:.*]] = stablehlo.subtract %[[TARGET]], %[[KNOWN]]
// CHECK: %[[PIVOT:.*]] = stablehlo.dynamic_slice %[[FULL]], %[[T]], %[[T]], sizes = [1, 1]
// CHECK: stablehlo.divide %[[LEFT]]
// CHECK: stablehlo.dynamic_update_slice %[[X]], %{{.*}}, %[[T]], %{{.*}}
// CHECK: return %[[LOOP]]#4
func.func @solve_lower(%a: tensor<3x3xf64>, %b: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// A transposed lower solve from the right with a unit diagonal: X Lᵀ = B is L Xᵀ = Bᵀ,
// rows from the first; nothing divides.
// CHECK-LABEL: func.func @solve_right_transposed_unit
// CHECK: %[[BT:.*]] = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: stablehlo.compare GT
// CHECK: %[[LOOP:.*]]:5 = stablehlo.while
// CHECK-NOT: stablehlo.divide
// CHECK: stablehlo.return
// CHECK: %[[X:.*]] = stablehlo.transpose %[[LOOP]]#4, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK: return %[[X]]
func.func @solve_right_transposed_unit(%a: tensor<3x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {diag = 85 : ui8, side = 82 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @complex_stays
// CHECK: stablehlo.custom_call @lapack_cpotrf_ffi
func.func @complex_stays(%a: tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_cpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<i32>)
  return %0#0, %0#1 : tensor<2x2xcomplex<f32>>, tensor<i32>
}

// LU with partial pivoting: per column, the first largest |A[i, j]| at or below the
// diagonal picks the pivot row, rows j and p trade places by selects (each batch element
// may pick its own), multipliers below the pivot (none where it is 0), and the pivot rows
// counted from 1; info, the first zero pivot's column (from 1), or 0.
// CHECK-LABEL: func.func @lu
// CHECK-NOT: custom_call
// CHECK: %[[LOOP:.*]]:3 = stablehlo.while(%[[J:.*]] = %{{.*}}, %[[A:.*]] = %arg0, %[[PIVOTS:.*]] = %{{.*}}) : tensor<i32>, tensor<3x3xf32>, tensor<3xi32>
// CHECK: %[[MAGNITUDE:.*]] = stablehlo.abs
// CHECK: %[[LARGEST:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.maximum across dimensions = [0]
// CHECK: %[[P:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0] : (tensor<3xi32>, tensor<i32>) -> tensor<i32>
// CHECK: %[[HALF:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[A]] : tensor<3x3xi1>, tensor<3x3xf32>
// CHECK: %[[SWAPPED:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[HALF]] : tensor<3x3xi1>, tensor<3x3xf32>
// CHECK: stablehlo.divide
// CHECK: stablehlo.subtract %[[SWAPPED]]
// CHECK: stablehlo.add %[[P]]
// CHECK: stablehlo.return
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0, 1] : (tensor<3x3xi32>, tensor<i32>) -> tensor<i32>
// CHECK: %[[INFO:.*]] = stablehlo.select
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#2, %[[INFO]]
func.func @lu(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xi32>, tensor<i32>
}

// A rectangular LU: min(m, n) = 2 columns eliminated (over all 3 rows), 2 pivots.
// CHECK-LABEL: func.func @lu_rectangular
// CHECK-NOT: custom_call
// CHECK: %[[LOOP:.*]]:3 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %arg0, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<3x2xf32>, tensor<2xi32>
// CHECK: stablehlo.constant dense<2> : tensor<i32>
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.minimum across dimensions = [0] : (tensor<3xi32>, tensor<i32>) -> tensor<i32>
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#2, %{{.*}} : tensor<3x2xf32>, tensor<2xi32>, tensor<i32>
func.func @lu_rectangular(%a: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xi32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<3x2xf32>, tensor<2xi32>, tensor<i32>
}

// Householder QR: per column, alpha = A[j, j] and the norm below it give beta = -sign(alpha)
// |A[j:, j]| and tau = (beta - alpha) / beta (0 where nothing lies below), v below the
// diagonal, and H = I - tau v vᵀ applied to the columns on the right. orgqr applies the
// reflectors to the identity from the last.
// CHECK-LABEL: func.func @qr
// CHECK-NOT: custom_call
// CHECK: %[[QR:.*]]:3 = stablehlo.while(%{{.*}} = %{{.*}}, %[[A:.*]] = %arg0, %[[TAUS:.*]] = %{{.*}}) : tensor<i32>, tensor<4x3xf32>, tensor<3xf32>
// CHECK: %[[NORM:.*]] = stablehlo.sqrt
// CHECK: %[[NEGATIVE:.*]] = stablehlo.negate %[[NORM]]
// CHECK: stablehlo.compare NE
// CHECK: stablehlo.divide
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: stablehlo.return
// CHECK: %[[Q:.*]]:4 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %[[QR]]#1, %{{.*}} = %[[QR]]#2, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>
// CHECK: return %[[QR]]#1, %[[Q]]#3
func.func @qr(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  %1 = stablehlo.custom_call @lapack_sorgqr_ffi(%0#0, %0#1) {mhlo.backend_config = {}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0#0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// Symmetric eigendecomposition by cyclic Jacobi: the lower triangle mirrored, 12 sweeps of
// n - 1 = 3 rounds (the round-robin pairings a constant table, one row per round), each
// rotation applied as Jᵀ A J and V J; then the eigenvalues placed in ascending order by
// counting (no sort), the eigenvectors alike; info 0.
// CHECK-LABEL: func.func @eigh
// CHECK-NOT: custom_call
// CHECK: %[[TABLE:.*]] = stablehlo.constant dense<{{\[\[}}3, 2, 1, 0], [2, 3, 0, 1], [1, 0, 3, 2]]> : tensor<3x4xi32>
// CHECK: %[[LOOP:.*]]:4 = stablehlo.while(%{{.*}} = %{{.*}}, %[[T:.*]] = %[[TABLE]], %[[A:.*]] = %{{.*}}, %[[V:.*]] = %{{.*}})
// CHECK: stablehlo.constant dense<36> : tensor<i32>
// CHECK: stablehlo.dynamic_slice %[[T]]
// CHECK: stablehlo.rsqrt
// CHECK: %[[AJ:.*]] = stablehlo.dot_general %[[A]], %[[J:.*]], contracting_dims = [1] x [0]
// CHECK: %[[JAJ:.*]] = stablehlo.dot_general %[[J]], %[[AJ]], contracting_dims = [0] x [0]
// CHECK: %[[VJ:.*]] = stablehlo.dot_general %[[V]], %[[J]], contracting_dims = [1] x [0]
// CHECK: stablehlo.return %{{.*}}, %[[T]], %[[JAJ]], %[[VJ]]
// CHECK-NOT: stablehlo.sort
// CHECK: %[[VECTORS:.*]] = stablehlo.dot_general %[[LOOP]]#3
// CHECK: %[[INFO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK: return %[[VECTORS]], %{{.*}}, %[[INFO]]
func.func @eigh(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<4x4xf32>, tensor<4xf32>, tensor<i32>
}

// Singular value decomposition (gesdd, gesvd) by one-sided Jacobi, here on Aᵀ as A is
// wide: 12 sweeps of 3 rounds rotating pairs of columns, G J and V J; the singular values
// are G's column norms, placed in descending order by counting (no sort); U's columns are
// G's normalized, then Householder QR (the geqrf and orgqr loops) makes them an orthonormal
// basis; U and V trade places for a wide A.
// CHECK-LABEL: func.func @svd
// CHECK-NOT: custom_call
// CHECK: %[[AT:.*]] = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK: %[[LOOP:.*]]:4 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[G:.*]] = %[[AT]], %[[V:.*]] = %{{.*}})
// CHECK: stablehlo.constant dense<36> : tensor<i32>
// CHECK: stablehlo.rsqrt
// CHECK: %[[GJ:.*]] = stablehlo.dot_general %[[G]], %[[J:.*]], contracting_dims = [1] x [0]
// CHECK: %[[VJ:.*]] = stablehlo.dot_general %[[V]], %[[J]], contracting_dims = [1] x [0]
// CHECK: stablehlo.return %{{.*}}, %{{.*}}, %[[GJ]], %[[VJ]]
// CHECK: stablehlo.sqrt
// CHECK-NOT: stablehlo.sort
// CHECK: %[[S:.*]] = stablehlo.reshape %{{.*}} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: %[[VS:.*]] = stablehlo.dot_general %[[LOOP]]#3,
// CHECK: stablehlo.divide
// CHECK: %[[QR:.*]]:3 = stablehlo.while
// CHECK: %[[Q:.*]]:4 = stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %[[QR]]#1, %{{.*}} = %[[QR]]#2,
// CHECK: %[[UT:.*]] = stablehlo.transpose %{{.*}}, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK: return %[[S]], %[[VS]], %[[UT]], %{{.*}}
func.func @svd(%a: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<i32>)
  return %0#1, %0#2, %0#3, %0#4 : tensor<3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<i32>
}

// Singular values alone (mode N): the Jacobi loop only; U and Vᵀ, unused, are zeros.
// CHECK-LABEL: func.func @singular_values
// CHECK: stablehlo.while
// CHECK-NOT: stablehlo.while
// CHECK: %[[U:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x4xf64>
// CHECK: %[[VT:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3x3xf64>
// CHECK: return %{{.*}}, %[[U]], %[[VT]]
func.func @singular_values(%a: tensor<4x3xf64>) -> (tensor<3xf64>, tensor<4x4xf64>, tensor<3x3xf64>) {
  %0:5 = stablehlo.custom_call @lapack_dgesvd_ffi(%a) {mhlo.backend_config = {mode = 78 : ui8}} : (tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<3xf64>, tensor<4x4xf64>, tensor<3x3xf64>, tensor<i32>)
  return %0#1, %0#2, %0#3 : tensor<3xf64>, tensor<4x4xf64>, tensor<3x3xf64>
}
