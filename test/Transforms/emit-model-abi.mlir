// RUN: ridge-opt %s --split-input-file --ridge-emit-model-abi --verify-diagnostics | FileCheck %s

// CHECK: llvm.func internal @main
// CHECK: llvm.func @ridge_model_run(%[[BUFS:.*]]: !llvm.ptr)
// CHECK:   %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0]
// CHECK:   %[[P0:.*]] = llvm.load %[[S0]]
// CHECK:   %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1]
// CHECK:   %[[P1:.*]] = llvm.load %[[S1]]
// CHECK:   llvm.call @main(%[[P0]], %[[P1]])
// CHECK: llvm.mlir.global internal constant @ridge_manifest_text("ridgeline-model 1\0Atarget cpu\0A\00")
// CHECK: llvm.func @ridge_model_manifest() -> !llvm.ptr
module attributes {ridge.manifest = "ridgeline-model 1\0Atarget cpu\0A"} {
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{no LLVM function @main}}
module attributes {ridge.manifest = "x"} {
}

// -----

// expected-error @+1 {{has no 'ridge.manifest' attribute}}
module {
  llvm.func @main(%in: !llvm.ptr) {
    llvm.return
  }
}
