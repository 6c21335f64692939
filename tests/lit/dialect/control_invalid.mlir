// The rules of tenzr.while, tenzr.case and tenzr.yield, each broken once.
// RUN: tenzr-opt %s --split-input-file --verify-diagnostics

func.func @cond_yields_a_float(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.while' op cond (region #0) must yield one tensor<i1>}}
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }, {
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @body_changes_the_carried_type(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.while' op body (region #1) must yield the carried types (tensor<f32>), got (tensor<f64>)}}
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%v: tensor<f32>):
    %w = "tenzr.convert"(%v) : (tensor<f32>) -> tensor<f64>
    "tenzr.yield"(%w) : (tensor<f64>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @region_arguments_differ(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.while' op cond (region #0) must take (tensor<f32>), got (tensor<f32>, tensor<f32>)}}
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>, %w: tensor<f32>):
    "tenzr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @one_region(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.while' op must have 2 regions, got 1}}
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @missing_yield(%x: tensor<f32>, %p: tensor<i1>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.while' op body (region #1) must end with 'tenzr.yield'}}
  %r = "tenzr.while"(%x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%v: tensor<f32>):
    %w = "tenzr.neg"(%v) : (tensor<f32>) -> tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @case_index_is_a_float(%i: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.case' op index (operand #0) must be tensor<i32>, got tensor<f32>}}
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @branches_disagree(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'tenzr.case' op branch 1 yields (tensor<f32>), but branch 0 yields (tensor<2xf32>): every branch must yield the same types}}
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<2xf32>):
    "tenzr.yield"(%v) : (tensor<2xf32>) -> ()
  }, {
  ^bb0(%v: tensor<2xf32>):
    %s = "tenzr.reduce_sum"(%v) : (tensor<2xf32>) -> tensor<f32>
    "tenzr.yield"(%s) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @case_result_type(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f64> {
  // expected-error@+1 {{'tenzr.case' op result #0 has type tensor<f64>, but the op's rule gives tensor<f32>}}
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<f32>):
    "tenzr.yield"(%v) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f64>
  return %r : tensor<f64>
}

// -----

func.func @yield_outside_a_region_op(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'tenzr.yield' op ends a region of 'tenzr.while' or 'tenzr.case', not of 'func.func'}}
  "tenzr.yield"(%x) : (tensor<f32>) -> ()
}
