// RUN: ridge-opt %s --split-input-file --ridge-emit-model-abi --verify-diagnostics | FileCheck %s

// The descriptor of ModelAbi.h as constant globals: one per name (verbatim,
// NUL-terminated) and per dims array, the ridge_tensor_desc array
// {name, dtype, rank, dims} and the ridge_model_desc
// {abi_version, target, num_inputs, num_outputs, tensors, weights_file,
// num_weights, weights, weights_fingerprint, weights_bytes,
// device_weights_bytes, arena_bytes, peak_live_bytes, num_device_weights,
// device_weights, arena_zeroed_bytes}.

// CHECK-LABEL: llvm.func internal @main
// CHECK: llvm.func @ridge_model_run(%[[BUFS:.*]]: !llvm.ptr)
// CHECK:   %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0]
// CHECK:   %[[P0:.*]] = llvm.load %[[S0]]
// CHECK:   %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1]
// CHECK:   %[[P1:.*]] = llvm.load %[[S1]]
// CHECK:   %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2]
// CHECK:   %[[P2:.*]] = llvm.load %[[S2]]
// CHECK:   llvm.call @main(%[[P0]], %[[P1]], %[[P2]])
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_target("cpu\00")
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_name_0("x in\00")
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_dims_0(dense<[4, 64]> : tensor<2xi64>) {{.*}} : !llvm.array<2 x i64>
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_name_1("flag\00")
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_name_2("out\09put\00")
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_dims_2(dense<[4, 0]> : tensor<2xi64>)
// CHECK-NOT: @ridge_abi_dims_1
// CHECK:      llvm.mlir.global internal constant @ridge_abi_tensors() {{.*}} : !llvm.array<3 x struct<(ptr, i32, i32, ptr)>> {
// CHECK-DAG:    %[[N0:.*]] = llvm.mlir.addressof @ridge_abi_name_0
// CHECK-DAG:    %[[D0:.*]] = llvm.mlir.addressof @ridge_abi_dims_0
// CHECK-DAG:    %[[F32:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-DAG:    %[[R2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:        %[[T0A:.*]] = llvm.insertvalue %[[N0]], %{{.*}}[0]
// CHECK:        %[[T0B:.*]] = llvm.insertvalue %[[F32]], %[[T0A]][1]
// CHECK:        %[[T0C:.*]] = llvm.insertvalue %[[R2]], %[[T0B]][2]
// CHECK:        %[[T0:.*]] = llvm.insertvalue %[[D0]], %[[T0C]][3]
// CHECK:        llvm.insertvalue %[[T0]], %{{.*}}[0]
// The scalar has rank 0 and null dims.
// CHECK-DAG:    %[[I1:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-DAG:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:        llvm.insertvalue %[[I1]], %{{.*}}[1]
// CHECK:        llvm.insertvalue %[[NULL]], %{{.*}}[3]
// CHECK:        llvm.return
// Without a weights file: null file and table, no weights, zero fingerprint
// and size.
// CHECK:      llvm.mlir.global internal constant @ridge_abi_model() {{.*}} : !llvm.struct<(i32, ptr, i32, i32, ptr, ptr, i32, ptr, i64, i64, i64, i64, i64, i32, ptr, i64)> {
// CHECK-NEXT:   %[[VERSION:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT:   %[[TARGET:.*]] = llvm.mlir.addressof @ridge_abi_target
// CHECK-NEXT:   %[[NIN:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[NOUT:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[TENSORS:.*]] = llvm.mlir.addressof @ridge_abi_tensors
// CHECK-NEXT:   %[[NOFILE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:   %[[NW:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[NOTABLE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:   %[[FP:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:   %[[WB:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:        llvm.insertvalue %[[VERSION]], %{{.*}}[0]
// CHECK:        llvm.insertvalue %[[TARGET]], %{{.*}}[1]
// CHECK:        llvm.insertvalue %[[NIN]], %{{.*}}[2]
// CHECK:        llvm.insertvalue %[[NOUT]], %{{.*}}[3]
// CHECK:        llvm.insertvalue %[[TENSORS]], %{{.*}}[4]
// CHECK:        llvm.insertvalue %[[NOFILE]], %{{.*}}[5]
// CHECK:        llvm.insertvalue %[[NW]], %{{.*}}[6]
// CHECK:        llvm.insertvalue %[[NOTABLE]], %{{.*}}[7]
// CHECK:        llvm.insertvalue %[[FP]], %{{.*}}[8]
// CHECK:        llvm.insertvalue %[[WB]], %{{.*}}[9]
// CHECK:      llvm.func @ridge_model_describe() -> !llvm.ptr {
// CHECK:        %[[MODEL:.*]] = llvm.mlir.addressof @ridge_abi_model : !llvm.ptr
// CHECK:        llvm.return %[[MODEL]]
// CHECK-NOT:  ridge.model_abi
module attributes {ridge.model_abi = {target = "cpu",
    inputs = [{name = "x in", dtype = 3 : i32, shape = array<i64: 4, 64>},
              {name = "flag", dtype = 5 : i32, shape = array<i64>}],
    outputs = [{name = "out\09put", dtype = 10 : i32, shape = array<i64: 4, 0>}]}} {
  llvm.func @main(%x: !llvm.ptr, %flag: !llvm.ptr, %out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// With ridge-externalize-weights' description: the file name, a
// ridge_weight_desc {name, address, offset, bytes} per weight pointing at
// its address slot, and the fingerprint and size the file must carry.
// CHECK-LABEL: llvm.mlir.global internal @w0_address()
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_weights_file("m.weights\00")
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_weight_name_0("layer.w\00")
// CHECK:      llvm.mlir.global internal constant @ridge_abi_weights() {{.*}} : !llvm.array<1 x struct<(ptr, ptr, i64, i64)>> {
// CHECK-DAG:    %[[WN:.*]] = llvm.mlir.addressof @ridge_abi_weight_name_0
// CHECK-DAG:    %[[WD:.*]] = llvm.mlir.addressof @w0_address
// CHECK-DAG:    %[[WO:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-DAG:    %[[WS:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK:        llvm.insertvalue %[[WN]], %{{.*}}[0]
// CHECK:        llvm.insertvalue %[[WD]], %{{.*}}[1]
// CHECK:        llvm.insertvalue %[[WO]], %{{.*}}[2]
// CHECK:        llvm.insertvalue %[[WS]], %{{.*}}[3]
// CHECK:      llvm.mlir.global internal constant @ridge_abi_model()
// CHECK:        llvm.mlir.addressof @ridge_abi_tensors
// CHECK-NEXT:   %[[FILE:.*]] = llvm.mlir.addressof @ridge_abi_weights_file
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[TABLE:.*]] = llvm.mlir.addressof @ridge_abi_weights
// CHECK-NEXT:   %[[FP:.*]] = llvm.mlir.constant(-42 : i64) : i64
// CHECK-NEXT:   %[[BYTES:.*]] = llvm.mlir.constant(80 : i64) : i64
// CHECK:        llvm.insertvalue %[[FILE]], %{{.*}}[5]
// CHECK:        llvm.insertvalue %[[ONE]], %{{.*}}[6]
// CHECK:        llvm.insertvalue %[[TABLE]], %{{.*}}[7]
// CHECK:        llvm.insertvalue %[[FP]], %{{.*}}[8]
// CHECK:        llvm.insertvalue %[[BYTES]], %{{.*}}[9]
module attributes {ridge.model_abi = {target = "cpu", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.external_weights = {file = "m.weights", fingerprint = -42 : i64,
      bytes = 80 : i64, weights = [{name = "layer.w", global = @w0_address,
                                    offset = 64 : i64, bytes = 16 : i64}]}} {
  llvm.mlir.global internal @w0_address() : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func @main(%out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A GPU model (ridge-plan-device-memory's description): @main takes the
// device weights block and the arena after its tensors, and the stream it
// created becomes a last parameter, without its synchronization and
// destruction; the descriptor gets the sizes (the arena's zeroed bytes
// last) and a ridge_device_weight_desc {name, source, offset, bytes} per
// weight, whose source points at a constant holding the weight's address.
// CHECK-LABEL: llvm.func @launch(!llvm.ptr)
// CHECK: llvm.func internal @main(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[STREAM:.*]]: !llvm.ptr)
// CHECK-NOT: mgpuStreamCreate
// CHECK: llvm.call @launch(%[[STREAM]])
// CHECK-NOT: mgpuStream
// CHECK: llvm.return
// CHECK: llvm.func @ridge_model_run(%[[BUFS:.*]]: !llvm.ptr)
// CHECK-COUNT-4: llvm.getelementptr %[[BUFS]]
// CHECK: llvm.call @main(
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_device_weight_source_0() {{.*}} : !llvm.ptr {
// CHECK-DAG: llvm.mlir.global internal constant @ridge_abi_device_weight_name_0("__constant_0\00")
// CHECK:      llvm.mlir.global internal constant @ridge_abi_device_weights() {{.*}} : !llvm.array<1 x struct<(ptr, ptr, i64, i64)>>
// CHECK:      llvm.mlir.global internal constant @ridge_abi_model()
// CHECK-DAG:    llvm.mlir.constant(1280 : i64) : i64
// CHECK-DAG:    llvm.mlir.constant(4096 : i64) : i64
// CHECK-DAG:    llvm.mlir.constant(3072 : i64) : i64
// CHECK-DAG:    llvm.mlir.addressof @ridge_abi_device_weights
// CHECK-DAG:    %[[ZEROED:.*]] = llvm.mlir.constant(512 : i64) : i64
// CHECK:        llvm.insertvalue %[[ZEROED]], %{{.*}}[15]
// CHECK-NOT:  ridge.device_memory
module attributes {ridge.model_abi = {target = "sm_80", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.device_memory = {weights_bytes = 1280 : i64, arena_bytes = 4096 : i64,
      peak_live_bytes = 3072 : i64, zeroed_bytes = 512 : i64,
      weights = [{global = @__constant_0, offset = 0 : i64, bytes = 1024 : i64}]}} {
  llvm.mlir.global private constant @__constant_0(dense<1.0> : tensor<256xf32>) : !llvm.array<256 x f32>
  llvm.func @mgpuStreamCreate() -> !llvm.ptr
  llvm.func @mgpuStreamSynchronize(!llvm.ptr)
  llvm.func @mgpuStreamDestroy(!llvm.ptr)
  llvm.func @launch(!llvm.ptr)
  llvm.func @main(%out: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
    %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    llvm.call @launch(%s) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamSynchronize(%s) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamDestroy(%s) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Host code between kernels (a host read, a host loop) split the async
// region into two streams: both become the caller's stream; the
// synchronization before the host read stays, the one at the end goes.
// CHECK-LABEL: llvm.func @launch_twice(!llvm.ptr)
// CHECK: llvm.func internal @main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[S:.*]]: !llvm.ptr)
// CHECK-NEXT: llvm.call @launch_twice(%[[S]])
// CHECK-NEXT: llvm.call @mgpuStreamSynchronize(%[[S]])
// CHECK-NEXT: llvm.call @launch_twice(%[[S]])
// CHECK-NEXT: llvm.return
module attributes {ridge.model_abi = {target = "sm_80", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.device_memory = {weights_bytes = 0 : i64, arena_bytes = 0 : i64,
      peak_live_bytes = 0 : i64, weights = []}} {
  llvm.func @mgpuStreamCreate() -> !llvm.ptr
  llvm.func @mgpuStreamSynchronize(!llvm.ptr)
  llvm.func @mgpuStreamDestroy(!llvm.ptr)
  llvm.func @launch_twice(!llvm.ptr)
  llvm.func @main(%out: !llvm.ptr, %weights: !llvm.ptr, %arena: !llvm.ptr) {
    %s0 = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    llvm.call @launch_twice(%s0) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamSynchronize(%s0) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamDestroy(%s0) : (!llvm.ptr) -> ()
    %s1 = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    llvm.call @launch_twice(%s1) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamSynchronize(%s1) : (!llvm.ptr) -> ()
    llvm.call @mgpuStreamDestroy(%s1) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// The device weights block and the arena are arguments of a GPU model's
// @main.
module attributes {ridge.model_abi = {target = "sm_80", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.device_memory = {weights_bytes = 0 : i64, arena_bytes = 0 : i64,
      peak_live_bytes = 0 : i64, weights = []}} {
  // expected-error @+1 {{@main takes 1 buffers but 'ridge.model_abi' describes 1 tensors and 'ridge.device_memory' two device blocks}}
  llvm.func @main(%out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A weight must lie inside the device weights block.
// expected-error @+1 {{'ridge.device_memory' weight 0 must be {global = @symbol, offset, bytes} inside weights_bytes}}
module attributes {ridge.model_abi = {target = "sm_80", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.device_memory = {weights_bytes = 512 : i64, arena_bytes = 0 : i64,
      peak_live_bytes = 0 : i64,
      weights = [{global = @w, offset = 256 : i64, bytes = 1024 : i64}]}} {
  llvm.func @main(%out: !llvm.ptr, %w: !llvm.ptr, %a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// The zeroed bytes lie in the arena.
// expected-error @+1 {{'ridge.device_memory' has 'zeroed_bytes' that is not a size at most 'arena_bytes'}}
module attributes {ridge.model_abi = {target = "sm_80", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.device_memory = {weights_bytes = 0 : i64, arena_bytes = 256 : i64,
      peak_live_bytes = 0 : i64, zeroed_bytes = 512 : i64, weights = []}} {
  llvm.func @main(%out: !llvm.ptr, %w: !llvm.ptr, %a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A weight's slot must be a writable pointer: a constant one would be folded
// by LLVM and never see the runtime's address.
// expected-error @+1 {{weight 'w' names @w0, which is no writable pointer llvm.mlir.global (the weight's address slot)}}
module attributes {ridge.model_abi = {target = "cpu", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.external_weights = {file = "m.weights", fingerprint = 1 : i64,
      bytes = 80 : i64, weights = [{name = "w", global = @w0,
                                    offset = 64 : i64, bytes = 16 : i64}]}} {
  llvm.mlir.global internal constant @w0(dense<0.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.func @main(%out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.external_weights' weight 0 ('w') does not fit the file after the previous one}}
module attributes {ridge.model_abi = {target = "cpu", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 4>}]},
    ridge.external_weights = {file = "m.weights", fingerprint = 1 : i64,
      bytes = 70 : i64, weights = [{name = "w", global = @w0_address,
                                    offset = 64 : i64, bytes = 16 : i64}]}} {
  llvm.mlir.global internal @w0_address() : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func @main(%out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{no LLVM function @main}}
module attributes {ridge.model_abi = {target = "cpu", inputs = [], outputs = []}} {
}

// -----

// expected-error @+1 {{'ridge.model_abi' attribute is missing; run ridge-attach-model-abi}}
module {
  llvm.func @main(%in: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.model_abi' must be a dictionary with a non-empty 'target' string and 'inputs' and 'outputs' arrays, got "ridgeline-model 1"}}
module attributes {ridge.model_abi = "ridgeline-model 1"} {
  llvm.func @main(%in: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.model_abi' describes no outputs}}
module attributes {ridge.model_abi = {target = "cpu", inputs = [], outputs = []}} {
  llvm.func @main() {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.model_abi' output 0 ('y') has dtype 18, which is not a ridge_dtype of ModelAbi.h}}
module attributes {ridge.model_abi = {target = "cpu", inputs = [],
    outputs = [{name = "y", dtype = 18 : i32, shape = array<i64: 2>}]}} {
  llvm.func @main(%out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.model_abi' input 0 must be {name = non-empty string, dtype = integer, shape = array<i64>}}}
module attributes {ridge.model_abi = {target = "cpu",
    inputs = [{name = "", dtype = 3 : i32, shape = array<i64: 2>}],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 2>}]}} {
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{'ridge.model_abi' input 0 ('x') has a negative dim in array<i64: -1, 2>}}
module attributes {ridge.model_abi = {target = "cpu",
    inputs = [{name = "x", dtype = 3 : i32, shape = array<i64: -1, 2>}],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 2>}]}} {
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
    llvm.return
  }
}

// -----

module attributes {ridge.model_abi = {target = "cpu", inputs = [],
    outputs = [{name = "y", dtype = 3 : i32, shape = array<i64: 2>}]}} {
  // expected-error @+1 {{@main takes 2 buffers but 'ridge.model_abi' describes 1 tensors}}
  llvm.func @main(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
}
