// RUN: ridge-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(ridge-grid-constant-kernel-args))' | FileCheck %s

// A tensor map the launch passes by value (128 bytes) whose address the
// kernel takes: a byval pointer marked __grid_constant__, aligned to 64
// bytes (what NVPTX declares `.param .align 64 .b8 p[128]` and addresses
// with cvta.param); the cast goes and the TMA copy reads the parameter.
// The other arguments stay as they are.
// CHECK-LABEL: llvm.func @tma_kernel
// CHECK-SAME: (%[[MAP:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr<7>, %{{.*}}: !llvm.ptr<3>, %{{.*}}: i32)
// CHECK-NOT: unrealized_conversion_cast
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @tma_kernel(%map: !llvm.array<16 x i64>, %smem: !llvm.ptr<7>, %bar: !llvm.ptr<3>, %x: i32) attributes {nvvm.kernel} {
      %address = builtin.unrealized_conversion_cast %map : !llvm.array<16 x i64> to !llvm.ptr
      nvvm.cp.async.bulk.tensor.shared.cluster.global %smem, %address, %bar, box[%x, %x] : !llvm.ptr<7>, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// An aggregate the kernel reads as a value (no cast to a pointer), and a
// device function's argument, are left alone: only a kernel's parameters
// have an address in the param space.
// CHECK-LABEL: llvm.func @value_use
// CHECK-SAME: (%{{.*}}: !llvm.array<16 x i64>, %{{.*}}: !llvm.ptr)
// CHECK: llvm.extractvalue
// CHECK-LABEL: llvm.func @not_a_kernel
// CHECK-SAME: (%{{.*}}: !llvm.array<16 x i64>)
// CHECK: builtin.unrealized_conversion_cast
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @value_use(%map: !llvm.array<16 x i64>, %out: !llvm.ptr) attributes {nvvm.kernel} {
      %word = llvm.extractvalue %map[0] : !llvm.array<16 x i64>
      llvm.store %word, %out : i64, !llvm.ptr
      llvm.return
    }
    llvm.func @not_a_kernel(%map: !llvm.array<16 x i64>) -> !llvm.ptr {
      %address = builtin.unrealized_conversion_cast %map : !llvm.array<16 x i64> to !llvm.ptr
      llvm.return %address : !llvm.ptr
    }
  }
}
