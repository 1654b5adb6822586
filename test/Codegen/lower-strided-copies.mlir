// RUN: ridge-opt %s -split-input-file -ridge-lower-strided-copies | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-lower-strided-copies=offset-copies | FileCheck %s --check-prefix=GPU
// RUN: ridge-opt %s -split-input-file -ridge-lower-strided-copies -convert-linalg-to-loops -expand-strided-metadata -finalize-memref-to-llvm | FileCheck %s --check-prefix=LLVM

// A state update written into a slice of a bigger buffer (LinearAttention's
// per-step state, the bufferized tensor.insert_slice): the copy into the
// strided subview becomes linalg.copy, which lowers to loops. As a
// memref.copy, finalize-memref-to-llvm would call `memrefCopy`, which no
// compiled model links (the .so failed to load).
// CHECK-LABEL: func.func @into_strided_slice
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x4x8xf32>) outs(%[[VIEW]] : memref<2x4x8xf32, strided<[128, 32, 1], offset: ?>>)
// CHECK-NOT: memref.copy
// LLVM-LABEL: func.func @into_strided_slice
// LLVM-NOT: memrefCopy
// LLVM: return
func.func @into_strided_slice(%state: memref<2x4x8xf32>, %all: memref<2x4x4x8xf32>, %step: index) {
  %view = memref.subview %all[0, 0, %step, 0] [2, 4, 1, 8] [1, 1, 1, 1] : memref<2x4x4x8xf32> to memref<2x4x8xf32, strided<[128, 32, 1], offset: ?>>
  memref.copy %state, %view : memref<2x4x8xf32> to memref<2x4x8xf32, strided<[128, 32, 1], offset: ?>>
  return
}

// -----

// Out of a strided slice too.
// CHECK-LABEL: func.func @from_strided_slice
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @from_strided_slice(%all: memref<4x8xf32>, %row: memref<4xf32>) {
  %view = memref.subview %all[0, 1] [4, 1] [1, 1] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: 1>>
  memref.copy %view, %row : memref<4xf32, strided<[8], offset: 1>> to memref<4xf32>
  return
}

// -----

// Contiguous copies (identity layouts, or a static slice of whole rows) stay
// memref.copy: finalize-memref-to-llvm makes them one memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT: linalg.copy
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x4x8xf32> to memref<2x4x8xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
// On the GPU (offset-copies) the copy at offset 16 is a linalg.copy too:
// the host's copies become gpu.memcpy, whose gpu-to-llvm lowering drops the
// offset (an LSTM's cell state overwrote its hidden state, found on the PTX
// emulator).
// GPU-LABEL: func.func @contiguous
// GPU: memref.copy %{{.*}}, %{{.*}} : memref<2x4x8xf32> to memref<2x4x8xf32>
// GPU-NEXT: memref.subview
// GPU-NEXT: linalg.copy ins(%{{.*}} : memref<2x8xf32>) outs(%{{.*}} : memref<2x8xf32, strided<[8, 1], offset: 16>>)
// LLVM-LABEL: func.func @contiguous
// LLVM-NOT: memrefCopy
// LLVM: "llvm.intr.memcpy"
// LLVM: "llvm.intr.memcpy"
func.func @contiguous(%a: memref<2x4x8xf32>, %b: memref<2x4x8xf32>, %rows: memref<2x8xf32>, %all: memref<4x8xf32>) {
  memref.copy %a, %b : memref<2x4x8xf32> to memref<2x4x8xf32>
  %view = memref.subview %all[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  memref.copy %rows, %view : memref<2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  return
}
