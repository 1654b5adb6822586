// RUN: ridge-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(ridge-map-parallel-loops-to-gpu{block-size=128}))' | FileCheck %s

// A 2-D nest becomes one linear index tiled by the block size, mapped to
// block-x / thread-x, innermost dimension fastest.
// CHECK-LABEL: func @nest
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   scf.parallel (%[[T:.*]]) =
// CHECK:     %[[I:.*]] = arith.addi %[[T]], %[[B]]
// CHECK:     arith.remsi %[[I]]
// CHECK:     arith.divsi %[[I]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @nest(%m: memref<4x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
    memref.store %cst, %m[%i, %j] : memref<4x300xf32>
  }
  return
}

// -----

// A sequential loop nest that touches memory runs as one GPU thread.
// CHECK-LABEL: func @full_reduction
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.for
// CHECK:   thread_x
// CHECK: block_x
func.func @full_reduction(%in: memref<64xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %in[%i] : memref<64xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// A loop nested in a thread's iteration (a tiled kernel's row) runs in that
// thread as scf.for: convert-parallel-loops-to-gpu would refuse a nested
// scf.parallel after the store.
// CHECK-LABEL: func @nested_row
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     memref.store
// CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:       memref.store
// CHECK-NOT: scf.parallel
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @nested_row(%m: memref<8x64xf32>, %acc: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %cst, %acc[%i] : memref<8xf32>
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      memref.store %cst, %m[%i, %j] : memref<8x64xf32>
    }
  }
  return
}

// -----

// The kernel's config decides the block size (64), not the option (128).
// CHECK-LABEL: func @configured_block_size
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C64]]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[STEP]]) {
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @configured_block_size(%m: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    memref.store %cst, %m[%i] : memref<1024xf32>
  } {ridge.kernel_config = {block_size = 64 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}}
  return
}
