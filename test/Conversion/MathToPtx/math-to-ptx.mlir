// RUN: ridge-opt %s --ridge-math-to-ptx | FileCheck %s
// The intrinsics survive convert-gpu-to-nvvm (which turns llvm.intr.floor,
// sqrt, fabs, ... into libdevice calls) and select one exact PTX instruction
// each.
// RUN: ridge-opt %s --pass-pipeline='builtin.module(nvvm-attach-target{chip=sm_80 features=+ptx80},gpu.module(ridge-math-to-ptx,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' \
// RUN:   | FileCheck %s --check-prefix=PTX --implicit-check-not=__nv_ --implicit-check-not=call.uni

gpu.module @kernels {
  // CHECK-LABEL: func @exact_ops
  // CHECK: llvm.call_intrinsic "llvm.floor.f32"(%{{.*}}) : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.ceil.f32"
  // CHECK: llvm.call_intrinsic "llvm.roundeven.f32"
  // CHECK: llvm.call_intrinsic "llvm.trunc.f32"
  // CHECK: llvm.call_intrinsic "llvm.sqrt.f32"
  // CHECK: llvm.call_intrinsic "llvm.fabs.f64"(%{{.*}}) : (f64) -> f64
  // CHECK: llvm.call_intrinsic "llvm.fma.f32"(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
  // PTX-LABEL: exact_ops(
  // PTX-DAG: cvt.rmi.f32.f32
  // PTX-DAG: cvt.rpi.f32.f32
  // PTX-DAG: cvt.rni.f32.f32
  // PTX-DAG: cvt.rzi.f32.f32
  // PTX-DAG: sqrt.rn.f32
  // PTX-DAG: abs.f64
  // PTX-DAG: fma.rn.f32
  func.func @exact_ops(%x: f32, %d: f64) -> (f32, f32, f32, f32, f32, f64, f32) {
    %0 = math.floor %x : f32
    %1 = math.ceil %x : f32
    %2 = math.roundeven %x : f32
    %3 = math.trunc %x : f32
    %4 = math.sqrt %x : f32
    %5 = math.absf %d : f64
    %6 = math.fma %x, %x, %x : f32
    return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f32, f32, f64, f32
  }
}

// Vectors and narrow floats are left for other lowerings.
// CHECK-LABEL: func private @untouched
// CHECK: math.sqrt %{{.*}} : f16
func.func private @untouched(%h: f16) -> f16 {
  %0 = math.sqrt %h : f16
  return %0 : f16
}
