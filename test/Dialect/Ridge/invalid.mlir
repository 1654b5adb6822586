// RUN: ridge-opt %s --split-input-file --verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{operands are not broadcastable}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_k_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{matmul contraction dims differ: 3 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{element count changes: 6 -> 8}}
  %0 = ridge.reshape %a : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = ridge.transpose %a, [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = ridge.softmax %a {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{does not broadcast to the result}}
  %0 = ridge.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @exp_of_int(%a: tensor<3xi32>) {
  // expected-error @+1 {{must be ranked tensor of floating-point values}}
  %0 = ridge.exp %a : tensor<3xi32>
  return
}

// -----

func.func @fusion_group_yield_types(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'ridge.fusion_group' op yields 'tensor<4xf32>' but returns 'tensor<4xf16>'}}
  %0 = ridge.fusion_group "k0" kind "pointwise" -> tensor<4xf16> {
    %1 = ridge.neg %x : tensor<4xf32>
    ridge.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf16>
}
