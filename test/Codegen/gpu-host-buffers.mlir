// RUN: ridge-opt %s --ridge-gpu-host-buffers | FileCheck %s

memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func @main
func.func @main(%out: memref<4xf32>) {
  // Weights are staged into device memory for the run and freed at exit.
  // CHECK: %[[HOST:.*]] = memref.get_global @weights
  // CHECK: %[[W:.*]] = gpu.alloc () : memref<4xf32>
  // CHECK: gpu.memcpy %[[W]], %[[HOST]]
  %w = memref.get_global @weights : memref<4xf32>
  // Temporaries live in device memory.
  // CHECK: %[[T:.*]] = gpu.alloc () : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  // Host-level copies move device data.
  // CHECK: gpu.memcpy %[[T]], %[[W]]
  memref.copy %w, %t : memref<4xf32> to memref<4xf32>
  // CHECK: gpu.dealloc %[[T]]
  memref.dealloc %t : memref<4xf32>
  // CHECK: gpu.dealloc %[[W]]
  // CHECK-NEXT: return
  return
}
