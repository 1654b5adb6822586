// RUN: ridge-opt %s --ridge-math-to-ptx | FileCheck %s

// CHECK-LABEL: func @exact_ops
// CHECK: llvm.inline_asm asm_dialect = att "cvt.rmi.f32.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm asm_dialect = att "sqrt.rn.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm asm_dialect = att "abs.f64 $0, $1;", "=d,d"
// CHECK: llvm.inline_asm asm_dialect = att "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f"
func.func @exact_ops(%x: f32, %d: f64) -> (f32, f32, f64, f32) {
  %0 = math.floor %x : f32
  %1 = math.sqrt %x : f32
  %2 = math.absf %d : f64
  %3 = math.fma %x, %x, %x : f32
  return %0, %1, %2, %3 : f32, f32, f64, f32
}

// Vectors and narrow floats are left for other lowerings.
// CHECK-LABEL: func @untouched
// CHECK: math.sqrt %{{.*}} : f16
func.func @untouched(%h: f16) -> f16 {
  %0 = math.sqrt %h : f16
  return %0 : f16
}
