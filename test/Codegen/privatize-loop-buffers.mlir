// RUN: ridge-opt %s -split-input-file -ridge-privatize-loop-buffers -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-privatize-loop-buffers=sequential=true -verify-diagnostics | FileCheck %s --check-prefix=SEQ

// A buffer allocated inside a parallel loop is private to the iteration: an
// alloca in place (GPU threads), or one alloca at the function entry reused
// by every iteration when the loop runs sequentially (CPU). Buffers outside
// loops stay heap allocations.

// CHECK-LABEL: func @row_buffer
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x128xf32>
// CHECK: scf.forall
// CHECK-NEXT: %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x128xf32>
// CHECK-NOT: memref.dealloc %[[ROW]]
// CHECK: memref.dealloc %[[OUT]]

// SEQ-LABEL: func @row_buffer
// SEQ-NEXT: %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x128xf32>
// SEQ-NEXT: %{{.*}} = memref.alloc() : memref<8x128xf32>
// SEQ: scf.forall
// SEQ-NOT: memref.alloca
// SEQ: linalg.fill {{.*}} outs(%[[ROW]]
func.func @row_buffer(%x: memref<8x128xf32>) {
  %out = memref.alloc() : memref<8x128xf32>
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<1x128xf32>
    linalg.fill ins(%zero : f32) outs(%row : memref<1x128xf32>)
    %dst = memref.subview %out[%i, 0] [1, 128] [1, 1] : memref<8x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    memref.copy %row, %dst : memref<1x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    memref.dealloc %row : memref<1x128xf32>
  }
  memref.dealloc %out : memref<8x128xf32>
  return
}

// -----

// A dynamically sized buffer cannot be privatized.
func.func @dynamic(%n: index) {
  scf.parallel (%i) = (%n) to (%n) step (%n) {
    // expected-error @+1 {{a dynamically sized buffer inside a parallel loop cannot be made private to an iteration}}
    %buf = memref.alloc(%n) : memref<?xf32>
    scf.reduce
  }
  return
}
