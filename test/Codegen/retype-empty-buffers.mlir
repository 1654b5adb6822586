// RUN: ridge-opt %s -split-input-file -verify-diagnostics \
// RUN:   -ridge-retype-empty-buffers | FileCheck %s

// Empty arguments lose their zero-sized type; copies touching them go away.
// CHECK-LABEL: func.func @empty_io
// CHECK-SAME: (%{{.*}}: memref<1xf32>, %{{.*}}: memref<1xf32>, %[[FULL:.*]]: memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @empty_io(%in: memref<3x0x5xf32>, %out: memref<3x0x5xf32>, %full: memref<4xf32>) {
  memref.copy %in, %out : memref<3x0x5xf32> to memref<3x0x5xf32>
  %tmp = memref.alloc() : memref<0xf32>
  memref.dealloc %tmp : memref<0xf32>
  return
}

// -----

// Non-empty buffers are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME: (%{{.*}}: memref<2x3xi64>)
func.func @untouched(%arg0: memref<2x3xi64>) {
  return
}

// -----

// An empty buffer that something still reads is an error, not a silent
// retype.
// expected-error @below {{argument #0 is an empty buffer ('memref<0x4xf32>') that is still used}}
func.func @still_used(%arg0: memref<0x4xf32>, %arg1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %arg0[%c0, %c0] : memref<0x4xf32>
  memref.store %v, %arg1[%c0] : memref<4xf32>
  return
}

// -----

// The model function passes its empty input on to a kernel, and an empty
// temporary as the kernel's out-parameter: both functions are retyped
// together.
// CHECK-LABEL: func.func private @k0_pointwise
// CHECK-SAME: (%{{.*}}: memref<1xf32>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<4xf32>)
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<1xf32>, %[[FULL:.*]]: memref<4xf32>)
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<1xf32>
// CHECK: call @k0_pointwise(%[[IN]], %[[TMP]], %[[FULL]]) : (memref<1xf32>, memref<1xf32>, memref<4xf32>) -> ()
func.func private @k0_pointwise(%in: memref<2x0xf32>, %out: memref<0xf32>, %full: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  return
}
func.func @main(%in: memref<2x0xf32>, %full: memref<4xf32>) {
  %tmp = memref.alloc() : memref<0xf32>
  call @k0_pointwise(%in, %tmp, %full) : (memref<2x0xf32>, memref<0xf32>, memref<4xf32>) -> ()
  memref.dealloc %tmp : memref<0xf32>
  return
}
