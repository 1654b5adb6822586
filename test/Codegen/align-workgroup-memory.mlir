// RUN: ridge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(ridge-align-workgroup-memory))' | FileCheck %s

// Shared-memory buffers of outlined kernels get 16-byte alignment (the
// 16-byte stores and ldmatrix rows of tensor-core kernels need it; the NVVM
// lowering would place a bf16 buffer at 2 bytes), 1024 from a kilobyte up
// (wgmma's swizzle atoms); one already aligned keeps its alignment.
// CHECK-LABEL: gpu.func @staged
// CHECK-SAME: workgroup(%{{.*}} : memref<2048xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @staged(%arg0: memref<4xf32>) workgroup(%a : memref<2048xbf16, #gpu.address_space<workgroup>>, %b : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}, %c : memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
