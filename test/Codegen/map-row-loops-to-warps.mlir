// RUN: ridge-opt %s -split-input-file -ridge-map-row-loops-to-warps=sm-count=2 -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-map-row-loops-to-warps -verify-diagnostics | FileCheck %s --check-prefix=GRID

// With 132 SMs (the default), 20 rows run as 20 blocks of one warp each, so
// that the grid spreads over the machine rather than packing 3 blocks.
// GRID-LABEL: func @row_max
// GRID: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c20) step
// GRID:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c32) step
// RUN: not ridge-opt %s -split-input-file -ridge-map-row-loops-to-warps=warps-per-block=64 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: warps-per-block must be in [1, 32], got 64

// A row kernel (a max reduction, then the row written): 20 rows on 2 SMs,
// 8 warps per block -> 3 blocks of 256 threads; warp w of block b takes row 8b + w, lane
// l takes elements l, l + 32, ... (each row loop counts its 2 steps from 0:
// element l + 32 i); the max ends in a 5-step xor butterfly and joins the
// value the accumulator held before the loop.
// CHECK-LABEL: func @row_max
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%c3) step
// CHECK:   scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c256) step
// CHECK:     %[[WARP:.*]] = arith.divui %[[T]], %c32
// CHECK:     %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK:     %[[ROW0:.*]] = arith.muli %[[B]], %c8
// CHECK:     %[[ROW:.*]] = arith.addi %[[ROW0]], %[[WARP]]
// CHECK:     %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c20
// CHECK:     scf.if %[[IN]] {
// CHECK:       %[[INIT:.*]] = memref.load %[[ACC:.*]][
// CHECK:       memref.store %{{.*}}, %[[ACC]][
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %c2 step %{{.*}} {
// CHECK:         %[[S:.*]] = arith.muli %[[I]], %{{c32.*}}
// CHECK:         arith.addi %{{.*}}, %[[S]]
// CHECK:         arith.maximumf
// CHECK:       }
// CHECK:       %[[P:.*]] = memref.load %[[ACC]][
// CHECK:       %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[P]], %c1_i32, %c32_i32
// CHECK:       arith.maximumf %[[P]], %[[S1]]
// CHECK:       gpu.shuffle xor {{.*}}, %c2_i32
// CHECK:       gpu.shuffle xor {{.*}}, %c4_i32
// CHECK:       gpu.shuffle xor {{.*}}, %c8_i32
// CHECK:       gpu.shuffle xor {{.*}}, %c16_i32
// CHECK:       %[[TOTAL:.*]] = arith.maximumf
// CHECK:       %[[JOINED:.*]] = arith.maximumf %[[INIT]], %[[TOTAL]]
// CHECK:       memref.store %[[JOINED]], %[[ACC]][
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{c2.*}} step %{{.*}} {
// CHECK:         memref.store
// CHECK-NOT:   scf.parallel
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @row_max(%x: memref<20x64xf32>, %y: memref<20x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%i) = (%c0) to (%c20) step (%c1) {
    %acc = memref.alloca() : memref<1xf32>
    memref.store %ninf, %acc[%c0] : memref<1xf32>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %a = memref.load %acc[%c0] : memref<1xf32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %acc[%c0] : memref<1xf32>
    }
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %m = memref.load %acc[%c0] : memref<1xf32>
      %d = arith.subf %v, %m : f32
      memref.store %d, %y[%i, %j] : memref<20x64xf32>
    }
  }
  return
}

// -----

// Not a row kernel: the inner scf.for writes device memory, which lanes
// cannot share. Left for ridge-map-parallel-loops-to-gpu.
// CHECK-LABEL: func @scan
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c20) step (%c1) {
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: mapping
func.func @scan(%x: memref<20x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c20) step (%c1) {
    scf.for %j = %c1 to %c64 step %c1 {
      %jm = arith.subi %j, %c1 : index
      %p = memref.load %x[%i, %jm] : memref<20x64xf32>
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %s = arith.addf %p, %v : f32
      memref.store %s, %x[%i, %j] : memref<20x64xf32>
    }
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      memref.store %v, %x[%i, %j] : memref<20x64xf32>
    }
  }
  return
}

// -----

// Not a row kernel either: a plain elementwise loop nest (no row loop).
// CHECK-LABEL: func @elementwise
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: mapping
func.func @elementwise(%x: memref<20x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c20, %c64) step (%c1, %c1) {
    memref.store %one, %x[%i, %j] : memref<20x64xf32>
  }
  return
}

// -----

