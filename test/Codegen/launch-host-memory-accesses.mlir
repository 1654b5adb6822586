// RUN: ridge-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(ridge-launch-host-memory-accesses))' --verify-diagnostics | FileCheck %s

// A reduction whose single-thread wrapper folded away: its initial store and
// its loop are each a one-thread kernel; the device copy between them stays
// on the host. Pure ops between accesses move with them.
// CHECK-LABEL: func @folded_reduction
// CHECK:      gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK-NEXT:   memref.store
// CHECK-NEXT:   gpu.terminator
// CHECK:      gpu.memcpy
// CHECK:      gpu.launch
// CHECK-NEXT:   scf.for
// CHECK:          memref.load
// CHECK:          memref.store
// CHECK:        }
// CHECK-NEXT:   %[[X:.*]] = memref.load
// CHECK-NEXT:   %[[Y:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT:   memref.store %[[Y]]
// CHECK-NEXT:   gpu.terminator
// CHECK:      return
func.func @folded_reduction(%in: memref<128xf32>, %init: memref<f32>,
                            %acc: memref<f32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %init[] : memref<f32>
  gpu.memcpy %acc, %init : memref<f32>, memref<f32>
  scf.for %i = %c0 to %c128 step %c1 {
    %v = memref.load %in[%i] : memref<128xf32>
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %x = memref.load %acc[] : memref<f32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %out[] : memref<f32>
  return
}

// -----

// A pure op of a run that depends on no access stays before the launch,
// where later host ops use it.
// CHECK-LABEL: func @hoisted
// CHECK:       %[[C:.*]] = arith.addi
// CHECK:       gpu.launch
// CHECK:         memref.store
// CHECK:       call @use(%[[C]])
func.func private @use(index)
func.func @hoisted(%out: memref<f32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  memref.store %zero, %out[] : memref<f32>
  %count = arith.addi %n, %c1 : index
  memref.store %zero, %out[] : memref<f32>
  func.call @use(%count) : (index) -> ()
  return
}

// -----

// A value read on the host and used by a host op cannot move into a kernel:
// it stays, with a warning.
// CHECK-LABEL: func @escaping
// CHECK-NOT: gpu.launch
// CHECK: memref.load
func.func private @use(index)
func.func @escaping(%in: memref<index>) {
  // expected-warning @below {{the host reads device memory here and uses the value after the access}}
  %n = memref.load %in[] : memref<index>
  func.call @use(%n) : (index) -> ()
  return
}

// -----

// A host loop that launches a kernel per step stays a host loop; the
// accesses inside the kernel are the kernel's.
// CHECK-LABEL: func @host_loop
// CHECK: scf.for
// CHECK-NEXT: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @host_loop(%buf: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %buf[%i] : memref<8xf32>
      memref.store %v, %buf[%c0] : memref<8xf32>
      gpu.terminator
    }
  }
  return
}

// -----

// A one-element kernel whose grid folded away (a global average pool of one
// output) left its thread-private accumulator, an alloca, on the host: it
// moves into the kernel with the accesses, instead of the kernel being
// handed a pointer into the host's stack.
// CHECK-LABEL: func @private_accumulator
// CHECK-NOT: memref.alloca
// CHECK:      gpu.launch
// CHECK-NEXT:   %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:   memref.store %{{.*}}, %[[ACC]][]
// CHECK-NEXT:   scf.for
// CHECK:        }
// CHECK-NEXT:   memref.load %[[ACC]][]
// CHECK-NEXT:   memref.store
// CHECK-NEXT:   gpu.terminator
// CHECK:      return
func.func @private_accumulator(%in: memref<9xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloca() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c9 step %c1 {
    %v = memref.load %in[%i] : memref<9xf32>
    %a = memref.load %acc[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[] : memref<f32>
  }
  %x = memref.load %acc[] : memref<f32>
  memref.store %x, %out[] : memref<f32>
  return
}

// -----

// A private buffer the host uses after the run keeps the run on the host.
// CHECK-LABEL: func @escaping_buffer
// CHECK-NOT: gpu.launch
// CHECK: memref.alloca
func.func private @use(memref<f32>)
func.func @escaping_buffer() {
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{the host reads device memory here and uses the value after the access}}
  %acc = memref.alloca() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  func.call @use(%acc) : (memref<f32>) -> ()
  return
}
