// RUN: ridge-opt %s --split-input-file --ridge-plan-device-memory --verify-diagnostics | FileCheck %s
// RUN: not ridge-opt %s --ridge-plan-device-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN

// ALIGN: 'alignment' must be a power of two, got 48

// Weights go to the weights block, one slot per global however often they
// are staged; temporaries whose live ranges do not overlap share arena
// bytes; the last temporary, copied whole into the output, is replaced by it.

// CHECK: module attributes {gpu.container_module, ridge.device_memory = {arena_bytes = 1024 : i64, peak_live_bytes = 1024 : i64, weights = [{bytes = 1024 : i64, global = @w0, offset = 0 : i64}, {bytes = 64 : i64, global = @w1, offset = 1024 : i64}], weights_bytes = 1280 : i64, zeroed_bytes = 0 : i64}}
module attributes {gpu.container_module} {
  memref.global "private" constant @w0 : memref<256xf32> = dense<1.0>
  memref.global "private" constant @w1 : memref<16xf32> = dense<2.0>
  gpu.module @kernels {
    gpu.func @k1(%a: memref<256xf32>, %b: memref<256xf32>) kernel { gpu.return }
    gpu.func @k2(%a: memref<16xf32>, %b: memref<128xf32>) kernel { gpu.return }
  }

  // CHECK-LABEL: func @main(
  // CHECK-SAME: %[[IN:.*]]: memref<256xf32>, %[[OUT:.*]]: memref<256xf32>, %[[W:.*]]: memref<1280xi8>, %[[A:.*]]: memref<1024xi8>)
  func.func @main(%in: memref<256xf32>, %out: memref<256xf32>) {
    %c1 = arith.constant 1 : index
    // CHECK-NOT: gpu.alloc
    // CHECK-NOT: gpu.memcpy
    // CHECK: %[[W0:.*]] = memref.view %[[W]][%{{.*}}][] : memref<1280xi8> to memref<256xf32>
    %g0 = memref.get_global @w0 : memref<256xf32>
    %d0 = gpu.alloc () : memref<256xf32>
    gpu.memcpy %d0, %g0 : memref<256xf32>, memref<256xf32>
    // CHECK: %[[T0:.*]] = memref.view %[[A]][%{{.*}}][] : memref<1024xi8> to memref<256xf32>
    %t0 = gpu.alloc () : memref<256xf32>
    // CHECK: gpu.launch_func @kernels::@k1 {{.*}} args(%[[W0]] : memref<256xf32>, %[[T0]] : memref<256xf32>)
    gpu.launch_func @kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d0 : memref<256xf32>, %t0 : memref<256xf32>)
    gpu.dealloc %d0 : memref<256xf32>
    gpu.dealloc %t0 : memref<256xf32>
    // @w1 twice: one slot.
    // CHECK: %[[W1:.*]] = memref.view %[[W]][%{{.*}}][] : memref<1280xi8> to memref<16xf32>
    %g1 = memref.get_global @w1 : memref<16xf32>
    %d1 = gpu.alloc () : memref<16xf32>
    gpu.memcpy %d1, %g1 : memref<16xf32>, memref<16xf32>
    // %t1 is born after %t0 died: the same bytes.
    // CHECK: %[[O1:.*]] = arith.constant 0 : index
    // CHECK-NEXT: %[[T1:.*]] = memref.view %[[A]][%[[O1]]][] : memref<1024xi8> to memref<128xf32>
    %t1 = gpu.alloc () : memref<128xf32>
    // CHECK: gpu.launch_func @kernels::@k2 {{.*}} args(%[[W1]] : memref<16xf32>, %[[T1]] : memref<128xf32>)
    gpu.launch_func @kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d1 : memref<16xf32>, %t1 : memref<128xf32>)
    // CHECK: memref.view %[[W]]
    %g1b = memref.get_global @w1 : memref<16xf32>
    %d1b = gpu.alloc () : memref<16xf32>
    gpu.memcpy %d1b, %g1b : memref<16xf32>, memref<16xf32>
    // %t2 overlaps %t1 (through its view): other bytes.
    // CHECK: %[[O2:.*]] = arith.constant 512 : index
    // CHECK-NEXT: memref.view %[[A]][%[[O2]]][] : memref<1024xi8> to memref<64xf32>
    %t2 = gpu.alloc () : memref<64xf32>
    %v = memref.subview %t2[0] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1]>>
    %t3 = gpu.alloc () : memref<256xf32>
    gpu.launch_func @kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d1b : memref<16xf32>, %t1 : memref<128xf32>)
    gpu.launch_func @kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<256xf32>, %t3 : memref<256xf32>)
    memref.copy %v, %v : memref<16xf32, strided<[1]>> to memref<16xf32, strided<[1]>>
    gpu.dealloc %t1 : memref<128xf32>
    gpu.dealloc %t2 : memref<64xf32>
    // The result: written in place.
    // CHECK: gpu.launch_func @kernels::@k1 {{.*}} args(%[[IN]] : memref<256xf32>, %[[OUT]] : memref<256xf32>)
    // CHECK-NOT: gpu.memcpy
    // CHECK-NOT: gpu.dealloc
    // CHECK: return
    gpu.memcpy %out, %t3 : memref<256xf32>, memref<256xf32>
    gpu.dealloc %t3 : memref<256xf32>
    return
  }
}

