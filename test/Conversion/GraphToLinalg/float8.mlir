// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Float8 tensors lower to their i8 bits. f32 -> f8E4M3FN rounds the f32 bits
// to 3 mantissa bits, to nearest even (the 2^19 - 1 + lsb bias), rebiases
// the exponent (127 - 7 = 120, << 3 = 960), takes subnormals from
// roundeven(|x| * 2^9), and saturates: past 0x7e (448) gives 0x7e; NaN
// gives S.1111.111.
// CHECK-LABEL: func @cast_to_e4m3fn
// CHECK-SAME: (%{{.*}}: tensor<8xf32>) -> tensor<8xi8>
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: i8):
// CHECK:   %[[BITS:.*]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK:   %[[ABS:.*]] = arith.andi %[[BITS]], %{{.*}} : i32
// CHECK:   arith.constant 524287 : i32
// CHECK:   arith.constant 960 : i32
// CHECK:   arith.constant 5.120000e+02 : f32
// CHECK:   math.roundeven
// CHECK:   %[[MAX:.*]] = arith.constant 126 : i32
// CHECK:   %[[OVER:.*]] = arith.cmpi ugt, %{{.*}}, %[[MAX]] : i32
// CHECK:   %[[SAT:.*]] = arith.constant 126 : i8
// CHECK:   arith.select %[[OVER]], %[[SAT]], %{{.*}} : i8
// CHECK:   arith.constant 127 : i8
// CHECK:   linalg.yield %{{.*}} : i8
func.func @cast_to_e4m3fn(%x: tensor<8xf32>) -> tensor<8xf8E4M3FN> {
  %0 = ridge.cast %x : tensor<8xf32> -> tensor<8xf8E4M3FN>
  return %0 : tensor<8xf8E4M3FN>
}

// -----

// Without saturation, overflow in f8E5M2 is infinity (0x7c).
// CHECK-LABEL: func @cast_to_e5m2_no_saturate
// CHECK:   arith.constant 123 : i32
// CHECK:   arith.constant 124 : i8
func.func @cast_to_e5m2_no_saturate(%x: tensor<8xf32>) -> tensor<8xf8E5M2> {
  %0 = ridge.cast %x {saturate = false} : tensor<8xf32> -> tensor<8xf8E5M2>
  return %0 : tensor<8xf8E5M2>
}

// -----

// f16 widens to f32 exactly first. FNUZ: no negative zero, and NaN (here also
// overflow, without saturation) is 0x80.
// CHECK-LABEL: func @cast_to_e4m3fnuz_no_saturate
// CHECK-SAME: (%{{.*}}: tensor<8xf16>) -> tensor<8xi8>
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK:   %[[ZERO:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i8
// CHECK:   arith.select %[[ZERO]]
// CHECK:   %[[NAN:.*]] = arith.ori
// CHECK:   %[[NANBITS:.*]] = arith.constant -128 : i8
// CHECK:   arith.select %[[NAN]], %[[NANBITS]], %{{.*}} : i8
func.func @cast_to_e4m3fnuz_no_saturate(%x: tensor<8xf16>) -> tensor<8xf8E4M3FNUZ> {
  %0 = ridge.cast %x {saturate = false} : tensor<8xf16> -> tensor<8xf8E4M3FNUZ>
  return %0 : tensor<8xf8E4M3FNUZ>
}

// -----

// Decoding is exact: significand * 2^(exponent - 15 - 2) in f32 (the
// exponent field rebiased by 127 - 15 - 2 = 110), the sign or-ed in, then
// infinities and NaNs (exponent 31); f16 is a truncation of that f32.
// CHECK-LABEL: func @cast_from_e5m2
// CHECK-SAME: (%{{.*}}: tensor<8xi8>) -> tensor<8xf16>
// CHECK: ^bb0(%[[IN:.*]]: i8, %{{.*}}: f16):
// CHECK:   arith.extui %[[IN]] : i8 to i32
// CHECK:   arith.constant 110 : i32
// CHECK:   arith.uitofp
// CHECK:   arith.mulf
// CHECK:   arith.constant 0x7FC00000 : f32
// CHECK:   arith.constant 2139095040 : i32
// CHECK:   arith.truncf %{{.*}} : f32 to f16
func.func @cast_from_e5m2(%x: tensor<8xf8E5M2>) -> tensor<8xf16> {
  %0 = ridge.cast %x : tensor<8xf8E5M2> -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// Constants keep their bits (f8E5M2FNUZ: bias 16, 1.0 = 0x40, -2.0 = 0xc4).
// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<[64, -60]> : tensor<2xi8>
func.func @constant() -> tensor<2xf8E5M2FNUZ> {
  %0 = ridge.constant dense<[1.0, -2.0]> : tensor<2xf8E5M2FNUZ>
  return %0 : tensor<2xf8E5M2FNUZ>
}

// -----

// QuantizeLinear to float8 is x / scale cast with saturation; DequantizeLinear
// from float8 decodes and scales.
// CHECK-LABEL: func @quantize_e4m3fn
// CHECK: linalg.generic
// CHECK:   arith.divf
// CHECK:   math.roundeven
// CHECK:   arith.constant 126 : i8
// CHECK-LABEL: func @dequantize_e4m3fn
// CHECK: linalg.generic
// CHECK:   arith.extui %{{.*}} : i8 to i32
// CHECK:   arith.mulf
// CHECK:   arith.mulf
func.func @quantize_e4m3fn(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<1xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %0 = ridge.quantize_linear %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<1xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
func.func @dequantize_e4m3fn(%x: tensor<4xf8E4M3FN>, %s: tensor<f32>, %z: tensor<1xf8E4M3FN>) -> tensor<4xf32> {
  %0 = ridge.dequantize_linear %x, %s, %z : (tensor<4xf8E4M3FN>, tensor<f32>, tensor<1xf8E4M3FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
