// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Comparisons produce an i1 result from broadcast operands; unsigned data
// compares unsigned after the signless conversion.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @less_u8
// CHECK-SAME: -> tensor<4x8xi1>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xi1>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8xi8>) outs(%[[E]] : tensor<4x8xi1>)
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: i1):
// CHECK-NEXT: %[[R:.*]] = arith.cmpi ult, %[[A]], %[[B]] : i8
// CHECK-NEXT: linalg.yield %[[R]] : i1
func.func @less_u8(%a: tensor<4x8xui8>, %b: tensor<8xui8>) -> tensor<4x8xi1> {
  %0 = ridge.less %a, %b : (tensor<4x8xui8>, tensor<8xui8>) -> tensor<4x8xi1>
  return %0 : tensor<4x8xi1>
}

// -----

// CHECK-LABEL: func @greater_equal_f32
// CHECK: arith.cmpf oge
func.func @greater_equal_f32(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %0 = ridge.greater_equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Where broadcasts all three operands.
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[F:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @select
// CHECK: linalg.generic {indexing_maps = [#[[C]], #[[T]], #[[F]], #[[T]]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @select(%c: tensor<2x1xi1>, %t: tensor<2x3xf32>, %f: tensor<f32>) -> tensor<2x3xf32> {
  %0 = ridge.select %c, %t, %f : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// f16 trigonometry computes in f32.
// CHECK-LABEL: func @sin_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: math.sin %{{.*}} : f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
func.func @sin_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = ridge.sin %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Round halves to even.
// CHECK-LABEL: func @round
// CHECK: math.roundeven %{{.*}} : f32
func.func @round(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ridge.round %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer Mod with Python semantics: a remsi (divisors 0 and -1 replaced by
// 1) moved into the divisor's range when the signs differ.
// CHECK-LABEL: func @mod_i32
// CHECK: %[[ISZERO:.*]] = arith.cmpi eq
// CHECK: %[[DIV:.*]] = arith.select %{{.*}}, %c1_i32
// CHECK: %[[REM:.*]] = arith.remsi %{{.*}}, %[[DIV]] : i32
// CHECK: arith.xori
// CHECK: %[[ADJ:.*]] = arith.addi %[[REM]], %[[DIV]] : i32
// CHECK: arith.select %{{.*}}, %[[ADJ]], %[[REM]] : i32
func.func @mod_i32(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xi32> {
  %0 = ridge.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// CHECK-LABEL: func @fmod_f32
// CHECK: arith.remf %{{.*}}, %{{.*}} : f32
func.func @fmod_f32(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
  %0 = ridge.mod %a, %b {fmod = true} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func @shift_right_u16
// CHECK: %[[W:.*]] = arith.constant 16 : i16
// CHECK: arith.cmpi uge, %{{.*}}, %[[W]] : i16
// CHECK: arith.shrui
func.func @shift_right_u16(%a: tensor<3xui16>, %b: tensor<3xui16>) -> tensor<3xui16> {
  %0 = ridge.bit_shift %a, %b {direction = "right"} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  return %0 : tensor<3xui16>
}

// -----

// CHECK-LABEL: func @is_nan
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpf uno, %[[X]], %[[X]] : f32
func.func @is_nan(%a: tensor<4xf32>) -> tensor<4xi1> {
  %0 = ridge.is_nan %a : tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func @not_and
// CHECK: arith.xori %{{.*}}, %true : i1
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
func.func @not_and(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %0 = ridge.not %a : tensor<4xi1>
  %1 = ridge.and %0, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %1 : tensor<4xi1>
}

// -----

// Integer Pow is straight-line square-and-multiply (no library call, so GPU
// kernels can use it too), with the truncated reciprocal for negative
// exponents.
// CHECK-LABEL: func @pow_i8
// CHECK-NOT: math.ipowi
// CHECK: arith.shrui
// CHECK: arith.muli
// CHECK: arith.cmpi slt
// CHECK: linalg.yield
func.func @pow_i8(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  %0 = ridge.pow %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Integer division cannot trap: divisors 0 and -1 are replaced by 1 and the
// lanes fixed up (x / 0 = 0, x / -1 = -x).
// CHECK-LABEL: func @div_i32
// CHECK: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[ISZERO:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : i32
// CHECK: %[[ISM1:.*]] = arith.cmpi eq, %[[Y]], %c-1_i32
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[ISZERO]], %[[ISM1]]
// CHECK: %[[D:.*]] = arith.select %[[UNSAFE]], %c1_i32, %[[Y]]
// CHECK: %[[Q:.*]] = arith.divsi %[[X]], %[[D]]
// CHECK: %[[NEG:.*]] = arith.subi
// CHECK: %[[Q2:.*]] = arith.select %[[ISM1]], %[[NEG]], %[[Q]]
// CHECK: arith.select %[[ISZERO]], %{{.*}}, %[[Q2]]
func.func @div_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = ridge.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Signed right shifts are arithmetic; out-of-range amounts (compared
// unsigned) give the sign.
// CHECK-LABEL: func @shift_right_i8
// CHECK: %[[W:.*]] = arith.constant 8 : i8
// CHECK: arith.cmpi uge, %{{.*}}, %[[W]] : i8
// CHECK: arith.shrsi
// CHECK: %[[L:.*]] = arith.constant 7 : i8
// CHECK: arith.shrsi %{{.*}}, %[[L]] : i8
// CHECK: arith.select
func.func @shift_right_i8(%a: tensor<3xi8>, %b: tensor<3xi8>) -> tensor<3xi8> {
  %0 = ridge.bit_shift %a, %b {direction = "right"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// numpy's floor mod on floats (fmod = 0).
// CHECK-LABEL: func @mod_f32
// CHECK: arith.remf %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpf olt
// CHECK: arith.xori
// CHECK: arith.addf
// CHECK: arith.select
func.func @mod_f32(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
  %0 = ridge.mod %a, %b : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func @bitwise_not_bitcast
// CHECK: %[[ONES:.*]] = arith.constant -1 : i16
// CHECK: arith.xori %{{.*}}, %[[ONES]] : i16
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.extui %{{.*}} : i1 to i8
func.func @bitwise_not_bitcast(%a: tensor<4xui16>, %p: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xui8>) {
  %0 = ridge.not %a : tensor<4xui16>
  %1 = ridge.bitcast %0 : tensor<4xui16> -> tensor<4xf16>
  %2 = ridge.bitcast %p : tensor<4xi1> -> tensor<4xui8>
  return %1, %2 : tensor<4xf16>, tensor<4xui8>
}

// -----

// Integer Abs is max(x, 0 - x) in arith: math.absi has no lowering on the CPU
// pipeline.
// CHECK-LABEL: func @abs_i64
// CHECK: ^bb0(%[[X:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[X]] : i64
// CHECK-NEXT: %[[ABS:.*]] = arith.maxsi %[[X]], %[[NEG]] : i64
// CHECK-NEXT: linalg.yield %[[ABS]] : i64
func.func @abs_i64(%a: tensor<4xi64>) -> tensor<4xi64> {
  %0 = ridge.abs %a : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Every elementwise op that takes integers lowers to arith alone: no math op
// is left for the CPU or the GPU back end to lower.
// CHECK-LABEL: func @integer_ops_i32
// CHECK-NOT: math.
// CHECK: return
func.func @integer_ops_i32(%a: tensor<6xi32>, %b: tensor<6xi32>, %c: tensor<6xi1>, %u: tensor<6xui32>)
    -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi32>,
        tensor<6xi64>, tensor<6xf32>, tensor<6xui32>, tensor<6xui32>) {
  %abs = ridge.abs %a : tensor<6xi32>
  %neg = ridge.neg %a : tensor<6xi32>
  %sign = ridge.sign %a : tensor<6xi32>
  %relu = ridge.relu %a : tensor<6xi32>
  %not = ridge.not %a : tensor<6xi32>
  %add = ridge.add %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %sub = ridge.sub %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %mul = ridge.mul %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %div = ridge.div %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %pow = ridge.pow %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %max = ridge.max %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %min = ridge.min %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %mod = ridge.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %fmod = ridge.mod %a, %b {fmod = true} : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %and = ridge.and %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %or = ridge.or %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %xor = ridge.xor %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %shl = ridge.bit_shift %a, %b {direction = "left"} : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %eq = ridge.equal %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %lt = ridge.less %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %le = ridge.less_equal %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %gt = ridge.greater %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %ge = ridge.greater_equal %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
  %sel = ridge.select %c, %a, %b : (tensor<6xi1>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %ext = ridge.cast %a : tensor<6xi32> -> tensor<6xi64>
  %flt = ridge.cast %a : tensor<6xi32> -> tensor<6xf32>
  %uabs = ridge.abs %u : tensor<6xui32>
  %ushr = ridge.bit_shift %u, %u {direction = "right"} : (tensor<6xui32>, tensor<6xui32>) -> tensor<6xui32>
  return %abs, %neg, %sign, %relu, %not, %add, %sub, %mul, %div, %pow, %max, %min, %mod, %fmod,
         %and, %or, %xor, %shl, %eq, %lt, %le, %gt, %ge, %sel, %ext, %flt, %uabs, %ushr
      : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi32>,
        tensor<6xi64>, tensor<6xf32>, tensor<6xui32>, tensor<6xui32>
}
