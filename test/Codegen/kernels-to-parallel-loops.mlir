// RUN: ridge-opt %s -split-input-file -ridge-kernels-to-parallel-loops | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-kernels-to-parallel-loops=linalg=false | FileCheck %s --check-prefix=NO-LINALG

// A tiled kernel's scf.forall becomes an scf.parallel that keeps the
// kernel's config; the op inside is converted too, without one.
// CHECK-LABEL: func @tiled
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK:   scf.parallel
// CHECK:     arith.mulf
// CHECK-NOT:   ridge.kernel_config
// CHECK:     scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {ridge.kernel_config = {block_size = 128 : i64, vector_width = 4 : i64, warps_per_block = 2 : i64}}
// NO-LINALG-LABEL: func @tiled
// NO-LINALG: scf.parallel
// NO-LINALG:   linalg.generic
// NO-LINALG: } {ridge.kernel_config
func.func @tiled(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  scf.forall (%i) in (4) {
    %xs = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%xs : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%ys : memref<1x8xf32, strided<[8, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.mulf %a, %a : f32
      linalg.yield %s : f32
    }
  } {ridge.kernel_config = {block_size = 128 : i64, vector_width = 4 : i64, warps_per_block = 2 : i64}}
  return
}

// -----

// A one-op kernel: the op's config moves onto its outermost loop; the
// reduction loop stays sequential inside it.
// CHECK-LABEL: func @one_op
// CHECK: scf.parallel (%{{.*}}) =
// CHECK:   scf.for
// CHECK: } {ridge.kernel_config = {block_size = 64 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}}
// NO-LINALG-LABEL: func @one_op
// NO-LINALG: linalg.generic
// NO-LINALG-SAME: ridge.kernel_config
func.func @one_op(%x: memref<16x32xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x32xf32>) outs(%y : memref<16xf32>) attrs = {ridge.kernel_config = {block_size = 64 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