// Not safe to split: the row buffer is read back reversed, so a lane would
// read elements another lane wrote.
// CHECK-LABEL: func @reversed_row_buffer
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: mapping
func.func @reversed_row_buffer(%x: memref<20x64xf32>, %y: memref<20x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c20) step (%c1) {
    %row = memref.alloca() : memref<64xf32>
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      memref.store %v, %row[%j] : memref<64xf32>
    }
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %r = arith.subi %c63, %j : index
      %v = memref.load %row[%r] : memref<64xf32>
      memref.store %v, %y[%i, %j] : memref<20x64xf32>
    }
  }
  return
}

// -----

// Rows of 256 floats (a multiple of 32 lanes x 4): each lane takes 4
// consecutive elements per step through 16-byte-aligned vector accesses;
// the accumulator chain stays scalar.
// CHECK-LABEL: func @row_sum_vectorized
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c4
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{c2.*}} step %{{.*}} {
// CHECK:   %[[S:.*]] = arith.muli %[[I]], %{{c128.*}}
// CHECK:   %[[J:.*]] = arith.addi %[[START]], %[[S]]
// CHECK:   %[[V:.*]] = vector.load %{{.*}}[%c0, %[[J]]] {alignment = 16 : i64} : memref<1x256xf32, strided<[256, 1], offset: ?>>, vector<4xf32>
// CHECK:   vector.extract %[[V]][0]
// CHECK:   arith.addf
// CHECK:   vector.extract %[[V]][3]
// CHECK:   arith.addf
// CHECK: gpu.shuffle xor
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{c2.*}} step %{{.*}} {
// CHECK:   %[[W:.*]] = vector.from_elements
// CHECK:   vector.store %[[W]], %{{.*}}[%c0, %{{.*}}] {alignment = 16 : i64}
func.func @row_sum_vectorized(%x: memref<16x256xf32>, %y: memref<16x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %xs = memref.subview %x[%i, 0] [1, 256] [1, 1] : memref<16x256xf32> to memref<1x256xf32, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 256] [1, 1] : memref<16x256xf32> to memref<1x256xf32, strided<[256, 1], offset: ?>>
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %xs[%c0, %j] : memref<1x256xf32, strided<[256, 1], offset: ?>>
      %a = memref.load %acc[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%c0] : memref<1xf32>
    }
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %xs[%c0, %j] : memref<1x256xf32, strided<[256, 1], offset: ?>>
      %m = memref.load %acc[%c0] : memref<1xf32>
      %d = arith.subf %v, %m : f32
      memref.store %d, %ys[%c0, %j] : memref<1x256xf32, strided<[256, 1], offset: ?>>
    }
  }
  return
}

// -----

// An embedding row gathered by a token id (gpt2's and bert's first
// kernel): the row's index is computed in the body, from the id the row
// reads, the same for a lane's 4 consecutive elements. It is computed once
// a step, before a 16-byte load of the table row (a warp's 512 contiguous
// bytes), instead of 4 loads 16 bytes apart.
// CHECK-LABEL: func @row_sum_gathered
// CHECK: scf.for
// CHECK:   %[[ID:.*]] = memref.load %arg0[%{{.*}}] : memref<16xi64>
// CHECK:   %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK:   %[[R:.*]] = arith.minsi %[[ROW]], %c1023
// CHECK:   vector.load %arg1[%[[R]], %{{.*}}] {alignment = 16 : i64} : memref<1024x256xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg1
// CHECK: gpu.shuffle xor
// CHECK: scf.for
// CHECK:   vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1024x256xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg1
// CHECK:   vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] {alignment = 16 : i64}
func.func @row_sum_gathered(%ids: memref<16xi64>, %table: memref<1024x256xf32>, %y: memref<16x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c1023 = arith.constant 1023 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %j = %c0 to %c256 step %c1 {
      %id = memref.load %ids[%i] : memref<16xi64>
      %row = arith.index_cast %id : i64 to index
      %r = arith.minsi %row, %c1023 : index
      %v = memref.load %table[%r, %j] : memref<1024x256xf32>
      %a = memref.load %acc[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%c0] : memref<1xf32>
    }
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %id = memref.load %ids[%i] : memref<16xi64>
      %row = arith.index_cast %id : i64 to index
      %r = arith.minsi %row, %c1023 : index
      %v = memref.load %table[%r, %j] : memref<1024x256xf32>
      %m = memref.load %acc[%c0] : memref<1xf32>
      %d = arith.subf %v, %m : f32
      memref.store %d, %y[%i, %j] : memref<16x256xf32>
    }
  }
  return
}

// -----

