// RUN: ridge-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ridge-vectorize-pointwise-loops))' | FileCheck %s

// A pointwise kernel asking for 16-byte lane accesses (vector_width 4): the
// innermost dimension steps by 4; the one-element views of the tiled body
// fold into the accesses; the operands read along it become 16-byte loads,
// the bias broadcast along the rows one load an iteration, the f32 result
// one 16-byte store and its f16 cast (read back from the result in the
// fused body: forwarded) one 8-byte store. The arithmetic is repeated per
// element.
// CHECK-LABEL: func.func private @bias_relu_cast
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to (%c8, %c64) step (%c1, %c4)
// CHECK-NOT: memref.subview
// CHECK: %[[X:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %arg1[%[[J]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK: %[[S:.*]] = memref.load %arg2[%[[I]], %c0] : memref<8x1xf32>
// CHECK-NOT: memref.load
// CHECK-COUNT-4: arith.maximumf
// CHECK: %[[R:.*]] = vector.from_elements {{.*}} : vector<4xf32>
// CHECK: vector.store %[[R]], %arg3[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK: %[[H:.*]] = vector.from_elements {{.*}} : vector<4xf16>
// CHECK: vector.store %[[H]], %arg4[%[[I]], %[[J]]] {alignment = 8 : i64} : memref<8x64xf16>, vector<4xf16>
// CHECK: scf.reduce
func.func private @bias_relu_cast(%x: memref<8x64xf32>, %b: memref<64xf32>, %s: memref<8x1xf32>, %out: memref<8x64xf32>, %half: memref<8x64xf16>) attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1>, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
    %xv = memref.subview %x[%i, %j] [1, 1] [1, 1] : memref<8x64xf32> to memref<1x1xf32, strided<[64, 1], offset: ?>>
    %bv = memref.subview %b[%j] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
    %sv = memref.subview %s[%i, 0] [1, 1] [1, 1] : memref<8x1xf32> to memref<1x1xf32, strided<[1, 1], offset: ?>>
    %ov = memref.subview %out[%i, %j] [1, 1] [1, 1] : memref<8x64xf32> to memref<1x1xf32, strided<[64, 1], offset: ?>>
    %hv = memref.subview %half[%i, %j] [1, 1] [1, 1] : memref<8x64xf16> to memref<1x1xf16, strided<[64, 1], offset: ?>>
    %0 = memref.load %xv[%c0, %c0] : memref<1x1xf32, strided<[64, 1], offset: ?>>
    %1 = memref.load %bv[%c0] : memref<1xf32, strided<[1], offset: ?>>
    %2 = memref.load %sv[%c0, %c0] : memref<1x1xf32, strided<[1, 1], offset: ?>>
    %3 = arith.addf %0, %1 : f32
    %4 = arith.mulf %3, %2 : f32
    %5 = arith.maximumf %4, %zero : f32
    memref.store %5, %ov[%c0, %c0] : memref<1x1xf32, strided<[64, 1], offset: ?>>
    %6 = memref.load %ov[%c0, %c0] : memref<1x1xf32, strided<[64, 1], offset: ?>>
    %7 = arith.truncf %6 : f32 to f16
    memref.store %7, %hv[%c0, %c0] : memref<1x1xf16, strided<[64, 1], offset: ?>>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1>, vector_width = 4 : i64, warps_per_block = 1 : i64}}
  return
}

// -----

// A transpose reads its input along the outer dimension: that load stays
// one element at a time (repeated for the 4 elements), the store is one
// 16-byte access.
// CHECK-LABEL: func.func private @transpose
// CHECK: step (%c1, %c4)
// CHECK-COUNT-4: memref.load %arg0
// CHECK: vector.store {{.*}} : memref<32x16xf32>, vector<4xf32>
func.func private @transpose(%x: memref<16x32xf32>, %out: memref<32x16xf32>) attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c16) step (%c1, %c1) {
    %0 = memref.load %x[%j, %i] : memref<16x32xf32>
    memref.store %0, %out[%i, %j] : memref<32x16xf32>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}}
  return
}

// -----

// Left as they are: an innermost extent that is no multiple of 4, a config
// of one element a lane (f16 or 64-bit data), and a body with a loop of its
// own.
// CHECK-LABEL: func.func private @odd_extent
// CHECK: step (%c1, %c1)
// CHECK-NOT: vector.load
func.func private @odd_extent(%x: memref<8x6xf32>, %out: memref<8x6xf32>) attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c6) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<8x6xf32>
    %1 = arith.negf %0 : f32
    memref.store %1, %out[%i, %j] : memref<8x6xf32>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}}
  return
}

// CHECK-LABEL: func.func private @scalar_config
// CHECK: step (%c1, %c1)
// CHECK-NOT: vector.load
func.func private @scalar_config(%x: memref<8x64xf16>, %out: memref<8x64xf16>) attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
    %0 = memref.load %x[%i, %j] : memref<8x64xf16>
    %1 = arith.negf %0 : f16
    memref.store %1, %out[%i, %j] : memref<8x64xf16>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}}
  return
}

// CHECK-LABEL: func.func private @nested_loop
// CHECK: step (%c1)
// CHECK-NOT: vector.load
func.func private @nested_loop(%x: memref<64x16xf32>, %out: memref<64xf32>) attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %0 = memref.load %x[%i, %k] : memref<64x16xf32>
      %1 = memref.load %out[%i] : memref<64xf32>
      %2 = arith.addf %0, %1 : f32
      memref.store %2, %out[%i] : memref<64xf32>
    }
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}}
  return
}
