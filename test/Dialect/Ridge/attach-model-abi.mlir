// RUN: ridge-opt %s --split-input-file --ridge-attach-model-abi=target=sm_90a --verify-diagnostics | FileCheck %s

// ONNX names are kept verbatim (spaces included); tensors without one are
// named by position. dtypes are ModelAbi.h's values: f32 = 3, i1 = 5,
// u8 = 10, i64 = 9 (signedness still known at graph level).

// CHECK-LABEL: module attributes {ridge.model_abi = {
// CHECK-SAME: inputs = [{dtype = 3 : i32, name = "x in", shape = array<i64: 4, 64>}, {dtype = 10 : i32, name = "input1", shape = array<i64>}],
// CHECK-SAME: outputs = [{dtype = 5 : i32, name = "out put", shape = array<i64: 4, 0>}, {dtype = 9 : i32, name = "output1", shape = array<i64: 7>}],
// CHECK-SAME: target = "sm_90a"}}
module {
  func.func @main(%x: tensor<4x64xf32> {ridge.onnx_name = "x in"},
                  %m: tensor<ui8>)
      -> (tensor<4x0xi1> {ridge.onnx_name = "out put"}, tensor<7xi64>) {
    %a = arith.constant dense<true> : tensor<4x0xi1>
    %b = arith.constant dense<0> : tensor<7xi64>
    return %a, %b : tensor<4x0xi1>, tensor<7xi64>
  }
}

// -----

module {
  // expected-error @+1 {{input 0 must be a static tensor, got 'tensor<?x4xf32>'}}
  func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
    %a = arith.constant dense<0.0> : tensor<4xf32>
    return %a : tensor<4xf32>
  }
}

// -----

module {
  // expected-error @+1 {{output 0 has unsupported element type 'complex<f32>'}}
  func.func @main() -> tensor<4xcomplex<f32>> {
    %a = tensor.empty() : tensor<4xcomplex<f32>>
    return %a : tensor<4xcomplex<f32>>
  }
}

// -----

module {
  // expected-error @+1 {{output 0 has unsupported element type 'i4'}}
  func.func @main() -> tensor<4xi4> {
    %a = arith.constant dense<0> : tensor<4xi4>
    return %a : tensor<4xi4>
  }
}

// -----

// expected-error @+1 {{the module has no @main function}}
module {
}