// A view starting 2 floats into the row is not 16-byte aligned: its loads
// stay scalar (lane-strided), the aligned output is still stored as vectors.
// CHECK-LABEL: func @unaligned_view
// CHECK: scf.for
// CHECK-NOT: vector.load
// CHECK: memref.load %{{.*}} : memref<1x256xf32, strided<[264, 1], offset: ?>>
// CHECK: vector.store
func.func @unaligned_view(%x: memref<16x264xf32>, %y: memref<16x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %xs = memref.subview %x[%i, 2] [1, 256] [1, 1] : memref<16x264xf32> to memref<1x256xf32, strided<[264, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 256] [1, 1] : memref<16x256xf32> to memref<1x256xf32, strided<[256, 1], offset: ?>>
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %xs[%c0, %j] : memref<1x256xf32, strided<[264, 1], offset: ?>>
      memref.store %v, %ys[%c0, %j] : memref<1x256xf32, strided<[256, 1], offset: ?>>
    }
  }
  return
}

// -----

// A lane-private row buffer is split across lanes by the layout of the loops
// that touch it, so they share one layout. The copy into the buffer and the
// read-back are 16-byte accesses; the square-in-place loop reads and writes
// the buffer (no vector access of its own) and still gets the 4-wide layout,
// or its lanes would read elements another lane wrote. Each lane holds
// only its 4 of the 128 elements: the buffer shrinks to 4 (element j at
// (j / 128) * 4 + j % 4), and each loop counts its one step from 0.
// CHECK-LABEL: func @private_row_one_layout
// CHECK: %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c4
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{c1(_[0-9]+)?}} step %{{.*}} {
// CHECK:   %[[A:.*]] = arith.addi %[[START]], %{{.*}}
// CHECK:   vector.load %{{.*}}[%{{.*}}, %[[A]]] {alignment = 16 : i64} : memref<4x128xf32>, vector<4xf32>
// CHECK:   %[[STEP:.*]] = arith.divui %[[A]], %{{c128.*}}
// CHECK:   %[[QUAD:.*]] = arith.muli %[[STEP]], %{{c4.*}}
// CHECK:   %[[K:.*]] = arith.remui %[[A]], %{{c4.*}}
// CHECK:   %[[L:.*]] = arith.addi %[[QUAD]], %[[K]]
// CHECK:   vector.store %{{.*}}, %[[ROW]][%[[L]]] {alignment = 16 : i64} : memref<4xf32>, vector<4xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{c1(_[0-9]+)?}} step %{{.*}} {
// CHECK-COUNT-4: memref.load %[[ROW]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{c1(_[0-9]+)?}} step %{{.*}} {
// CHECK:   vector.load %[[ROW]][%{{.*}}] {alignment = 16 : i64}
// CHECK-NOT: scf.for
func.func @private_row_one_layout(%x: memref<4x128xf32>, %y: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %row = memref.alloca() {alignment = 64 : i64} : memref<128xf32>
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<4x128xf32>
      memref.store %v, %row[%j] : memref<128xf32>
    }
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      %v = memref.load %row[%j] : memref<128xf32>
      %s = arith.mulf %v, %v : f32
      memref.store %s, %row[%j] : memref<128xf32>
    }
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      %v = memref.load %row[%j] : memref<128xf32>
      memref.store %v, %y[%i, %j] : memref<4x128xf32>
    }
  }
  return
}

// -----

// The kernel's config decides: 2 warps per block (64 threads, 8 blocks for
// 16 rows) whatever sm-count says, and vector_width 1 keeps rows of 256
// floats lane-strided (no 16-byte accesses).
// CHECK-LABEL: func @configured_row_kernel
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// CHECK:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64{{.*}}) step
// CHECK-NOT: vector.load
// CHECK-NOT: vector.store
// GRID-LABEL: func @configured_row_kernel
// GRID-NOT: vector.load
func.func @configured_row_kernel(%x: memref<16x256xf32>, %y: memref<16x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %acc = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x256xf32>
      %a = memref.load %acc[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%c0] : memref<1xf32>
    }
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<16x256xf32>
      %m = memref.load %acc[%c0] : memref<1xf32>
      %d = arith.subf %v, %m : f32
      memref.store %d, %y[%i, %j] : memref<16x256xf32>
    }
  } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 2 : i64}}
  return
}

// -----

