// tenzr-compile runs the whole pipeline and IREE; tenzr-run executes the result.
// RUN: tenzr-compile %s --tenzr-grad="func=f mode=value_and_grad" --target=cpu -o %t.vmfb
// RUN: tenzr-run %t.vmfb --function=f_value_and_grad --input="[1.0, -2.0, 0.5]:f32" | filecheck %s
// RUN: tenzr-compile %s --emit=stablehlo | filecheck %s --check-prefix=EMIT
// RUN: tenzr-compile %s --target=cuda -o %t.cuda.vmfb
// RUN: not tenzr-compile %s --target=tpu 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: tenzr-compile --list-passes | filecheck %s --check-prefix=LIST
// RUN: not tenzr-compile %S/missing.mlir -o %t.x 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not tenzr-run %t.vmfb --function=g 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not tenzr-run %t.vmfb --function=f --input="[1, 2" 2>&1 | filecheck %s --check-prefix=BADINPUT
// A literal without a dtype takes the one the function declares.
// RUN: tenzr-run %t.vmfb --function=f_value_and_grad --input="[1, -2, 0.5]" | filecheck %s
// RUN: not tenzr-run %t.vmfb --function=f --input="[1.0, 2.0]" 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not tenzr-run %t.vmfb --function=f 2>&1 | filecheck %s --check-prefix=ARITY
// RUN: not tenzr-run %s --function=f 2>&1 | filecheck %s --check-prefix=NOTVMFB
// RUN: not tenzr-run %t.vmfb --target=cuda --function=f --input="[1, 2, 3]" 2>&1 | filecheck %s --check-prefix=WHERE
// RUN: not tenzr-run %t.vmfb --function=f --input='[1, 2, "a"]' 2>&1 | filecheck %s --check-prefix=NOTNUMBER
// RUN: not tenzr-run %t.vmfb --function=f --input="[99999999999999999999, 0, 0]" 2>&1 | filecheck %s --check-prefix=OBJECT
// RUN: not tenzr-run %t.vmfb --function= 2>&1 | filecheck %s --check-prefix=EMPTYNAME
// RUN: not tenzr-run %t.vmfb --function=f --input="[1, 2, 3]" --output-dir=%s 2>&1 | filecheck %s --check-prefix=OUTDIR
// CPU features alone are added to the host architecture's baseline CPU.
// RUN: tenzr-compile %s --cpu-features=+sse4.2 -o %t.features.vmfb
// RUN: tenzr-run %t.features.vmfb --function=f --input="[1, 2, 3]" | filecheck %s --check-prefix=FEATURES
// An unknown CPU or feature is refused before LLVM ignores it (and then fails elsewhere).
// RUN: not tenzr-compile %s --cpu=znver -o %t.cpu 2>&1 | filecheck %s --check-prefix=CPU
// RUN: not tenzr-compile %s --cpu-features=+avx2,+bogus -o %t.cpu 2>&1 | filecheck %s --check-prefix=FEATURE
// RUN: not tenzr-compile %s --cpu-features=avx2 -o %t.cpu 2>&1 | filecheck %s --check-prefix=FEATURESIGN
// What IREE would crash on, or never finish compiling, is refused where it is.
// RUN: not tenzr-compile %inputs/recursion.mlir -o %t.rec 2>&1 | filecheck %s --check-prefix=RECURSION
// RUN: not tenzr-compile %inputs/unknown-op.mlir --emit=stablehlo 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tenzr-compile %inputs/no-function.mlir -o %t.none 2>&1 | filecheck %s --check-prefix=NOFUNCTION
// NaN and infinities are literals too.
// RUN: tenzr-run %t.vmfb --function=f_value_and_grad --input="[nan, -inf, 1]" | filecheck %s --check-prefix=NAN

// f(x) = sum(x^2); the gradient is 2x.
// CHECK: result[0]: float32[] =
// CHECK-NEXT: 5.25
// CHECK: result[1]: float32[3] =
// CHECK-NEXT: [ 2. -4.  1.]

// A module without ops IREE runs in place marks its functions for zero-copy inputs.
// EMIT-LABEL: func.func @f
// EMIT-SAME: iree.reflection = {tenzr.inputs = "in-place"}
// EMIT-NOT: "tenzr.
// EMIT: stablehlo.multiply

// TARGET: error: argument --target: invalid choice: 'tpu'
// LIST: tenzr passes:
// LIST: --tenzr-grad
// MISSING: error: cannot open input file '{{.*}}missing.mlir': No such file or directory
// NOFUNC: error: the compiled module has no function 'g' (it has: f, f_value_and_grad)
// BADINPUT: error: cannot parse input '[1, 2'
// SHAPE: error: input 0 of 'f' must be tensor<3xf32>, but was given f32 of shape [2] (declared: f(tensor<3xf32>))
// ARITY: error: 'f' takes 1 input(s) (tensor<3xf32>), but was given 0
// NOTVMFB: error: not a compiled module (.vmfb): it looks like MLIR text: compile it first
// WHERE: error: the module was compiled for cpu, so it cannot run on cuda: run it on cpu (tenzr-run --target=cpu)
// NOTNUMBER: error: cannot parse input '[1, 2, "a"]': {{.*}} ('a' is not a number)
// OBJECT: error: input '[99999999999999999999, 0, 0]' has dtype object, which no tensor element type holds
// EMPTYNAME: error: --function needs the name of a function
// OUTDIR: error: cannot write the results to '{{.*}}tenzr-compile.mlir': File exists
// FEATURES: result[0]: float32[] =
// FEATURES-NEXT: {{^}}14.{{$}}
// RECURSION: recursion.mlir:6:8: error: recursion (@f -> @g -> @f): IREE cannot compile a function that calls itself
// UNKNOWN: unknown-op.mlir:2:8: error: unknown op 'foo.bar': no dialect IREE compiles has it
// NOFUNCTION: no-function.mlir:2:1: error: nothing to compile: the module defines no function
// NAN: result[1]: float32[3] =
// NAN-NEXT: [ nan -inf   2.]

func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// CPU: error: unknown CPU 'znver' for {{.*}} (did you mean znver
// CPU-NOT: is not a recognized processor
// FEATURE: error: unknown CPU feature '+bogus' for
// FEATURE-NOT: is not a recognized feature
// FEATURESIGN: error: unknown CPU feature 'avx2' for {{.*}}; write +feature to enable one or -feature to disable it
