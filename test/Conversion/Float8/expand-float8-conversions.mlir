// RUN: ridge-opt %s --split-input-file --ridge-expand-float8-conversions -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s --split-input-file --ridge-expand-float8-conversions --convert-to-llvm --reconcile-unrealized-casts -verify-diagnostics 2>&1 | FileCheck %s --check-prefix=LLVM

// An e4m3 rounding becomes the bits round-to-nearest-even gives (integer
// arithmetic on the f32's bits), bitcast to f8E4M3FN; the widening decodes
// the bits exactly. No float8 conversion is left for LLVM, which stores
// float8 values as i8.
// CHECK-LABEL: func @quantize_and_widen
// CHECK-SAME: (%[[X:.*]]: f32, %[[M:.*]]: memref<4xf8E4M3FN>)
// CHECK-NOT: arith.truncf
// CHECK:     arith.bitcast %[[X]] : f32 to i32
// CHECK:     %[[Q:.*]] = arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK:     memref.store %[[Q]], %[[M]]
// CHECK:     %[[L:.*]] = memref.load %[[M]]
// CHECK:     arith.bitcast %[[L]] : f8E4M3FN to i8
// CHECK-NOT: arith.extf
// CHECK:     return
// LLVM-LABEL: llvm.func @quantize_and_widen
// LLVM-NOT: f8E4M3FN
// LLVM: llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr
// LLVM: llvm.load %{{.*}} : !llvm.ptr -> i8
func.func @quantize_and_widen(%x: f32, %m: memref<4xf8E4M3FN>) -> f32 {
  %c0 = arith.constant 0 : index
  %q = arith.truncf %x : f32 to f8E4M3FN
  memref.store %q, %m[%c0] : memref<4xf8E4M3FN>
  %l = memref.load %m[%c0] : memref<4xf8E4M3FN>
  %w = arith.extf %l : f8E4M3FN to f32
  return %w : f32
}

// -----

// The other float8 types and float widths go through f32.
// CHECK-LABEL: func @e5m2_from_f16
// CHECK-NOT: arith.truncf %{{.*}} : f16 to f8E5M2
// CHECK:     arith.extf %{{.*}} : f16 to f32
// CHECK:     arith.bitcast %{{.*}} : i8 to f8E5M2
// CHECK:     arith.truncf %{{.*}} : f32 to f16
// CHECK:     return
func.func @e5m2_from_f16(%x: f16) -> f16 {
  %q = arith.truncf %x : f16 to f8E5M2
  %w = arith.extf %q : f8E5M2 to f16
  return %w : f16
}

// -----

// Vectors are not expanded (SIMT kernels keep 8-bit data scalar).
func.func @vector(%x: vector<4xf32>) -> vector<4xf8E4M3FN> {
  // expected-error @+1 {{converts a vector of 'vector<4xf8E4M3FN>', which ridge-expand-float8-conversions does not expand (scalars only)}}
  %q = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  return %q : vector<4xf8E4M3FN>
}
