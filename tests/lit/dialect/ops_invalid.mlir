// Every rule of the tenzr verifier, each broken once.
// RUN: tenzr-opt %s --split-input-file --verify-diagnostics

func.func @wrong_arity(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'tenzr.add' op expects 2 operands (x, y), got 1}}
  %0 = "tenzr.add"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @no_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{operand shapes [2, 3] and [4] do not broadcast}}
  %0 = "tenzr.mul"(%x, %y) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @wrong_result_type(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{result #0 has type tensor<3xf32>, but the op's rule gives tensor<2x3xf32>}}
  %0 = "tenzr.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @mixed_element_types(%x: tensor<3xf32>, %y: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error@+1 {{operand element types f32, f64 differ (operand element types must match: no implicit promotion)}}
  %0 = "tenzr.add"(%x, %y) : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @float_only(%x: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{takes floating-point or complex tensors (f16, bf16, f32, f64, complex<f32>, complex<f64>), got i32}}
  %0 = "tenzr.exp"(%x) : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @unsupported_type(%x: tensor<3xi4>) -> tensor<3xi4> {
  // expected-error@+1 {{operand #0 has type tensor<3xi4>; tenzr ops take ranked static tensors}}
  %0 = "tenzr.neg"(%x) : (tensor<3xi4>) -> tensor<3xi4>
  return %0 : tensor<3xi4>
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{operand #0 has type tensor<?xf32>}}
  %0 = "tenzr.neg"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @unknown_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{unknown op 'tenzr.frobnicate' (the tenzr dialect has: abs, acos, acosh, add,}}
  %0 = "tenzr.frobnicate"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @misspelt_op(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{unknown op 'tenzr.matmull'; did you mean 'tenzr.matmul'?}}
  %0 = "tenzr.matmull"(%x, %x) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @missing_attribute(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{requires attribute 'permutation' (array<i64: ...>)}}
  %0 = "tenzr.transpose"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @ill_typed_attribute(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{attribute 'axes' must be array<i64: ...>, got 1 : i64}}
  %0 = "tenzr.reduce_sum"(%x) {axes = 1} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @ill_typed_bool(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{attribute 'keepdims' must be bool, got "no"}}
  %0 = "tenzr.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = "no"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @unknown_attribute(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{unknown attribute 'axis' (expected: axes, keepdims)}}
  %0 = "tenzr.reduce_sum"(%x) {axis = 1} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{attribute 'axes': axis 2 is out of range for rank 2}}
  %0 = "tenzr.reduce_max"(%x) {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @repeated_axes(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error@+1 {{attribute 'axes': axes [0, -2] repeat an axis}}
  %0 = "tenzr.reduce_sum"(%x) {axes = array<i64: 0, -2>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @bad_permutation(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{permutation [1, 1] is not a permutation of 0..1}}
  %0 = "tenzr.transpose"(%x) {permutation = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @permutation_length(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{attribute 'permutation' has 3 entries, expected 2 (the operand rank)}}
  %0 = "tenzr.transpose"(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @slice_out_of_range(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{slice [3:5] on axis 0 is out of range for size 4}}
  %0 = "tenzr.slice"(%x) {start = array<i64: 3>, stop = array<i64: 5>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_step(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{step 0 on axis 0 must be >= 1}}
  %0 = "tenzr.slice"(%x) {start = array<i64: 0>, stop = array<i64: 4>, step = array<i64: 0>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x5x5xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error@+1 {{kernel input features 2 times feature_group_count 1 must equal input channels 3}}
  %0 = "tenzr.convolution"(%x, %w) : (tensor<1x3x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{feature_group_count 2 must divide input channels 4 and kernel output features 3}}
  %0 = "tenzr.convolution"(%x, %w) {feature_group_count = 2} : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @conv_window_length(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{attribute 'window_strides' has 1 entries, expected 2 (the number of spatial dims)}}
  %0 = "tenzr.convolution"(%x, %w) {window_strides = array<i64: 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @conv_rank(%x: tensor<2x5xf32>, %w: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{input and kernel must both have rank 3, 4 or 5 (1-3 spatial dims), got 2 and 2}}
  %0 = "tenzr.convolution"(%x, %w) : (tensor<2x5xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @float_indices(%x: tensor<4x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{indices must be integers, got f32}}
  %0 = "tenzr.gather"(%x, %i) {axis = 0} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @unknown_scatter_mode(%x: tensor<4xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{attribute 'mode': 'mean' is not one of 'set', 'add', 'multiply', 'min', 'max'}}
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "mean"} : (tensor<4xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @scatter_updates_shape(%x: tensor<4x3xf32>, %i: tensor<2xi32>, %u: tensor<2x2xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{updates shape [2, 2] must be [2, 3] (x's shape with dim 0 = K)}}
  %0 = "tenzr.scatter"(%x, %i, %u) {axis = 0, mode = "add"} : (tensor<4x3xf32>, tensor<2xi32>, tensor<2x2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @unknown_direction(%x: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error@+1 {{attribute 'direction': 'greater' is not one of 'gt', 'ge', 'lt', 'le', 'eq', 'ne'}}
  %0 = "tenzr.compare"(%x, %x) {direction = "greater"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @select_condition(%c: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{condition must be i1, got f32}}
  %0 = "tenzr.select"(%c, %x, %x) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{contracting dimensions differ: a is [..., 2, 3], b is [..., 4, 5]}}
  %0 = "tenzr.matmul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x5xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{operands must have rank >= 2, got ranks 1 and 2}}
  %0 = "tenzr.matmul"(%a, %b) : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{result shape [4, 2] has 8 elements, operand [2, 3] has 6}}
  %0 = "tenzr.reshape"(%x) : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @broadcast_to_bad(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{operand shape [3] does not broadcast to [2, 4] (NumPy rules)}}
  %0 = "tenzr.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @pad_value_rank(%x: tensor<3xf32>, %v: tensor<1xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{pad_value must be rank 0, got shape [1]}}
  %0 = "tenzr.pad"(%x, %v) {low = array<i64: 1>, high = array<i64: 1>} : (tensor<3xf32>, tensor<1xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @pad_interior(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<3xf32> {
  // expected-error@+1 {{interior padding [-1] must be >= 0}}
  %0 = "tenzr.pad"(%x, %v) {low = array<i64: 0>, high = array<i64: 0>, interior = array<i64: -1>} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @concatenate_shapes(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{operand #1 shape [3, 3] differs from [2, 3] off axis 1}}
  %0 = "tenzr.concatenate"(%a, %b) {axis = 1} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @dynamic_slice_starts(%x: tensor<4x3xf32>, %s: tensor<i32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{expects 2 start indices (one per dim), got 1}}
  %0 = "tenzr.dynamic_slice"(%x, %s) {sizes = array<i64: 2, 2>} : (tensor<4x3xf32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_slice_float_start(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<2xf32> {
  // expected-error@+1 {{start #0 must be integers, got f32}}
  %0 = "tenzr.dynamic_slice"(%x, %s) {sizes = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dynamic_slice_size(%x: tensor<4xf32>, %s: tensor<i32>) -> tensor<5xf32> {
  // expected-error@+1 {{size 5 on dim 0 must lie in [0, 4]}}
  %0 = "tenzr.dynamic_slice"(%x, %s) {sizes = array<i64: 5>} : (tensor<4xf32>, tensor<i32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @take_along_axis_shape(%x: tensor<4x3xf32>, %i: tensor<2x2xi32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{indices dim 1 is 2, x's is 3: only dim `axis` may differ}}
  %0 = "tenzr.take_along_axis"(%x, %i) {axis = 0} : (tensor<4x3xf32>, tensor<2x2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @iota_dimension() -> tensor<3xi32> {
  // expected-error@+1 {{dimension 1 is out of range for rank 1}}
  %0 = "tenzr.iota"() {dimension = 1} : () -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @constant_value() -> tensor<3xf32> {
  // expected-error@+1 {{attribute 'value' must be dense elements, got 1.000000e+00 : f32}}
  %0 = "tenzr.constant"() {value = 1.0 : f32} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @custom_call_name(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{requires attribute 'call_target_name' (string)}}
  %0 = "tenzr.custom_call"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @no_return(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.reduce_sum' op ends a block of 'func.func', but tenzr ops are not terminators (is a 'return' missing?)}}
  %0 = "tenzr.reduce_sum"(%x) : (tensor<3xf32>) -> tensor<f32>
}

// -----

func.func @with_region(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'tenzr.neg' op has regions, but takes none}}
  %0 = "tenzr.neg"(%x) ({
  ^bb0:
    "tenzr.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  }) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @unreadable_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'tenzr.slice' op attribute 'start' has a type the bindings cannot read}}
  %0 = "tenzr.slice"(%x) {start = array<i0: 0>, stop = array<i64: 4>, step = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @real_of_real(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{takes complex tensors (complex<f32>, complex<f64>), got f32}}
  %0 = "tenzr.real"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @complex_of_ints(%x: tensor<3xi32>) -> tensor<3xcomplex<f32>> {
  // expected-error@+1 {{takes f32 or f64 parts, got i32}}
  %0 = "tenzr.complex"(%x, %x) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

func.func @complex_order(%z: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  // expected-error@+1 {{takes real tensors (complex numbers have no order), got complex<f32>}}
  %0 = "tenzr.maximum"(%z, %z) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

func.func @complex_less(%z: tensor<3xcomplex<f32>>) -> tensor<3xi1> {
  // expected-error@+1 {{direction 'lt' needs real operands (complex numbers compare only eq and ne)}}
  %0 = "tenzr.compare"(%z, %z) {direction = "lt"} : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @complex_erf(%z: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  // expected-error@+1 {{takes floating-point tensors (f16, bf16, f32, f64), got complex<f32>}}
  %0 = "tenzr.erf"(%z) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}
