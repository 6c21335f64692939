// tenzr-grad's errors: each at the offending op or function, never a traceback.
// RUN: tenzr-opt %s --split-input-file --verify-diagnostics --tenzr-grad="mode=grad"

// expected-error@+1 {{tenzr-grad: mode=grad needs a floating-point scalar result, but result 0 of '@vector' has type tensor<2xf32>}}
func.func @vector(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{mode=grad needs '@two' to return one scalar, it returns 2 values}}
func.func @two(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %x, %x : tensor<f32>, tensor<f32>
}

// -----

func.func @no_rule(%x: tensor<2xf32>) -> tensor<f32> {
  // expected-error@+1 {{'chlo.bessel_i1e' op has no gradient rule, but it lies on a differentiated path}}
  %0 = chlo.bessel_i1e %x : tensor<2xf32> -> tensor<2xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A custom call is named with its target (tenzr-expand-lapack takes JAX's real LAPACK calls, not complex ones).
func.func @no_rule_for_complex_lapack(%a: tensor<2x2xcomplex<f32>>) -> tensor<f32> {
  // expected-error@+1 {{'stablehlo.custom_call' op @lapack_cpotrf_ffi has no gradient rule, but it lies on a differentiated path}}
  %0:2 = stablehlo.custom_call @lapack_cpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<2x2xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>>, tensor<i32>)
  %1 = stablehlo.real %0#0 : (tensor<2x2xcomplex<f32>>) -> tensor<2x2xf32>
  %2 = "tenzr.reduce_sum"(%1) : (tensor<2x2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// expected-error@+1 {{'@ints' has no floating-point argument to differentiate}}
func.func @ints(%x: tensor<2xi32>) -> tensor<f32> {
  %0 = "tenzr.convert"(%x) : (tensor<2xi32>) -> tensor<2xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @unregistered_custom(%x: tensor<2xf32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.custom_call' op target 'nobody.knows' has no gradient: no rule is registered}}
  %0 = "tenzr.custom_call"(%x) {call_target_name = "nobody.knows"} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A value differentiated through a region it is captured by: an error until control flow
// is differentiated, never a silent zero.
func.func @through_scf_if(%x: tensor<3xf32>, %c: i1) -> tensor<f32> {
  // expected-error@+1 {{'scf.if' op has no gradient rule (tenzr-grad differentiates control flow written as tenzr.while or tenzr.case, or StableHLO's while, case and if), but it lies on a differentiated path}}
  %y = scf.if %c -> (tensor<3xf32>) {
    %s = "tenzr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  } else {
    scf.yield %x : tensor<3xf32>
  }
  %0 = "tenzr.reduce_sum"(%y) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @through_execute_region(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'scf.execute_region' op has no gradient rule (tenzr-grad differentiates control flow written as}}
  %y = scf.execute_region -> tensor<3xf32> {
    %s = "tenzr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  }
  %0 = "tenzr.reduce_sum"(%y) : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A float8 value on the differentiated path (unsigned integers, which JAX's exports carry
// through loops, are carried as any other).
func.func @narrow_int(%x: tensor<f32>, %u: tensor<f8E4M3FN>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  // expected-error@+1 {{tenzr-grad: 'stablehlo.while' has a value of type tensor<f8E4M3FN>, which it cannot differentiate through (float8 types and 4-bit integers are not supported yet)}}
  %r:3 = stablehlo.while(%a = %x, %i = %c0, %k = %u) : tensor<f32>, tensor<i64>, tensor<f8E4M3FN>
    cond {
      %c3 = stablehlo.constant dense<3> : tensor<i64>
      %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %c1 = stablehlo.constant dense<1> : tensor<i64>
      %i2 = stablehlo.add %i, %c1 : tensor<i64>
      %s = stablehlo.sine %a : tensor<f32>
      stablehlo.return %s, %i2, %k : tensor<f32>, tensor<i64>, tensor<f8E4M3FN>
    }
  return %r#0 : tensor<f32>
}
