// RUN: ridge-opt %s -split-input-file -ridge-match-gelu=remarks=true -canonicalize -verify-diagnostics | FileCheck %s

// GPT-2's NewGELU as exported: x^3 as x * (x * x), the constants as f32
// scalars, 0.5 applied last. One ridge.gelu (tanh) of x; the chain is gone.
// It keeps what the chain moved run one kernel per ONNX node, for the
// report's per-node plan: here, without node names, one node (x, y and the
// four constants: 272 bytes).
// CHECK-LABEL: func @gpt2_new_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = ridge.gelu %[[X]] {approximate = "tanh", ridge.per_node_bytes = 272 : i64} : tensor<1x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gpt2_new_gelu(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %k = ridge.constant dense<0.0447149985> : tensor<f32>
  %s = ridge.constant dense<0.797884583> : tensor<f32>
  %one = ridge.constant dense<1.0> : tensor<f32>
  %half = ridge.constant dense<0.5> : tensor<f32>
  %0 = ridge.mul %x, %x : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %1 = ridge.mul %x, %0 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = ridge.mul %k, %1 : (tensor<f32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %3 = ridge.add %x, %2 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %4 = ridge.mul %s, %3 : (tensor<f32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %5 = ridge.tanh %4 : tensor<1x4x8xf32>
  %6 = ridge.add %one, %5 : (tensor<f32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %7 = ridge.mul %x, %6 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %8 = ridge.mul %half, %7 : (tensor<f32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %8 : tensor<1x4x8xf32>
}

// -----

// The same formula written another way: x^3 as Pow(x, 3), 0.5 * x first,
// the constants as [1] splats on the other side of each product.
// CHECK-LABEL: func @pow_and_half_first
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.*]] = ridge.gelu %[[X]] {approximate = "tanh", ridge.per_node_bytes = {{[0-9]+}} : i64} : tensor<16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @pow_and_half_first(%x: tensor<16xf32>) -> tensor<16xf32> {
  %three = ridge.constant dense<3.0> : tensor<f32>
  %k = ridge.constant dense<0.044715> : tensor<1xf32>
  %s = ridge.constant dense<0.7978845608> : tensor<1xf32>
  %one = ridge.constant dense<1.0> : tensor<1xf32>
  %half = ridge.constant dense<0.5> : tensor<1xf32>
  %0 = ridge.pow %x, %three : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %1 = ridge.mul %0, %k : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %2 = ridge.add %1, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %3 = ridge.mul %2, %s : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %4 = ridge.tanh %3 : tensor<16xf32>
  %5 = ridge.add %4, %one : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %6 = ridge.mul %half, %x : (tensor<1xf32>, tensor<16xf32>) -> tensor<16xf32>
  %7 = ridge.mul %6, %5 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %7 : tensor<16xf32>
}

// -----

// torch.nn.GELU() as BERT and ViT export it: x * (erf(x / sqrt(2)) + 1) *
// 0.5. One ridge.gelu (approximate "none", the default).
// CHECK-LABEL: func @bert_erf_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x1024xf32>)
// CHECK-NEXT: %[[Y:.*]] = ridge.gelu %[[X]] {ridge.per_node_bytes = {{[0-9]+}} : i64} : tensor<1x128x1024xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bert_erf_gelu(%x: tensor<1x128x1024xf32>) -> tensor<1x128x1024xf32> {
  %sqrt2 = ridge.constant dense<1.41421354> : tensor<f32>
  %one = ridge.constant dense<1.0> : tensor<f32>
  %half = ridge.constant dense<0.5> : tensor<f32>
  %0 = ridge.div %x, %sqrt2 : (tensor<1x128x1024xf32>, tensor<f32>) -> tensor<1x128x1024xf32>
  %1 = ridge.erf %0 : tensor<1x128x1024xf32>
  %2 = ridge.add %1, %one : (tensor<1x128x1024xf32>, tensor<f32>) -> tensor<1x128x1024xf32>
  %3 = ridge.mul %x, %2 : (tensor<1x128x1024xf32>, tensor<1x128x1024xf32>) -> tensor<1x128x1024xf32>
  %4 = ridge.mul %3, %half : (tensor<1x128x1024xf32>, tensor<f32>) -> tensor<1x128x1024xf32>
  return %4 : tensor<1x128x1024xf32>
}

// -----

// A chain that almost matches is left alone, and the remark says why: a
// coefficient of x^3 that is not 0.044715 ...
// CHECK-LABEL: func @other_coefficient
// CHECK-NOT: ridge.gelu
// CHECK: ridge.tanh
func.func @other_coefficient(%x: tensor<16xf32>) -> tensor<16xf32> {
  %k = ridge.constant dense<0.05> : tensor<f32>
  %s = ridge.constant dense<0.797884583> : tensor<f32>
  %one = ridge.constant dense<1.0> : tensor<f32>
  %half = ridge.constant dense<0.5> : tensor<f32>
  %0 = ridge.mul %x, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %1 = ridge.mul %x, %0 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %2 = ridge.mul %k, %1 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %3 = ridge.add %x, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %4 = ridge.mul %s, %3 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %5 = ridge.tanh %4 : tensor<16xf32>
  %6 = ridge.add %one, %5 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %7 = ridge.mul %x, %6 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  // expected-remark @below {{GELU left as exported: the x^3 coefficient is 0.050000, not 0.044715}}
  %8 = ridge.mul %half, %7 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  return %8 : tensor<16xf32>
}

// -----

// ... an intermediate result read elsewhere (the composite would not
// remove the chain, only add to it) ...
// CHECK-LABEL: func @tanh_read_elsewhere
// CHECK-NOT: ridge.gelu
func.func @tanh_read_elsewhere(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %k = ridge.constant dense<0.044715> : tensor<f32>
  %s = ridge.constant dense<0.797884583> : tensor<f32>
  %one = ridge.constant dense<1.0> : tensor<f32>
  %half = ridge.constant dense<0.5> : tensor<f32>
  %0 = ridge.mul %x, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %1 = ridge.mul %x, %0 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %2 = ridge.mul %k, %1 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %3 = ridge.add %x, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %4 = ridge.mul %s, %3 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %5 = ridge.tanh %4 : tensor<16xf32>
  %6 = ridge.add %one, %5 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %7 = ridge.mul %x, %6 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  // expected-remark @below {{GELU left as exported: an intermediate result of the chain is read elsewhere}}
  %8 = ridge.mul %half, %7 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  return %8, %5 : tensor<16xf32>, tensor<16xf32>
}

// -----

// ... or an erf of something else than x / sqrt(2).
// CHECK-LABEL: func @erf_of_x
// CHECK-NOT: ridge.gelu
func.func @erf_of_x(%x: tensor<16xf32>) -> tensor<16xf32> {
  %one = ridge.constant dense<1.0> : tensor<f32>
  %half = ridge.constant dense<0.5> : tensor<f32>
  %1 = ridge.erf %x : tensor<16xf32>
  %2 = ridge.add %1, %one : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %3 = ridge.mul %x, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  // expected-remark @below {{GELU left as exported: the erf's argument is not x / sqrt(2)}}
  %4 = ridge.mul %3, %half : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  return %4 : tensor<16xf32>
}
