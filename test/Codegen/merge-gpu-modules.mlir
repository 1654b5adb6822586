// RUN: ridge-opt %s --ridge-merge-gpu-modules | FileCheck %s

// CHECK: gpu.module @a {
// CHECK:   gpu.func @k0
// CHECK:   gpu.func @k1
// CHECK: }
// CHECK-NOT: gpu.module @b
// CHECK: gpu.launch_func @a::@k0
// CHECK: gpu.launch_func @a::@k1
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @k0() kernel { gpu.return }
  }
  gpu.module @b {
    gpu.func @k1() kernel { gpu.return }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
