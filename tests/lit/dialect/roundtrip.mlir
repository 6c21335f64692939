// Every tenzr op parses, verifies, prints and parses again unchanged.
// RUN: tenzr-opt %s | tenzr-opt | filecheck %s
// RUN: tenzr-opt %s --mlir-print-op-generic | tenzr-opt | filecheck %s

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2xi64>, %s: tensor<i32>,
                   %img: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) -> tensor<2x3xf32> {
  // CHECK: "tenzr.constant"() {value = dense<1.000000e+00> : tensor<3xf32>}
  %c = "tenzr.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  // CHECK: "tenzr.add"
  %0 = "tenzr.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.sub"
  %1 = "tenzr.sub"(%0, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.mul"
  %2 = "tenzr.mul"(%1, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.div"
  %3 = "tenzr.div"(%2, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.pow"
  %4 = "tenzr.pow"(%3, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.maximum"
  %5 = "tenzr.maximum"(%4, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.minimum"
  %6 = "tenzr.minimum"(%5, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.compare"{{.*}}direction = "lt"
  %7 = "tenzr.compare"(%6, %x) {direction = "lt"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: "tenzr.select"
  %8 = "tenzr.select"(%7, %6, %x) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.neg"
  %9 = "tenzr.neg"(%8) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.exp"
  %10 = "tenzr.exp"(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.log"
  %11 = "tenzr.log"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.sqrt"
  %12 = "tenzr.sqrt"(%11) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.rsqrt"
  %13 = "tenzr.rsqrt"(%12) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.tanh"
  %14 = "tenzr.tanh"(%13) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.sigmoid"
  %15 = "tenzr.sigmoid"(%14) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.relu"
  %16 = "tenzr.relu"(%15) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.sin"
  %17 = "tenzr.sin"(%16) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.cos"
  %18 = "tenzr.cos"(%17) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.abs"
  %19 = "tenzr.abs"(%18) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.log1p"
  %20 = "tenzr.log1p"(%19) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.expm1"
  %21 = "tenzr.expm1"(%20) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.sign"
  %22 = "tenzr.sign"(%21) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.floor"
  %23 = "tenzr.floor"(%22) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.round"
  %24 = "tenzr.round"(%23) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.stop_gradient"
  %25 = "tenzr.stop_gradient"(%24) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.convert"{{.*}} -> tensor<2x3xf64>
  %26 = "tenzr.convert"(%25) : (tensor<2x3xf32>) -> tensor<2x3xf64>
  // CHECK: "tenzr.matmul"
  %27 = "tenzr.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %28 = "tenzr.matmul"(%x, %27) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // CHECK: "tenzr.convolution"{{.*}}padding_low = array<i64: 1, 1>
  %29 = "tenzr.convolution"(%img, %k) {padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  // CHECK: "tenzr.reshape"
  %30 = "tenzr.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  // CHECK: "tenzr.broadcast_to"
  %31 = "tenzr.broadcast_to"(%y) : (tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: "tenzr.pad"
  %pv = "tenzr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %32 = "tenzr.pad"(%x, %pv) {low = array<i64: 1, 0>, high = array<i64: 0, 1>, interior = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
  // CHECK: "tenzr.slice"
  %33 = "tenzr.slice"(%32) {start = array<i64: 1, 0>, stop = array<i64: 3, 6>, step = array<i64: 1, 2>} : (tensor<3x6xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.reverse"
  %34 = "tenzr.reverse"(%33) {dimensions = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.concatenate"
  %35 = "tenzr.concatenate"(%34, %x) {axis = 0} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: "tenzr.gather"
  %36 = "tenzr.gather"(%35, %i) {axis = 0} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  // CHECK: "tenzr.take_along_axis"
  %ti = "tenzr.argsort"(%x) {axis = 1} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %37 = "tenzr.take_along_axis"(%x, %ti) {axis = 1} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: "tenzr.scatter"{{.*}}mode = "max"
  %38 = "tenzr.scatter"(%35, %i, %37) {axis = 0, mode = "max"} : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: "tenzr.dynamic_slice"
  %39 = "tenzr.dynamic_slice"(%38, %s, %s) {sizes = array<i64: 2, 3>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  // CHECK: "tenzr.dynamic_update_slice"
  %40 = "tenzr.dynamic_update_slice"(%38, %39, %s, %s) : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  // CHECK: "tenzr.reduce_sum"
  %41 = "tenzr.reduce_sum"(%40) {axes = array<i64: 0>, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  // CHECK: "tenzr.reduce_prod"
  %42 = "tenzr.reduce_prod"(%40) {axes = array<i64: 1>, keepdims = true} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  // CHECK: "tenzr.reduce_max"
  %43 = "tenzr.reduce_max"(%40) : (tensor<4x3xf32>) -> tensor<f32>
  // CHECK: "tenzr.reduce_min"
  %44 = "tenzr.reduce_min"(%40) {axes = array<i64: -1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  // CHECK: "tenzr.argmax"
  %45 = "tenzr.argmax"(%40) {axis = 0} : (tensor<4x3xf32>) -> tensor<3xi64>
  // CHECK: "tenzr.argmin"
  %46 = "tenzr.argmin"(%40) {axis = 1} : (tensor<4x3xf32>) -> tensor<4xi64>
  // CHECK: "tenzr.sort"
  %47 = "tenzr.sort"(%40) {axis = 0, descending = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: "tenzr.iota"
  %48 = "tenzr.iota"() {dimension = 0} : () -> tensor<5xi32>
  // CHECK: "tenzr.custom_call"{{.*}}call_target_name = "my.op"
  %49 = "tenzr.custom_call"(%x) {call_target_name = "my.op", scale = 2.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %8 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @control_flow
// CHECK: "tenzr.while"(%{{.*}}, %arg1) ({
// CHECK: "tenzr.yield"(%{{.*}}) : (tensor<i1>) -> ()
// CHECK: }, {
// CHECK: "tenzr.yield"(%{{.*}}, %{{.*}}) : (tensor<i32>, tensor<3xf32>) -> ()
// CHECK: }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
// CHECK: "tenzr.case"(%arg0, %{{.*}}) ({
// CHECK: ^bb0(%{{.*}}: tensor<3xf32>):
// CHECK: }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
func.func @control_flow(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "tenzr.while"(%zero, %x) ({
  ^bb0(%k: tensor<i32>, %v: tensor<3xf32>):
    %c = "tenzr.compare"(%k, %i) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%k: tensor<i32>, %v: tensor<3xf32>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %k2 = "tenzr.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v2 = "tenzr.sin"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%k2, %v2) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  %y = "tenzr.case"(%i, %r#1) ({
  ^bb0(%v: tensor<3xf32>):
    %e = "tenzr.exp"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%e) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%v: tensor<3xf32>):
    "tenzr.yield"(%v) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
