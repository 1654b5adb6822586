// RUN: ridge-opt %s -ridge-mark-kernels-noinline | FileCheck %s
// RUN: ridge-opt %s -ridge-mark-kernels-noinline -convert-func-to-llvm | FileCheck %s --check-prefix=LLVM

// Kernel functions get `noinline` (kept with what they had, added once);
// other functions are left alone. func-to-llvm carries it to the llvm.func.
// CHECK-LABEL: func.func private @k0_pointwise
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func private @k1_reduction
// CHECK-SAME: passthrough = ["nounwind", "noinline"]
// CHECK-LABEL: func.func private @k2_again
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func @main
// CHECK-NOT: passthrough
// LLVM: llvm.func @k0_pointwise() attributes {passthrough = ["noinline"]
// LLVM: llvm.func @main() {
func.func private @k0_pointwise() attributes {ridge.kernel = "pointwise"} {
  return
}
func.func private @k1_reduction() attributes {ridge.kernel = "reduction", passthrough = ["nounwind"]} {
  return
}
func.func private @k2_again() attributes {ridge.kernel = "pointwise", passthrough = ["noinline"]} {
  return
}
func.func @main() {
  call @k0_pointwise() : () -> ()
  call @k1_reduction() : () -> ()
  call @k2_again() : () -> ()
  return
}
