// RUN: ridge-opt %s -split-input-file -ridge-deallocate-after-last-use | FileCheck %s

// The block-end dealloc of ownership-based-buffer-deallocation is split: each
// buffer allocated in the block is freed right after its last use, through a
// view or inside a nested region included.

func.func private @kernel(memref<4xf32>, memref<4xf32>)

// CHECK-LABEL: func @chain
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: call @kernel(%{{.*}}, %[[A]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: call @kernel(%[[A]], %[[B]])
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[TRUE]])
// CHECK-NEXT: %[[C:.*]] = memref.alloc()
// CHECK-NEXT: %[[VIEW:.*]] = memref.subview %[[B]]
// CHECK: scf.for
// CHECK: memref.load %[[VIEW]]
// CHECK: }
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[TRUE]])
// CHECK-NEXT: call @kernel(%[[C]], %{{.*}})
// CHECK-NEXT: bufferization.dealloc (%[[C]] : memref<4xf32>) if (%[[TRUE]])
// CHECK-NEXT: return
func.func @chain(%x: memref<4xf32>, %y: memref<4xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  call @kernel(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = memref.alloc() : memref<4xf32>
  call @kernel(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  %c = memref.alloc() : memref<4xf32>
  %view = memref.subview %b[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %view[%i] : memref<2xf32, strided<[1]>>
    memref.store %v, %c[%i] : memref<4xf32>
  }
  call @kernel(%c, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  bufferization.dealloc (%a, %b, %c : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%true, %true, %true)
  return
}

// -----

// What may outlive the block stays in the block-end dealloc: a buffer whose
// ownership is not known statically, a function argument, a buffer that a
// terminator hands out or that a non-view op may return. An unused buffer is
// freed right after its allocation.

func.func private @wrap(memref<4xf32>) -> memref<4xf32>

// CHECK-LABEL: func @kept
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[UNUSED:.*]] = memref.alloc()
// CHECK-NEXT: bufferization.dealloc (%[[UNUSED]] : memref<4xf32>) if (%[[TRUE]])
// CHECK: %[[WRAPPED:.*]] = memref.alloc()
// CHECK: %[[DYN:.*]] = memref.alloc()
// CHECK: call @wrap(%[[WRAPPED]])
// CHECK-NEXT: bufferization.dealloc (%[[WRAPPED]], %[[DYN]], %arg0 : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%[[TRUE]], %arg1, %[[TRUE]])
// CHECK-NEXT: return
func.func @kept(%arg: memref<4xf32>, %owned: i1) -> memref<4xf32> {
  %true = arith.constant true
  %unused = memref.alloc() : memref<4xf32>
  %wrapped = memref.alloc() : memref<4xf32>
  %dyn = memref.alloc() : memref<4xf32>
  %r = call @wrap(%wrapped) : (memref<4xf32>) -> memref<4xf32>
  bufferization.dealloc (%unused, %wrapped, %dyn, %arg : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%true, %true, %owned, %true)
  return %r : memref<4xf32>
}

// -----

// A dealloc that retains values (its results are the retained values'
// ownership) is left to the simplification pass.

// CHECK-LABEL: func @retained
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: %{{.*}} = bufferization.dealloc (%[[A]] : memref<4xf32>) if (%{{.*}}) retain (%arg0 : memref<4xf32>)
func.func @retained(%x: memref<4xf32>) -> (memref<4xf32>, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %r = bufferization.dealloc (%a : memref<4xf32>) if (%true) retain (%x : memref<4xf32>)
  return %x, %r : memref<4xf32>, i1
}