// 64-bit reductions (an f64 softmax's max, an i64 sum): shfl.sync moves 32
// bits, so each butterfly step shuffles the value's two halves and joins
// them again.
// CHECK-LABEL: func @row_reduce_64bit
// CHECK:       %[[BITS:.*]] = arith.bitcast %[[P:.*]] : f64 to i64
// CHECK:       %[[LO:.*]] = arith.trunci %[[BITS]] : i64 to i32
// CHECK:       %[[HI64:.*]] = arith.shrui %[[BITS]], %[[C32:.*]] : i64
// CHECK:       %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK:       %[[SLO:.*]], %{{.*}} = gpu.shuffle xor %[[LO]], %c1_i32, %c32_i32 : i32
// CHECK:       %[[SHI:.*]], %{{.*}} = gpu.shuffle xor %[[HI]], %c1_i32, %c32_i32 : i32
// CHECK:       %[[ELO:.*]] = arith.extui %[[SLO]] : i32 to i64
// CHECK:       %[[EHI:.*]] = arith.extui %[[SHI]] : i32 to i64
// CHECK:       %[[UP:.*]] = arith.shli %[[EHI]], %[[C32]] : i64
// CHECK:       %[[JOINED:.*]] = arith.ori %[[ELO]], %[[UP]] : i64
// CHECK:       %[[S1:.*]] = arith.bitcast %[[JOINED]] : i64 to f64
// CHECK:       arith.maximumf %[[P]], %[[S1]] : f64
// CHECK-COUNT-8: gpu.shuffle xor {{.*}} : i32
// CHECK:       %[[QLO:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK:       gpu.shuffle xor %[[QLO]], %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK-NOT:   gpu.shuffle {{.*}} : {{i64|f64}}
// CHECK-NOT:   gpu.subgroup_reduce
func.func @row_reduce_64bit(%x: memref<20x64xf64>, %k: memref<20x64xi64>,
                            %y: memref<20x64xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0 : i64
  scf.parallel (%i) = (%c0) to (%c20) step (%c1) {
    %acc = memref.alloca() : memref<1xf64>
    memref.store %ninf, %acc[%c0] : memref<1xf64>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<20x64xf64>
      %a = memref.load %acc[%c0] : memref<1xf64>
      %m = arith.maximumf %a, %v : f64
      memref.store %m, %acc[%c0] : memref<1xf64>
    }
    %count = memref.alloca() : memref<1xi64>
    memref.store %zero, %count[%c0] : memref<1xi64>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %k[%i, %j] : memref<20x64xi64>
      %a = memref.load %count[%c0] : memref<1xi64>
      %s = arith.addi %a, %v : i64
      memref.store %s, %count[%c0] : memref<1xi64>
    }
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<20x64xf64>
      %m = memref.load %acc[%c0] : memref<1xf64>
      %n = memref.load %count[%c0] : memref<1xi64>
      %f = arith.sitofp %n : i64 to f64
      %d = arith.subf %v, %m : f64
      %e = arith.mulf %d, %f : f64
      memref.store %e, %y[%i, %j] : memref<20x64xf64>
    }
  }
  return
}

// -----

// A row shared by the 4 warps of a block (row_warps 4: 2 rows of 4096, too
// few for the SMs): block b takes row b; its 128 threads stride the row by
// 4 elements each per step of 512 (16-byte loads; the loops count their 8
// steps from 0); each warp's butterfly
// total goes to its slot of a 4-element workgroup buffer (lane 0 writes),
// a barrier, and every thread adds the 4 slots in warp order.
// CHECK-LABEL: func @row_sum_shared_by_warps
// GRID-LABEL: func @row_sum_shared_by_warps
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%c2) step
// CHECK:   scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c128) step
// CHECK:     %[[SLOTS:.*]] = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK:     %[[WARP:.*]] = arith.divui %[[T]], %c32
// CHECK:     %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK:     arith.cmpi ult, %[[B]], %c2
// CHECK:       %[[START:.*]] = arith.muli %[[T]], %c4
// CHECK:       scf.for %{{.*}} = %{{.*}} to %c8 step %{{.*}} {
// CHECK:         vector.load %arg0
// CHECK:       gpu.shuffle xor {{.*}}, %c16_i32
// CHECK:       %[[WT:.*]] = arith.addf
// CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %{{c0.*}}
// CHECK:       scf.if %[[FIRST]] {
// CHECK:         memref.store %[[WT]], %[[SLOTS]][%[[WARP]]]
// CHECK:       gpu.barrier
// CHECK:       %[[S0:.*]] = memref.load %[[SLOTS]][%{{c[0-9_]*}}]
// CHECK:       %[[S1:.*]] = memref.load %[[SLOTS]][%{{c[0-9_]*}}]
// CHECK:       %[[A1:.*]] = arith.addf %[[S0]], %[[S1]]
// CHECK:       %[[S2:.*]] = memref.load %[[SLOTS]][%{{c[0-9_]*}}]
// CHECK:       %[[A2:.*]] = arith.addf %[[A1]], %[[S2]]
// CHECK:       %[[S3:.*]] = memref.load %[[SLOTS]][%{{c[0-9_]*}}]
// CHECK:       arith.addf %[[A2]], %[[S3]]
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{c8.*}} step %{{.*}} {
// CHECK:         vector.store
func.func @row_sum_shared_by_warps(%x: memref<2x4096xf32>, %y: memref<2x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %acc = memref.alloca() : memref<1xf32>
    memref.store %zero, %acc[%c0] : memref<1xf32>
    scf.for %j = %c0 to %c4096 step %c1 {
      %v = memref.load %x[%i, %j] : memref<2x4096xf32>
      %a = memref.load %acc[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%c0] : memref<1xf32>
    }
    %total = memref.load %acc[%c0] : memref<1xf32>
    scf.parallel (%j) = (%c0) to (%c4096) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<2x4096xf32>
      %d = arith.divf %v, %total : f32
      memref.store %d, %y[%i, %j] : memref<2x4096xf32>
      scf.reduce
    }
    scf.reduce
  } {ridge.kernel_config = {block_size = 128 : i64, row_warps = 4 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 4 : i64}}
  return
}

