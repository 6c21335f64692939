// stablehlo.reduce with add, max, min and multiply bodies, and the variadic reduce of
// jnp.argmax.
// RUN: tenzr-opt %s --tenzr-grad=mode=vjp | filecheck %s

// A sum's cotangent broadcasts ȳ over the reduced dimensions.
// CHECK-LABEL: func.func @sum_vjp
// CHECK: %[[DX:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<3xf32>) -> tensor<3x4xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @sum(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A max splits ȳ evenly among the elements equal to it (as JAX).
// CHECK-LABEL: func.func @max_vjp
// CHECK: %[[M:.*]] = stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.maximum
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[M]], dims = [1]
// CHECK: %[[AT:.*]] = stablehlo.compare EQ, %arg0, %[[B]], FLOAT
// CHECK: %[[ONES:.*]] = stablehlo.convert %[[AT]] : (tensor<3x4xi1>) -> tensor<3x4xf32>
// CHECK: %[[COUNT:.*]] = stablehlo.reduce(%[[ONES]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
// CHECK: %[[SHARE:.*]] = stablehlo.divide %arg1, %[[COUNT]]
// CHECK: %[[S:.*]] = stablehlo.broadcast_in_dim %[[SHARE]], dims = [1]
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[ONES]], %[[S]]
// CHECK: return %[[M]], %[[DX]]
func.func @max(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A product, exact with zeros and differentiable again: x̄ᵢ = ȳ·(product of the
// elements before i)·(product of those after), each a running product by doubling
// (shifted slices padded with ones), with no division.
// CHECK-LABEL: func.func @prod_vjp
// CHECK: %[[S1:.*]] = stablehlo.slice %arg0 [0:3, 0:3]
// CHECK: %[[P1:.*]] = stablehlo.pad %[[S1]], %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: %[[R1:.*]] = stablehlo.multiply %arg0, %[[P1]]
// CHECK: %[[S2:.*]] = stablehlo.slice %[[R1]] [0:3, 0:2]
// CHECK: %[[P2:.*]] = stablehlo.pad %[[S2]], %{{.*}}, low = [0, 2], high = [0, 0]
// CHECK: %[[PREFIX:.*]] = stablehlo.multiply %[[R1]], %[[P2]]
// CHECK: %[[BEFORE:.*]] = stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 1], high = [0, 0]
// CHECK: stablehlo.slice %arg0 [0:3, 1:4]
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [0, 1]
// CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [0, 2]
// CHECK: %[[AFTER:.*]] = stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [0, 1]
// CHECK: %[[OTHERS:.*]] = stablehlo.multiply %[[BEFORE]], %[[AFTER]]
// CHECK-NOT: stablehlo.divide
// CHECK: %[[CT:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0]
// CHECK: %[[DX:.*]] = stablehlo.multiply %[[CT]], %[[OTHERS]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @prod(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %cst) applies stablehlo.multiply across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A max beside its index (jnp.argmax's reduce, its values used): ȳ goes to the element at
// the chosen index of the iota.
// CHECK-LABEL: func.func @max_with_index_vjp
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<3x5xi32>
// CHECK: %[[R:.*]]:2 = stablehlo.reduce
// CHECK: %[[I:.*]] = stablehlo.broadcast_in_dim %[[R]]#1, dims = [0] : (tensor<3xi32>) -> tensor<3x5xi32>
// CHECK: %[[AT:.*]] = stablehlo.compare EQ, %[[IOTA]], %[[I]]
// CHECK: %[[V:.*]] = stablehlo.broadcast_in_dim %[[R]]#0, dims = [0]
// CHECK: %[[SAME:.*]] = stablehlo.compare EQ, %arg0, %[[V]]
// CHECK: %[[THERE:.*]] = stablehlo.and %[[AT]], %[[SAME]]
// CHECK: %[[YBAR:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [0]
// CHECK: %[[DX:.*]] = stablehlo.select %[[THERE]], %[[YBAR]], %{{.*}}
// CHECK: return %{{.*}}, %[[DX]]
func.func @max_with_index(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  %iota = stablehlo.iota dim = 1 : tensor<3x5xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %zero) across dimensions = [1] : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = stablehlo.and %eq, %lt : tensor<i1>
    %first = stablehlo.or %gt, %tie : tensor<i1>
    %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %i = stablehlo.select %first, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %v, %i : tensor<f32>, tensor<i32>
  }
  return %0#0 : tensor<3xf32>
}
