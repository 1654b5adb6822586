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

// -----

// A one-op kernel over a batch of 1 (a channel padding's [1, H, W, 8]): its
// loop is built without the dimension of one iteration, which the
// canonicalizer would otherwise fold by rebuilding the loop without its
// config (and without the config, no 16-byte accesses: resnet18's padded
// stem input 501,760 -> 166,208 warp instructions on the emulator).
// CHECK-LABEL: func @unit_dims
// CHECK: scf.parallel (%[[H:.*]], %[[C:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[C]], %[[H]]] : memref<1x3x6xf32>
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<1x6x8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {ridge.kernel_config = {block_size = 64 : i64, vector_width = 4 : i64, warps_per_block = 2 : i64}}
func.func @unit_dims(%x: memref<1x3x6xf32>, %y: memref<1x6x8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%y : memref<1x6x8xf32>) attrs = {ridge.kernel_config = {block_size = 64 : i64, vector_width = 4 : i64, warps_per_block = 2 : i64}} {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %c = linalg.index 2 : index
    %inside = arith.cmpi ult, %c, %c3 : index
    %v = scf.if %inside -> (f32) {
      %l = memref.load %x[%c0, %c, %h] : memref<1x3x6xf32>
      scf.yield %l : f32
    } else {
      scf.yield %zero : f32
    }
    linalg.yield %v : f32
  }
  return
}

// -----

// A one-row kernel (a decode step's LayerNorm), its loop of one iteration
// kept by a forall mapping (ridge-tile-kernel-bodies): the parallel loop
// keeps its one iteration without the mapping, which is the GPU mapping
// passes' to set. The ops inside lose their unit dimensions: the reduction's
// loop over its 1x1 row is gone, leaving the sequential loop over the row.
// CHECK-LABEL: func @one_row
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%{{.*}}) {
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: arith.subf
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}}
// CHECK-NOT: mapping
// NO-LINALG-LABEL: func @one_row
// NO-LINALG: scf.parallel
// NO-LINALG-NOT: mapping
// NO-LINALG: } {ridge.kernel_config
func.func @one_row(%x: memref<1x1x128xf32>, %y: memref<1x1x128xf32>, %sum: memref<1x1xf32>) {
  scf.forall (%i) in (1) {
    %xs = memref.subview %x[%i, 0, 0] [1, 1, 128] [1, 1, 1] : memref<1x1x128xf32> to memref<1x1x128xf32, strided<[128, 128, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0, 0] [1, 1, 128] [1, 1, 1] : memref<1x1x128xf32> to memref<1x1x128xf32, strided<[128, 128, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xs : memref<1x1x128xf32, strided<[128, 128, 1], offset: ?>>) outs(%sum : memref<1x1xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xs, %sum : memref<1x1x128xf32, strided<[128, 128, 1], offset: ?>>, memref<1x1xf32>) outs(%ys : memref<1x1x128xf32, strided<[128, 128, 1], offset: ?>>) {
    ^bb0(%a: f32, %s: f32, %b: f32):
      %d = arith.subf %a, %s : f32
      linalg.yield %d : f32
    }
  } {mapping = [#gpu.block<x>], ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}}
  return
}

// -----

// A one-op kernel of one element keeps a loop of one iteration, its kernel;
// an op over an empty buffer builds no loop.
// CHECK-LABEL: func @one_element
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK: math.exp
// CHECK: } {ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}}
// CHECK-NOT: scf.parallel
// CHECK-NOT: arith.negf
// CHECK: return
func.func @one_element(%x: memref<1x1xf32>, %y: memref<1x1xf32>, %e: memref<0x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<1x1xf32>) outs(%y : memref<1x1xf32>) attrs = {ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}} {
  ^bb0(%a: f32, %b: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : memref<0x4xf32>) attrs = {ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}} {
  ^bb0(%b: f32):
    %n = arith.negf %b : f32
    linalg.yield %n : f32
  }
  return
}
