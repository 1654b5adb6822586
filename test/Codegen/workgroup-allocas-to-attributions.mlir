// RUN: ridge-opt %s -split-input-file -ridge-workgroup-allocas-to-attributions -verify-diagnostics | FileCheck %s

// A workgroup alloca at the top of a launch body (the slots in which the
// warps sharing a row combine their totals) becomes a workgroup attribution
// of the launch; thread-private allocas stay.
// CHECK-LABEL: func @slots
// CHECK: gpu.launch {{.*}} workgroup(%[[SLOTS:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: memref.store %{{.*}}, %[[SLOTS]][
// CHECK: gpu.barrier
// CHECK: memref.load %[[SLOTS]][
func.func @slots(%out: memref<2xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c32 = arith.constant 32 : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %slots = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
    %private = memref.alloca() : memref<1xf32>
    %warp = arith.divui %tx, %c32 : index
    memref.store %one, %slots[%warp] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %v = memref.load %slots[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %v, %private[%c0] : memref<1xf32>
    memref.store %v, %out[%bx] : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// An alloca a loop of the body repeats has no one-per-block form.
func.func @in_loop() {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c4 step %c1 {
      // expected-error @+1 {{allocates workgroup memory inside a loop or branch of the launch: one attribution per block would not match it}}
      %slots = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
    }
    gpu.terminator
  }
  return
}

// -----

// Outside a launch (on the host) it cannot be shared memory at all.
func.func @host() {
  // expected-error @+1 {{allocates workgroup memory outside a gpu.launch or of a dynamic shape: no launch attribution can hold it}}
  %slots = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
  return
}
