// RUN: ridge-opt %s -split-input-file -ridge-fold-result-amax-into-row-loops -verify-diagnostics | FileCheck %s

// A row kernel (RMS-style: a row sum, then each row scaled and written)
// whose result's amax ridge-move-scale-reductions-to-producers added: each
// row recomputes its elementwise op from the same inputs as a reduction of
// magnitudes into a 0-d accumulator from 0, and the row loop reduces the
// rows' values (init 0, maximumf) into the amax buffer. The marked
// reduction of the whole result goes; the buffer's zero fill stays.
// CHECK-LABEL: func.func private @k0_reduction
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[AMAX:.*]] : memref<f32>)
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[R:.*]] = scf.parallel (%[[ROW:.*]]) = (%c0) to (%c4) step (%c1) init (%[[ZERO]]) -> f32 {
// CHECK:     %[[OUT:.*]] = memref.subview %arg1[%[[ROW]], 0] [1, 64] [1, 1]
// CHECK:     linalg.generic {{.*}} ins(%[[IN:.*]], %[[SUM:.*]] : {{.*}}) outs(%[[OUT]] : {{.*}})
// CHECK:     %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK:     memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK:     linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["reduction", "reduction"]} ins(%[[IN]], %[[SUM]] : {{.*}}) outs(%[[ACC]] : memref<f32>)
// CHECK:       arith.divf
// CHECK:       math.absf
// CHECK:       arith.maximumf
// CHECK:     %[[V:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK:     scf.reduce(%[[V]] : f32) {
// CHECK:       arith.maximumf
// CHECK:       scf.reduce.return
// CHECK:   } {ridge.kernel_config = {{.*}}}
// CHECK:   memref.store %[[R]], %[[AMAX]][] : memref<f32>
// CHECK-NOT: ridge.result_amax
// CHECK:   return
#id = affine_map<(d0, d1) -> (d0, d1)>
#acc = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
func.func private @k0_reduction(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %amax: memref<f32>) attributes {ridge.kernel = "reduction"} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %in = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %sum = memref.alloca() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1xf32>)
    linalg.generic {indexing_maps = [#id, #acc], iterator_types = ["parallel", "reduction"]} ins(%in : memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%sum : memref<1xf32>) {
    ^bb0(%v: f32, %s: f32):
      %t = arith.addf %s, %v : f32
      linalg.yield %t : f32
    }
    %out = memref.subview %y[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #acc, #id], iterator_types = ["parallel", "parallel"]} ins(%in, %sum : memref<1x64xf32, strided<[64, 1], offset: ?>>, memref<1xf32>) outs(%out : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %q = arith.divf %v, %s : f32
      linalg.yield %q : f32
    }
    scf.reduce
  } {ridge.kernel_config = {block_size = 128 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 1 : i64, warps_per_block = 4 : i64}}
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]} ins(%y : memref<4x64xf32>) outs(%amax : memref<f32>) attrs = {ridge.result_amax} {
  ^bb0(%v: f32, %m: f32):
    %a = math.absf %v : f32
    %b = arith.maximumf %m, %a : f32
    linalg.yield %b : f32
  }
  return
}

// -----

// An unmarked reduction of a result (a kernel that computes an amax of its
// own) is left alone.
// CHECK-LABEL: func.func private @unmarked
// CHECK:   scf.parallel
// CHECK-NOT: init
// CHECK:   linalg.generic {{.*}} ins(%arg1 : memref<4x64xf32>) outs(%arg2 : memref<f32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func private @unmarked(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %amax: memref<f32>) attributes {ridge.kernel = "reduction"} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %in = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %out = memref.subview %y[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%out : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    scf.reduce
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]} ins(%y : memref<4x64xf32>) outs(%amax : memref<f32>) {
  ^bb0(%v: f32, %m: f32):
    %a = math.absf %v : f32
    %b = arith.maximumf %m, %a : f32
    linalg.yield %b : f32
  }
  return
}

// -----

// A marked amax whose row loop does not end by writing the result (here
// it writes another buffer) cannot be folded: an error, not a slow kernel.
#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func private @not_the_result(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %z: memref<4x64xf32>, %amax: memref<f32>) attributes {ridge.kernel = "reduction"} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %in = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %out = memref.subview %z[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%out : memref<1x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    scf.reduce
  }
  // expected-error @+1 {{the amax of a row kernel's result does not follow a row loop whose last op writes the result elementwise}}
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]} ins(%y : memref<4x64xf32>) outs(%amax : memref<f32>) attrs = {ridge.result_amax} {
  ^bb0(%v: f32, %m: f32):
    %a = math.absf %v : f32
    %b = arith.maximumf %m, %a : f32
    linalg.yield %b : f32
  }
  return
}