// -----

// What the plan cannot place stays a run-time allocation: a dynamic shape,
// an allocation inside a loop. An output read after the copy keeps it.

// CHECK: ridge.device_memory = {arena_bytes = 256 : i64, peak_live_bytes = 256 : i64, weights = [], weights_bytes = 0 : i64, zeroed_bytes = 0 : i64}
// CHECK-LABEL: func @main(
// CHECK-SAME: %{{.*}}: memref<64xf32>, %{{.*}}: index, %{{.*}}: memref<0xi8>, %{{.*}}: memref<256xi8>)
func.func @main(%out: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: gpu.alloc (%{{.*}}) : memref<?xf32>
  %dyn = gpu.alloc (%n) : memref<?xf32>
  gpu.dealloc %dyn : memref<?xf32>
  // CHECK: scf.for
  // CHECK: gpu.alloc () : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %inner = gpu.alloc () : memref<8xf32>
    gpu.dealloc %inner : memref<8xf32>
  }
  // CHECK: %[[T:.*]] = memref.view
  // CHECK: gpu.memcpy %{{.*}}, %[[T]]
  %t = gpu.alloc () : memref<64xf32>
  gpu.memcpy %out, %t : memref<64xf32>, memref<64xf32>
  %x = memref.load %out[%c0] : memref<64xf32>
  gpu.dealloc %t : memref<64xf32>
  return
}

// -----

// Buffers kept zero (split-K's tile counters: ridge.kept_zero, zeroed by a
// memset right after their allocation) get bytes of their own at the start
// of the arena, which the session zeroes once: the memsets go. The
// temporaries are planned after them. A kept-zero buffer whose memset does
// not follow it, or sets another value, stays an ordinary temporary with
// its memset.

// CHECK: ridge.device_memory = {arena_bytes = 1024 : i64, peak_live_bytes = 512 : i64, weights = [], weights_bytes = 0 : i64, zeroed_bytes = 512 : i64}
// CHECK-LABEL: func @main(
// CHECK-SAME: %{{.*}}: memref<64xf32>, %{{.*}}: memref<0xi8>, %[[A:.*]]: memref<1024xi8>)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<64xf32>, %b: memref<4xi32>) kernel { gpu.return }
  }
  func.func @main(%out: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    // CHECK-NOT: gpu.memset
    // CHECK: %[[O0:.*]] = arith.constant 0 : index
    // CHECK-NEXT: %[[C0:.*]] = memref.view %[[A]][%[[O0]]][] : memref<1024xi8> to memref<4xi32>
    %c0 = gpu.alloc () {ridge.kept_zero} : memref<4xi32>
    gpu.memset %c0, %zero : memref<4xi32>, i32
    // CHECK: %[[T0:.*]] = memref.view %[[A]][%{{.*}}][] : memref<1024xi8> to memref<64xf32>
    %t0 = gpu.alloc () : memref<64xf32>
    // CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[T0]] : memref<64xf32>, %[[C0]] : memref<4xi32>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t0 : memref<64xf32>, %c0 : memref<4xi32>)
    gpu.dealloc %c0 : memref<4xi32>
    gpu.dealloc %t0 : memref<64xf32>
    // The second kept-zero buffer: its own bytes, after the first's.
    // CHECK: %[[O1:.*]] = arith.constant 256 : index
    // CHECK-NEXT: %[[C1:.*]] = memref.view %[[A]][%[[O1]]][] : memref<1024xi8> to memref<4xi32>
    %c1b = gpu.alloc () {ridge.kept_zero} : memref<4xi32>
    gpu.memset %c1b, %zero : memref<4xi32>, i32
    // Set to one: a temporary like any other, its memset kept.
    // CHECK: %[[O2:.*]] = arith.constant 768 : index
    // CHECK-NEXT: %[[C2:.*]] = memref.view %[[A]][%[[O2]]][] : memref<1024xi8> to memref<4xi32>
    // CHECK-NEXT: gpu.memset %[[C2]]
    %c2 = gpu.alloc () {ridge.kept_zero} : memref<4xi32>
    gpu.memset %c2, %one : memref<4xi32>, i32
    // CHECK: %[[T1:.*]] = memref.view %[[A]][%{{.*}}][] : memref<1024xi8> to memref<64xf32>
    %t1 = gpu.alloc () : memref<64xf32>
    // CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[T1]] : memref<64xf32>, %[[C1]] : memref<4xi32>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t1 : memref<64xf32>, %c1b : memref<4xi32>)
    // CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[T1]] : memref<64xf32>, %[[C2]] : memref<4xi32>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t1 : memref<64xf32>, %c2 : memref<4xi32>)
    gpu.dealloc %c1b : memref<4xi32>
    gpu.dealloc %c2 : memref<4xi32>
    gpu.dealloc %t1 : memref<64xf32>
    return
  }
}

// -----

// The plan is made once.
module attributes {ridge.device_memory = {}} {
  // expected-error @below {{the module already has 'ridge.device_memory'; the plan is made once}}
  func.func @main() {
    return
  }
}
