// RUN: ridge-opt %s -split-input-file -ridge-mark-model-inputs-read-only | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-mark-model-inputs-read-only -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFERS

// The model function's tensor arguments are the caller's buffers: marked
// read-only, an in-place update of one (a recurrent state) works on a copy;
// the kernel function (private) and non-tensor arguments are left alone.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%arg0: tensor<4xf32> {bufferization.writable = false}, %arg1: tensor<4xf32> {bufferization.writable = false}, %arg2: index)
// CHECK-LABEL: func.func private @k0_update
// CHECK-NOT: bufferization.writable
// BUFFERS-LABEL: func.func @main
// BUFFERS: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUFFERS: memref.copy %arg0, %[[COPY]]
// BUFFERS: call @k0_update(%[[COPY]], %arg1)
func.func @main(%state: tensor<4xf32>, %x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %0 = call @k0_update(%state, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @k0_update(%state: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.add ins(%state, %x : tensor<4xf32>, tensor<4xf32>) outs(%state : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An argument already marked keeps its mark.
// CHECK-LABEL: func.func @writable
// CHECK-SAME: {bufferization.writable = true}
func.func @writable(%state: tensor<4xf32> {bufferization.writable = true}) -> tensor<4xf32> {
  return %state : tensor<4xf32>
}
