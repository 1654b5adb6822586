// RUN: ridge-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(test-ridge-inject-gpu-fault{fault=thread-index}))' | FileCheck %s --check-prefix=TID
// RUN: ridge-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(test-ridge-inject-gpu-fault{fault=drop-barrier kernel=second}))' | FileCheck %s --check-prefix=BAR
// RUN: ridge-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(test-ridge-inject-gpu-fault{fault=shuffle-lane}))' | FileCheck %s --check-prefix=SHFL
// RUN: ridge-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(test-ridge-inject-gpu-fault{fault=misaligned-vector}))' | FileCheck %s --check-prefix=VEC

// Each fault breaks the first kernel that has the op it needs (or the one
// named by `kernel`), and only that op.
// TID-LABEL: gpu.func @first
// TID: %[[T:.*]] = gpu.thread_id{{ +}}x
// TID: %[[ONE:.*]] = arith.constant 1 : index
// TID: %[[WRONG:.*]] = arith.addi %[[T]], %[[ONE]] : index
// TID: memref.load %{{.*}}[%[[WRONG]]]
// TID-LABEL: gpu.func @second
// TID: %[[T2:.*]] = gpu.thread_id{{ +}}x
// TID-NEXT: vector.load %{{.*}}[%[[T2]]]
// BAR-LABEL: gpu.func @first
// BAR: gpu.barrier
// BAR-LABEL: gpu.func @second
// BAR-NOT: gpu.barrier
// BAR: gpu.return
// SHFL-LABEL: gpu.func @first
// SHFL: %[[ONE:.*]] = arith.constant 1 : i32
// SHFL: %[[OFFSET:.*]] = arith.addi %{{.*}}, %[[ONE]] : i32
// SHFL: gpu.shuffle{{ +}}xor %{{.*}}, %[[OFFSET]], %{{.*}} : f32
// VEC-LABEL: gpu.func @second
// VEC: %[[T:.*]] = gpu.thread_id{{ +}}x
// VEC: %[[ONE:.*]] = arith.constant 1 : index
// VEC: %[[OFF:.*]] = arith.addi %[[T]], %[[ONE]] : index
// VEC: vector.load %{{.*}}[%[[OFF]]] : memref<1024xf32>, vector<4xf32>
gpu.module @kernels {
  gpu.func @first(%buf: memref<256xf32>) kernel {
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %tid = gpu.thread_id x
    %v = memref.load %buf[%tid] : memref<256xf32>
    %s, %valid = gpu.shuffle xor %v, %c16, %c32 : f32
    gpu.barrier
    memref.store %s, %buf[%tid] : memref<256xf32>
    gpu.return
  }
  gpu.func @second(%buf: memref<1024xf32>) kernel {
    %tid = gpu.thread_id x
    %v = vector.load %buf[%tid] : memref<1024xf32>, vector<4xf32>
    gpu.barrier
    vector.store %v, %buf[%tid] : memref<1024xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// A fault with nothing to break is an error: a test that injects nothing
// must not pass.
// expected-error-re @+1 {{fault '{{[a-z-]+}}': {{no kernel has an|kernel 'second' has no}} op to break}}
gpu.module @nothing_to_break {
  gpu.func @second(%buf: memref<4xf32>) kernel {
    gpu.return
  }
}