// -----

// A row loop reducing a value of each row (init 0, maximumf) into a 0-d
// buffer zeroed before it (ridge-fold-result-amax-into-row-loops: the amax
// of the result): the row's first lane folds max(value, 0) into the buffer
// with one atomic max of its bits, after the row's loops; the store after
// the loop goes.
// CHECK-LABEL: func @row_maximum
// CHECK:       memref.store %{{.*}}, %[[AMAX:.*]][] : memref<f32>
// CHECK:       scf.if
// CHECK:         scf.for
// CHECK:           memref.store
// CHECK:         scf.for
// CHECK:           math.absf
// CHECK:         gpu.shuffle xor
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK:         scf.if %[[FIRST]] {
// CHECK:           %[[CLAMPED:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:           memref.extract_aligned_pointer_as_index %[[AMAX]]
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[CLAMPED]] : f32 to i32
// CHECK:           llvm.atomicrmw umax %{{.*}}, %[[BITS]] monotonic : !llvm.ptr<1>, i32
// CHECK-NOT:   memref.store {{.*}}, %[[AMAX]]
// CHECK:       return
func.func @row_maximum(%x: memref<20x64xf32>, %y: memref<20x64xf32>, %amax: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %amax[] : memref<f32>
  %r = scf.parallel (%i) = (%c0) to (%c20) step (%c1) init (%zero) -> f32 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %n = arith.negf %v : f32
      memref.store %n, %y[%i, %j] : memref<20x64xf32>
      scf.reduce
    }
    %acc = memref.alloca() : memref<f32>
    memref.store %zero, %acc[] : memref<f32>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %n = arith.negf %v : f32
      %m = math.absf %n : f32
      %a = memref.load %acc[] : memref<f32>
      %b = arith.maximumf %a, %m : f32
      memref.store %b, %acc[] : memref<f32>
    }
    %rowmax = memref.load %acc[] : memref<f32>
    scf.reduce(%rowmax : f32) {
    ^bb0(%lhs: f32, %rhs: f32):
      %c = arith.maximumf %lhs, %rhs : f32
      scf.reduce.return %c : f32
    }
  }
  memref.store %r, %amax[] : memref<f32>
  return
}

// -----

// A reduction over the rows into a buffer nobody zeroed is not an amax the
// pass can fold with atomics: the loop is left alone.
// CHECK-LABEL: func @row_maximum_not_zeroed
// CHECK:   scf.parallel {{.*}} init
// CHECK-NOT: llvm.atomicrmw
func.func @row_maximum_not_zeroed(%x: memref<20x64xf32>, %amax: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c20) step (%c1) init (%zero) -> f32 {
    %acc = memref.alloca() : memref<f32>
    memref.store %zero, %acc[] : memref<f32>
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<20x64xf32>
      %a = memref.load %acc[] : memref<f32>
      %b = arith.maximumf %a, %v : f32
      memref.store %b, %acc[] : memref<f32>
    }
    %rowmax = memref.load %acc[] : memref<f32>
    scf.reduce(%rowmax : f32) {
    ^bb0(%lhs: f32, %rhs: f32):
      %c = arith.maximumf %lhs, %rhs : f32
      scf.reduce.return %c : f32
    }
  }
  memref.store %r, %amax[] : memref<f32>
  return
}
