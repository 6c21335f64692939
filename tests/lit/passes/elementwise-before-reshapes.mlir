// tenzr-elementwise-before-reshapes: a unary elementwise op of a reshape or transpose becomes
// the reshape or transpose of the op (IREE 3.13 makes this reorder inside its input
// conversion and gets it wrong there); chains move all the way, and ops of two operands stay.
// RUN: tenzr-opt %s --tenzr-elementwise-before-reshapes | filecheck %s

// The reshape stays for its other use.
// CHECK-LABEL: func.func @negate_of_a_reshape
// CHECK: %[[B:.*]] = stablehlo.reshape %arg0 : (tensor<5xf64>) -> tensor<5x1xf64>
// CHECK: %[[N:.*]] = stablehlo.negate %arg0 : tensor<5xf64>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[N]] : (tensor<5xf64>) -> tensor<5x1xf64>
// CHECK: stablehlo.divide %[[R]], %[[B]]
func.func @negate_of_a_reshape(%x: tensor<5xf64>) -> tensor<5x1xf64> {
  %r = stablehlo.reshape %x : (tensor<5xf64>) -> tensor<5x1xf64>
  %n = stablehlo.negate %r : tensor<5x1xf64>
  %d = stablehlo.divide %n, %r : tensor<5x1xf64>
  return %d : tensor<5x1xf64>
}

// CHECK-LABEL: func.func @chain
// CHECK: %[[C:.*]] = stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf64>
// CHECK: %[[E:.*]] = stablehlo.exponential %[[C]] : tensor<2x3xf64>
// CHECK: %[[T:.*]] = stablehlo.transpose %[[E]], dims = [1, 0] : (tensor<2x3xf64>) -> tensor<3x2xf64>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[T]] : (tensor<3x2xf64>) -> tensor<6xf64>
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<2x3xf32>) -> tensor<6xf64> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = stablehlo.reshape %t : (tensor<3x2xf32>) -> tensor<6xf32>
  %c = stablehlo.convert %r : (tensor<6xf32>) -> tensor<6xf64>
  %e = stablehlo.exponential %c : tensor<6xf64>
  return %e : tensor<6xf64>
}

// CHECK-LABEL: func.func @binary_and_bitcast_stay
// CHECK: %[[R:.*]] = stablehlo.reshape %arg0
// CHECK: stablehlo.add %[[R]], %[[R]]
// CHECK: stablehlo.bitcast_convert %[[R]]
func.func @binary_and_bitcast_stay(%x: tensor<4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  %r = stablehlo.reshape %x : (tensor<4xf32>) -> tensor<2x2xf32>
  %a = stablehlo.add %r, %r : tensor<2x2xf32>
  %b = stablehlo.bitcast_convert %r : (tensor<2x2xf32>) -> tensor<2x2xi32>
  return %a, %b : tensor<2x2xf32>, tensor<2x2xi32>
}
