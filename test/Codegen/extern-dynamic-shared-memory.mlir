// RUN: ridge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(ridge-extern-dynamic-shared-memory))' | FileCheck %s

// The zero-sized shared global that convert-gpu-to-nvvm makes of
// gpu.dynamic_shared_memory becomes the kernel's extern array (NVPTX:
// `.extern .shared .align 1024 .b8 __dynamic_shmem__0[];`); a static shared
// buffer and a zero-sized global array elsewhere keep their linkage.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @staged() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
// CHECK: llvm.mlir.global internal @global_empty() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @staged() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
    llvm.mlir.global internal @global_empty() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  }
}
