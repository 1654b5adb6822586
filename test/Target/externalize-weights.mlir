// RUN: ridge-opt %s --split-input-file --ridge-externalize-weights=file=m.weights --verify-diagnostics | FileCheck %s

// Each global initialized from a dense_resource blob becomes a null pointer
// slot, and each use of its address a load from the slot; the description
// keeps each blob, its 64-byte aligned offset after the 32-byte header and
// its size, in module order. Inline constants stay in the object.
// CHECK: module attributes {ridge.external_weights = {bytes = 136 : i64, file = "m.weights", fingerprint = {{-?[0-9]+}} : i64, weights = [
// CHECK-SAME: {bytes = 16 : i64, data = dense_resource<w0> : tensor<4xf32>, global = @w0_address, name = "w0", offset = 64 : i64},
// CHECK-SAME: {bytes = 8 : i64, data = dense_resource<layer.w1> : tensor<2xf32>, global = @w1_address, name = "layer.w1", offset = 128 : i64}]}}
// CHECK-NOT:  llvm.mlir.global internal constant @w0
// CHECK:      llvm.mlir.global internal @w0_address() {{.*}}: !llvm.ptr {
// CHECK-NEXT:   %[[Z0:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:   llvm.return %[[Z0]]
// CHECK:      llvm.mlir.global internal @w1_address() {{.*}}: !llvm.ptr {
// CHECK:      llvm.mlir.global internal constant @small(dense<1.000000e+00> : tensor<2xf32>)
// CHECK:      llvm.func @main(%[[OUT:.*]]: !llvm.ptr)
// CHECK-NEXT:   %[[SLOT:.*]] = llvm.mlir.addressof @w0_address : !llvm.ptr
// CHECK-NEXT:   %[[W0:.*]] = llvm.load %[[SLOT]] {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[V:.*]] = llvm.load %[[W0]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[SMALL:.*]] = llvm.mlir.addressof @small
// CHECK-NEXT:   llvm.load %[[SMALL]]
module {
  llvm.mlir.global internal constant @w0(dense_resource<w0> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.mlir.global internal constant @w1(dense_resource<layer.w1> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.mlir.global internal constant @small(dense<1.0> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.func @main(%out: !llvm.ptr) {
    %0 = llvm.mlir.addressof @w0 : !llvm.ptr
    %1 = llvm.load %0 : !llvm.ptr -> f32
    %2 = llvm.mlir.addressof @small : !llvm.ptr
    %3 = llvm.load %2 : !llvm.ptr -> f32
    %4 = llvm.fadd %1, %3 : f32
    llvm.store %4, %out : f32, !llvm.ptr
    llvm.return
  }
}
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F000000400000404000008040",
      layer.w1: "0x040000000000A0400000C040"
    }
  }
#-}

// -----

// A module without weight blobs gets no description.
// CHECK-LABEL: module {
// CHECK-NOT: ridge.external_weights
module {
  llvm.mlir.global internal constant @small(dense<1.0> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
}

// -----

module {
  // expected-error @+1 {{the bytes of 'gone' are not loaded}}
  llvm.mlir.global internal constant @w(dense_resource<gone> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
}

// -----

// The address of a weight taken in another global's initializer has no
// function to load it in.
module {
  llvm.mlir.global internal constant @w(dense_resource<w> : tensor<1xf32>) {addr_space = 0 : i32} : !llvm.array<1 x f32>
  llvm.mlir.global internal constant @table() {addr_space = 0 : i32} : !llvm.ptr {
    // expected-error @+1 {{the address of 'w' is used outside a function, where it cannot be loaded from a slot}}
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F"
    }
  }
#-}
