// Misuse of tenzr-opt: each case is one MLIR-style error line and a non-zero exit, never a traceback.

// RUN: not tenzr-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// MISSING-NOT: Traceback

// RUN: not tenzr-opt %s --no-such-pass 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: error: unknown pass or option '--no-such-pass'

// RUN: not tenzr-opt %s -q 2>&1 | filecheck %s --check-prefix=SHORT
// SHORT: error: unknown option '-q'

// RUN: not tenzr-opt %s --tenzr-grad="mode=sideways" 2>&1 | filecheck %s --check-prefix=MODE
// MODE: error: option 'mode' of pass 'tenzr-grad' must be one of grad, vjp, value_and_grad, got 'sideways'

// RUN: not tenzr-opt %s --tenzr-grad="colour=red" 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: error: pass 'tenzr-grad' has no option 'colour' (options: func, wrt, mode, recompute)

// RUN: not tenzr-opt %s --tenzr-grad="wrt=a" 2>&1 | filecheck %s --check-prefix=WRT
// WRT: error: option 'wrt' of pass 'tenzr-grad' expects int,int,..., got 'a'

// RUN: not tenzr-opt %s --pass-pipeline="builtin.module(canonicalize" 2>&1 | filecheck %s --check-prefix=PIPE
// PIPE: error: cannot parse pass pipeline 'builtin.module(canonicalize': expected builtin.module(...)

// RUN: not tenzr-opt %s --pass-pipeline="builtin.module(cse,func.func(canonicalize)" 2>&1 | filecheck %s --check-prefix=NEST
// NEST: error: unbalanced brackets or quotes in pass pipeline

// RUN: not tenzr-opt %s --pass-pipeline="builtin.module(not-a-pass)" 2>&1 | filecheck %s --check-prefix=PIPEPASS
// PIPEPASS: error: unknown pass or bad pipeline 'not-a-pass'

// MLIR prints some option errors itself and goes on (the inliner parses default-pipeline
// only when it runs on a function): each is still an error and a non-zero exit.
// RUN: not tenzr-opt %s --pass-pipeline="builtin.module(inline{default-pipeline=bogus})" 2>&1 | filecheck %s --check-prefix=INNER
// INNER: error: bad options or pipeline in 'inline{default-pipeline=bogus}': 'bogus' does not refer to a registered pass or pass pipeline
// INNER-NOT: MLIR Textual PassPipeline Parser
// RUN: not tenzr-opt %s --canonicalize="max-iterations=x" 2>&1 | filecheck %s --check-prefix=MLIROPT
// MLIROPT: error: bad options or pipeline in 'canonicalize{max-iterations=x}': for the --max-iterations option: 'x' value invalid for long argument!
// RUN: not tenzr-opt %s --inline="nope=1" 2>&1 | filecheck %s --check-prefix=MLIRNAME
// MLIRNAME: error: bad options or pipeline in 'inline{nope=1}': <Pass-Options-Parser>: no such option nope

// RUN: not tenzr-opt %s %s 2>&1 | filecheck %s --check-prefix=TWO
// TWO: error: expects one input file, got 2

// RUN: not tenzr-opt %s -o 2>&1 | filecheck %s --check-prefix=NOVALUE
// NOVALUE: error: option '-o' needs a value

// RUN: not tenzr-opt %s -o %S/no-such-dir/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// OUTPUT: error: cannot open output file '{{.*}}out.mlir': No such file or directory

// RUN: echo 'func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> { %0 = foo' | not tenzr-opt 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: <stdin>:1:{{[0-9]+}}: error:

// A parser note keeps its own location.
// RUN: not tenzr-opt %inputs/prior-use.mlir 2>&1 | filecheck %s --check-prefix=PRIOR
// PRIOR: prior-use.mlir:3:20: error: use of value '%0' expects different type than prior uses
// PRIOR-NEXT: prior-use.mlir:2:3: note: prior use here

// A few hundred nested modules, or an integer of hundreds of digits, are refused before
// MLIR's parser sees them.
// RUN: not tenzr-opt %inputs/deep-nesting.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// DEEP: deep-nesting.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the input nests brackets more than 256 deep

// A plugin's own failure is reported as the plugin's, at its line; a missing one as missing.
// RUN: not tenzr-opt %s --load=%inputs/failing-plugin.py 2>&1 | filecheck %s --check-prefix=PLUGIN
// PLUGIN: error: {{.*}}failing-plugin.py:2: plugin '{{.*}}failing-plugin.py' failed: ValueError: boom
// RUN: not tenzr-opt %s --load=%inputs/no-such-plugin.py 2>&1 | filecheck %s --check-prefix=NOPLUGIN
// NOPLUGIN: error: cannot load plugin '{{.*}}no-such-plugin.py': no such file

// RUN: not tenzr-opt %s --tenzr-grad="func=nope" 2>&1 | filecheck %s --check-prefix=FUNC
// FUNC: error: tenzr-grad: no function named '@nope' (functions: @f)

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
