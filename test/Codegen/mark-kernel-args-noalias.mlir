// RUN: ridge-opt %s -split-input-file -ridge-mark-kernel-args-noalias | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-mark-kernel-args-noalias -ridge-mark-kernels-noinline -convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// A kernel called with a fresh allocation for its output and the caller's
// input: both buffers differ, so both arguments are noalias, and func-to-llvm
// carries the mark onto the bare pointers.

// CHECK-LABEL: func.func private @k0
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias})
// LLVM-LABEL: llvm.func @k0
// LLVM-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias})
func.func private @k0(%in: memref<4xf32>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%c0] : memref<4xf32>
  memref.store %v, %out[%c0] : memref<4xf32>
  return
}

func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  call @k0(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.copy %a, %y : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// The same buffer passed twice is fine while the kernel only reads it; a
// view of the written buffer is not, nor are two arguments of the caller
// (the caller's caller may pass one buffer for both).

// CHECK-LABEL: func.func private @reads_twice
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias})
func.func private @reads_twice(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  linalg.add ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// CHECK-LABEL: func.func private @overlapping
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<2xf32, strided<[1]>>, %{{[a-z0-9]+}}: memref<4xf32>)
// CHECK-NOT: llvm.noalias
// CHECK-SAME: {
func.func private @overlapping(%in: memref<2xf32, strided<[1]>>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%c0] : memref<2xf32, strided<[1]>>
  memref.store %v, %out[%c0] : memref<4xf32>
  return
}

// CHECK-LABEL: func.func private @caller_args
// CHECK-NOT: llvm.noalias
// CHECK-SAME: {
func.func private @caller_args(%in: memref<4xf32>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %in[%c0] : memref<4xf32>
  memref.store %v, %out[%c0] : memref<4xf32>
  return
}

func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  call @reads_twice(%x, %x, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %view = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  call @overlapping(%view, %a) : (memref<2xf32, strided<[1]>>, memref<4xf32>) -> ()
  call @caller_args(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A kernel whose address is taken, or a public one, may be called with
// anything: nothing is marked.

// CHECK-LABEL: func.func private @address_taken
// CHECK-NOT: llvm.noalias
// CHECK-SAME: {
func.func private @address_taken(%in: memref<4xf32>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  return
}

// CHECK-LABEL: func.func @public_kernel
// CHECK-NOT: llvm.noalias
// CHECK-SAME: {
func.func @public_kernel(%in: memref<4xf32>, %out: memref<4xf32>) attributes {ridge.kernel = "pointwise"} {
  return
}

func.func @main(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %f = func.constant @address_taken : (memref<4xf32>, memref<4xf32>) -> ()
  call @address_taken(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  call @public_kernel(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %a : memref<4xf32>
  return
}
