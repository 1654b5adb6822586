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
// own that accumulates into its result (read and written there: no vector
// access, and the elements' buffer is no alloca of the body).
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

// -----

// A channels-last depthwise convolution (SIMT: one output a thread, its sum
// in an alloca, the 3x3 window as two nested loops): unrolled and jammed.
// The nested loops run once; in them the window's input element and the
// weight tap of 4 consecutive channels are one 16-byte load each (their
// other indices depend on the window position, not on the channel; the
// weight is a view of a 1-D constant, so its folded index linearizes the
// channel last, by 16); each channel keeps its own alloca, and its sum
// runs in the same order. The bias is one 16-byte load, the bf16 result
// one 8-byte store.
// CHECK-LABEL: func.func private @depthwise_channels_last
// CHECK: scf.parallel (%[[N:.*]], %[[H:.*]], %[[W:.*]], %[[C:.*]]) = {{.*}} step (%c1, %c1, %c1, %c4)
// CHECK-COUNT-4: memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK: scf.for %[[KH:.*]] = %c0 to %c3
// CHECK-NEXT: scf.for %[[KW:.*]] = %c0 to %c3
// CHECK: %[[TAP:.*]] = affine.linearize_index disjoint [%c0, %[[KH]], %[[KW]], %[[C]]] by (1, 3, 3, 16)
// CHECK: %[[WT:.*]] = vector.load %arg1[%[[TAP]]] {alignment = 16 : i64} : memref<144xf32>, vector<4xf32>
// CHECK: %[[X:.*]] = vector.load %arg0[%[[N]], %{{.*}}, %{{.*}}, %[[C]]] {alignment = 16 : i64} : memref<2x8x8x16xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.select
// CHECK-COUNT-4: arith.mulf
// CHECK-NOT: memref.load %arg0
// CHECK: }
// CHECK: vector.load %arg2[%[[C]]] {alignment = 16 : i64} : memref<16xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg3[%[[N]], %[[H]], %[[W]], %[[C]]] {alignment = 8 : i64} : memref<2x8x8x16xbf16>, vector<4xbf16>
func.func private @depthwise_channels_last(%x: memref<2x8x8x16xf32>, %w1d: memref<144xf32>, %b: memref<16xf32>, %out: memref<2x8x8x16xbf16>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 1, 1>, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %w = memref.expand_shape %w1d [[0, 1, 2, 3]] output_shape [1, 3, 3, 16] : memref<144xf32> into memref<1x3x3x16xf32>
  scf.parallel (%n, %h, %v, %c) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c8, %c16) step (%c1, %c1, %c1, %c1) {
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %kh = %c0 to %c3 step %c1 {
      scf.for %kw = %c0 to %c3 step %c1 {
        %tap = memref.load %w[%c0, %kh, %kw, %c] : memref<1x3x3x16xf32>
        %sum = memref.load %acc[%c0] : memref<1xf32>
        %ih0 = arith.addi %h, %kh : index
        %ih = arith.subi %ih0, %c1 : index
        %iw0 = arith.addi %v, %kw : index
        %iw = arith.subi %iw0, %c1 : index
        %hlo = arith.cmpi sge, %ih, %c0 : index
        %hhi = arith.cmpi slt, %ih, %c8 : index
        %wlo = arith.cmpi sge, %iw, %c0 : index
        %whi = arith.cmpi slt, %iw, %c8 : index
        %hin = arith.andi %hlo, %hhi : i1
        %win = arith.andi %wlo, %whi : i1
        %in = arith.andi %hin, %win : i1
        %hc = arith.minsi %ih, %c7 : index
        %hcl = arith.maxsi %hc, %c0 : index
        %wc = arith.minsi %iw, %c7 : index
        %wcl = arith.maxsi %wc, %c0 : index
        %xe = memref.load %x[%n, %hcl, %wcl, %c] : memref<2x8x8x16xf32>
        %xs = arith.select %in, %xe, %zero : f32
        %p = arith.mulf %xs, %tap : f32
        %s = arith.addf %sum, %p : f32
        memref.store %s, %acc[%c0] : memref<1xf32>
      }
    }
    %total = memref.load %acc[%c0] : memref<1xf32>
    %bias = memref.load %b[%c] : memref<16xf32>
    %y = arith.addf %total, %bias : f32
    %yh = arith.truncf %y : f32 to bf16
    memref.store %yh, %out[%n, %h, %v, %c] : memref<2x8x8x16xbf16>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 1, 1>, vector_width = 4 : i64, warps_per_block = 8 : i64}}
  return
}

