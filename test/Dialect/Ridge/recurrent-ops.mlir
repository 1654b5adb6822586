// RUN: ridge-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip and verifier of ridge.recurrent (ONNX RNN, LSTM, GRU).

// CHECK-LABEL: func @lstm_all_operands
// CHECK: ridge.recurrent %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%{{[a-z0-9_]+}}) sequence_lens(%{{[a-z0-9_]+}}) initial_h(%{{[a-z0-9_]+}}) initial_c(%{{[a-z0-9_]+}}) peepholes(%{{[a-z0-9_]+}})
// CHECK-SAME: cell = "lstm"
// CHECK-SAME: -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
func.func @lstm_all_operands(%x: tensor<5x3x2xf32>, %w: tensor<2x16x2xf32>, %r: tensor<2x16x4xf32>,
    %b: tensor<2x32xf32>, %lens: tensor<3xi32>, %h: tensor<2x3x4xf32>, %c: tensor<2x3x4xf32>,
    %p: tensor<2x12xf32>) -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %y, %yh, %yc = ridge.recurrent %x, %w, %r bias(%b) sequence_lens(%lens) initial_h(%h) initial_c(%c) peepholes(%p) {
      cell = "lstm", direction = "bidirectional", hidden_size = 4 : i64,
      activations = ["sigmoid", "tanh", "tanh", "hardsigmoid", "tanh", "relu"],
      activation_alpha = array<f32: 1.0, 1.0, 1.0, 0.2, 1.0, 1.0>,
      activation_beta = array<f32: 0.0, 0.0, 0.0, 0.5, 0.0, 0.0>, clip = 3.0 : f32}
      : (tensor<5x3x2xf32>, tensor<2x16x2xf32>, tensor<2x16x4xf32>, tensor<2x32xf32>, tensor<3xi32>,
         tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x12xf32>)
      -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
  return %y, %yh, %yc : tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @gru_minimal
// CHECK: ridge.recurrent %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {activation_alpha
// CHECK-SAME: linear_before_reset = true
func.func @gru_minimal(%x: tensor<2x1x3xf16>, %w: tensor<1x15x3xf16>, %r: tensor<1x15x5xf16>)
    -> tensor<1x1x5xf16> {
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "gru", direction = "reverse", hidden_size = 5 : i64,
      activations = ["sigmoid", "tanh"], activation_alpha = array<f32: 1.0, 1.0>,
      activation_beta = array<f32: 0.0, 0.0>, linear_before_reset = true}
      : (tensor<2x1x3xf16>, tensor<1x15x3xf16>, tensor<1x15x5xf16>)
      -> (tensor<2x1x1x5xf16>, tensor<1x1x5xf16>)
  return %yh : tensor<1x1x5xf16>
}

// -----

func.func @weight_shape(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x5x5xf32>) {
  // expected-error @+2 {{recurrent weight must be tensor<1x5x3xf32>, got tensor<1x4x3xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "rnn", direction = "forward", hidden_size = 5 : i64,
      activations = ["tanh"], activation_alpha = array<f32: 1.0>, activation_beta = array<f32: 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x5x5xf32>) -> (tensor<2x1x1x5xf32>, tensor<1x1x5xf32>)
  return
}

// -----

func.func @direction_count(%x: tensor<2x1x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) {
  // expected-error @+2 {{expects 2 activations, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "rnn", direction = "bidirectional", hidden_size = 5 : i64,
      activations = ["tanh"], activation_alpha = array<f32: 1.0>, activation_beta = array<f32: 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<2x2x1x5xf32>, tensor<2x1x5xf32>)
  return
}

// -----

func.func @bidirectional_weights(%x: tensor<2x1x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) {
  // expected-error @+2 {{recurrent weight must be tensor<2x5x3xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "rnn", direction = "bidirectional", hidden_size = 5 : i64,
      activations = ["tanh", "tanh"], activation_alpha = array<f32: 1.0, 1.0>, activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<2x2x1x5xf32>, tensor<2x1x5xf32>)
  return
}

// -----

func.func @unknown_activation(%x: tensor<2x1x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) {
  // expected-error @+2 {{unsupported activation 'gelu'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "rnn", direction = "forward", hidden_size = 5 : i64,
      activations = ["gelu"], activation_alpha = array<f32: 1.0>, activation_beta = array<f32: 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<2x1x1x5xf32>, tensor<1x1x5xf32>)
  return
}

// -----

func.func @unknown_cell(%x: tensor<2x1x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) {
  // expected-error @+2 {{unknown recurrent cell 'elman'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r {cell = "elman", direction = "forward", hidden_size = 5 : i64,
      activations = ["tanh"], activation_alpha = array<f32: 1.0>, activation_beta = array<f32: 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<2x1x1x5xf32>, tensor<1x1x5xf32>)
  return
}

// -----

func.func @peepholes_not_lstm(%x: tensor<2x1x3xf32>, %w: tensor<1x15x3xf32>, %r: tensor<1x15x5xf32>, %p: tensor<1x15xf32>) {
  // expected-error @+2 {{initial_c and peepholes are lstm operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %yh = ridge.recurrent %x, %w, %r peepholes(%p) {cell = "gru", direction = "forward", hidden_size = 5 : i64,
      activations = ["sigmoid", "tanh"], activation_alpha = array<f32: 1.0, 1.0>, activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<2x1x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>) -> (tensor<2x1x1x5xf32>, tensor<1x1x5xf32>)
  return
}
