// RUN: ridge-opt %s -split-input-file -ridge-privatize-owned-elements | FileCheck %s

// A channels-last max pool with no epilogue accumulates in its result
// element (bufferized in place): stored before the window loop, loaded and
// stored at every step. The element belongs to the iteration (its indices
// are the loop's ivs and constants), so it accumulates in a rank-0 alloca
// and is stored once, after the loop. The one-element view is folded first.
// CHECK-LABEL: func @max_pool
// CHECK: scf.parallel (%[[H:.*]], %[[W:.*]], %[[C:.*]]) =
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT: memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[ACC]][] : memref<f32>
// CHECK-NOT: memref.store %{{.*}}, %arg1
// CHECK: memref.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK: }
// CHECK: }
// CHECK-NEXT: %[[V:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %arg1[%{{.*}}, %[[H]], %[[W]], %[[C]]] : memref<1x4x4x8xf32>
// CHECK-NEXT: scf.reduce
func.func @max_pool(%x: memref<1x8x8x8xf32>, %y: memref<1x4x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.parallel (%h, %w, %c) = (%c0, %c0, %c0) to (%c4, %c4, %c8) step (%c1, %c1, %c1) {
    %e = memref.subview %y[0, %h, %w, %c] [1, 1, 1, 1] [1, 1, 1, 1] : memref<1x4x4x8xf32> to memref<1x1x1x1xf32, strided<[128, 32, 8, 1], offset: ?>>
    memref.store %ninf, %e[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32, strided<[128, 32, 8, 1], offset: ?>>
    scf.for %i = %c0 to %c2 step %c1 {
      scf.for %j = %c0 to %c2 step %c1 {
        %acc = memref.load %e[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32, strided<[128, 32, 8, 1], offset: ?>>
        %hi = affine.apply affine_map<(d0)[s0] -> (d0 * 2 + s0)>(%h)[%i]
        %wi = affine.apply affine_map<(d0)[s0] -> (d0 * 2 + s0)>(%w)[%j]
        %v = memref.load %x[%c0, %hi, %wi, %c] : memref<1x8x8x8xf32>
        %m = arith.maximumf %acc, %v : f32
        memref.store %m, %e[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32, strided<[128, 32, 8, 1], offset: ?>>
      }
    }
    scf.reduce
  }
  return
}

// -----

// Left alone: an element two iterations share (the channel iv is not among
// its indices), one read before the body stores it (its initial value is
// the buffer's), one also read through another view of the buffer, and a
// body without nested loops (nothing to accumulate).
// CHECK-LABEL: func @not_owned
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @not_owned(%x: memref<4x8xf32>, %y: memref<4xf32>, %z: memref<4x8xf32>, %u: memref<4x8xf32>, %v: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %zero, %y[%i] : memref<4xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %y[%i] : memref<4xf32>
      %b = memref.load %x[%i, %k] : memref<4x8xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %first = memref.load %z[%i, %j] : memref<4x8xf32>
    memref.store %first, %z[%i, %j] : memref<4x8xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %z[%i, %j] : memref<4x8xf32>
      %b = memref.load %x[%i, %k] : memref<4x8xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %z[%i, %j] : memref<4x8xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %zero, %u[%i, %j] : memref<4x8xf32>
    %row = memref.subview %u[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %u[%i, %j] : memref<4x8xf32>
      %b = memref.load %row[%k] : memref<8xf32, strided<[1], offset: ?>>
      %s = arith.addf %a, %b : f32
      memref.store %s, %u[%i, %j] : memref<4x8xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %zero, %v[%i, %j] : memref<4x8xf32>
    %a = memref.load %v[%i, %j] : memref<4x8xf32>
    %s = arith.addf %a, %a : f32
    memref.store %s, %v[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}
