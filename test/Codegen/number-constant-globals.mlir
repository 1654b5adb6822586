// RUN: ridge-opt %s -ridge-number-constant-globals | FileCheck %s

// Bufferized constants are renamed by first use in the module and moved to
// its front in that order, whatever order bufferization created them in;
// other globals keep their names.
// CHECK: memref.global @weights : memref<2xf32>
// CHECK-NEXT: memref.global "private" constant @__constant_0 : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-NEXT: memref.global "private" constant @__constant_1 : memref<4xf32> = dense<3.000000e+00>
// CHECK-NEXT: memref.global "private" constant @__constant_2 : memref<8xi8>
// CHECK-LABEL: func.func private @k0
// CHECK: memref.get_global @__constant_0 : memref<2xf32>
// CHECK: memref.get_global @weights
// CHECK-LABEL: func.func private @k1
// CHECK: memref.get_global @__constant_1 : memref<4xf32>
// CHECK: memref.get_global @__constant_0 : memref<2xf32>
memref.global @weights : memref<2xf32> = dense<0.0>
memref.global "private" constant @__constant_8xi8 : memref<8xi8> = dense<0>
memref.global "private" constant @__constant_4xf32_1 : memref<4xf32> = dense<3.0>
func.func private @k0() attributes {ridge.kernel = "pointwise"} {
  %0 = memref.get_global @__constant_2xf32_2 : memref<2xf32>
  %1 = memref.get_global @weights : memref<2xf32>
  return
}
func.func private @k1() attributes {ridge.kernel = "pointwise"} {
  %0 = memref.get_global @__constant_4xf32_1 : memref<4xf32>
  %1 = memref.get_global @__constant_2xf32_2 : memref<2xf32>
  return
}
memref.global "private" constant @__constant_2xf32_2 : memref<2xf32> = dense<[1.0, 2.0]>