// -----

// A SIMT matmul (one output a thread, the k loop nested): the row of A is
// shared by the 4 columns (one scalar load an iteration), the row of B is
// one 16-byte load.
// CHECK-LABEL: func.func private @simt_matmul
// CHECK: step (%c1, %c4)
// CHECK: scf.for %[[K:.*]] = %c0 to %c32
// CHECK: %[[A:.*]] = memref.load %arg0[%{{.*}}, %[[K]]] : memref<8x32xf32>
// CHECK-NOT: memref.load %arg0
// CHECK: vector.load %arg1[%[[K]], %{{.*}}] {alignment = 16 : i64} : memref<32x64xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.mulf %[[A]]
// CHECK: vector.store {{.*}} : memref<8x64xf32>, vector<4xf32>
func.func private @simt_matmul(%a: memref<8x32xf32>, %bm: memref<32x64xf32>, %out: memref<8x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %k = %c0 to %c32 step %c1 {
      %av = memref.load %a[%i, %k] : memref<8x32xf32>
      %bv = memref.load %bm[%k, %j] : memref<32x64xf32>
      %sum = memref.load %acc[%c0] : memref<1xf32>
      %p = arith.mulf %av, %bv : f32
      %s = arith.addf %sum, %p : f32
      memref.store %s, %acc[%c0] : memref<1xf32>
    }
    %total = memref.load %acc[%c0] : memref<1xf32>
    memref.store %total, %out[%i, %j] : memref<8x64xf32>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}}
  return
}

// -----

// Left as it is: a loop with a nested loop whose config asks for one
// element a thread (a 16-channel global pool: ridge-select-kernel-config
// keeps fewer than 4 x 32 one-element tiles at vector_width 1).
// CHECK-LABEL: func.func private @small_pool
// CHECK: step (%c1, %c1)
// CHECK-NOT: vector.load
func.func private @small_pool(%x: memref<2x64x16xf32>, %out: memref<2x16xf32>) attributes {ridge.kernel = "movement", ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%n, %c) = (%c0, %c0) to (%c2, %c16) step (%c1, %c1) {
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %p = %c0 to %c64 step %c1 {
      %v = memref.load %x[%n, %p, %c] : memref<2x64x16xf32>
      %s = memref.load %acc[%c0] : memref<1xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %acc[%c0] : memref<1xf32>
    }
    %total = memref.load %acc[%c0] : memref<1xf32>
    memref.store %total, %out[%n, %c] : memref<2x16xf32>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}}
  return
}

// -----

// Padding an RGB image's channels to 8 (a channels-last stem's input,
// stored in bf16): the bounds check around the load of the padded input
// is a read-only conditional, repeated per element like the body's other
// ops; the 4 bf16 results go out as one 8-byte store. The conditional's
// load stays a scalar load in it (it may be out of bounds).
// CHECK-LABEL: func @padded_channels
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %{{.*}}, %[[FOUR:.*]])
// CHECK-COUNT-4: scf.if %{{.*}} -> (f32) {
// CHECK-NOT: vector.load
// CHECK: %[[V:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xbf16>
// CHECK-NEXT: vector.store %[[V]], %arg1[{{.*}}] {alignment = 8 : i64} : memref<1x224x224x8xbf16>, vector<4xbf16>
func.func @padded_channels(%arg0: memref<1x3x224x224xf32>, %arg1: memref<1x224x224x8xbf16>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c224 = arith.constant 224 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%h, %w, %c) = (%c0, %c0, %c0) to (%c224, %c224, %c8) step (%c1, %c1, %c1) {
    %inside = arith.cmpi ult, %c, %c3 : index
    %x = scf.if %inside -> (f32) {
      %l = memref.load %arg0[%c0, %c, %h, %w] : memref<1x3x224x224xf32>
      scf.yield %l : f32
    } else {
      scf.yield %cst : f32
    }
    %b = arith.truncf %x : f32 to bf16
    memref.store %b, %arg1[%c0, %h, %w, %c] : memref<1x224x224x8xbf16>
    scf.reduce
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}}
  return
}
