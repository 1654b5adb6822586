// RUN: ridge-opt %s -split-input-file -ridge-move-scale-reductions-to-producers -verify-diagnostics | FileCheck %s

// An fp8 consumer's scale reduction of an argument that a tensor-core
// kernel returns (its epilogue's result, here through a reshape in @main)
// moves into that kernel: the producer returns max |x| of its result as one
// more 0-d result, the reduction and its zero fill leave the consumer, and
// the consumer's quantizing op and epilogue read the new argument.
// CHECK-LABEL: func.func @main
// CHECK:   %[[P:.*]]:2 = call @producer(%{{.*}}) : (tensor<64x96xf32>) -> (tensor<64x128xf32>, tensor<f32>)
// CHECK:   %[[R:.*]] = tensor.expand_shape %[[P]]#0
// CHECK:   call @consumer(%[[R]], %[[P]]#1) : (tensor<1x64x128xf32>, tensor<f32>) -> tensor<1x64x32xf32>
// CHECK-LABEL: func.func private @producer
// CHECK-SAME: -> (tensor<64x128xf32>, tensor<f32>)
// CHECK:   %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>) -> tensor<f32>
// CHECK:   %[[EPI:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK:     math.tanh
// CHECK:   %[[AMAX:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[EPI]] : tensor<64x128xf32>) outs(%[[ZERO]] : tensor<f32>) attrs = {ridge.kernel_config =
// CHECK:     math.absf
// CHECK:     arith.maximumf
// CHECK:   return %[[EPI]], %[[AMAX]] : tensor<64x128xf32>, tensor<f32>
// CHECK-LABEL: func.func private @consumer
// CHECK-SAME: (%[[X:.*]]: tensor<1x64x128xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NOT: math.absf
// CHECK:   linalg.generic {{.*}} ins(%[[X]], %[[S]] : tensor<1x64x128xf32>, tensor<f32>)
// CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<1x64x32xf32>, tensor<f32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#s3 = affine_map<(d0, d1, d2) -> ()>
#qa = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#qb = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#qc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @main(%x: tensor<64x96xf32>) -> tensor<1x64x32xf32> {
  %0 = call @producer(%x) : (tensor<64x96xf32>) -> tensor<64x128xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [1, 64, 128] : tensor<64x128xf32> into tensor<1x64x128xf32>
  %2 = call @consumer(%1) : (tensor<1x64x128xf32>) -> tensor<1x64x32xf32>
  return %2 : tensor<1x64x32xf32>
}
func.func private @producer(%x: tensor<64x96xf32>) -> tensor<64x128xf32> attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<96x128xf32>
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x96xf32>, tensor<96x128xf32>) outs(%f : tensor<64x128xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %rt = arith.truncf %r : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %rt : bf16 to f32
    %m = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) attrs = {ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  ^bb0(%v: f32, %o: f32):
    %h = math.tanh %v : f32
    linalg.yield %h : f32
  } -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
func.func private @consumer(%x: tensor<1x64x128xf32>) -> tensor<1x64x32xf32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<32x128xf8E4M3FN>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id3, #s3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%x : tensor<1x64x128xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  %eq = tensor.empty() : tensor<1x64x128xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %amax : tensor<1x64x128xf32>, tensor<f32>) outs(%eq : tensor<1x64x128xf8E4M3FN>) {
  ^bb0(%in: f32, %m: f32, %o: f8E4M3FN):
    %y = arith.divf %in, %m : f32
    %t = arith.truncf %y : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<1x64x128xf8E4M3FN>
  %ea = tensor.empty() : tensor<1x64x32xf32>
  %fa = linalg.fill ins(%zero : f32) outs(%ea : tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
  %p = linalg.generic {indexing_maps = [#qa, #qb, #qc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %w : tensor<1x64x128xf8E4M3FN>, tensor<32x128xf8E4M3FN>) outs(%fa : tensor<1x64x32xf32>) {
  ^bb0(%l: f8E4M3FN, %r: f8E4M3FN, %acc: f32):
    %le = arith.extf %l : f8E4M3FN to f32
    %re = arith.extf %r : f8E4M3FN to f32
    %m = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32xf32>
  %r = linalg.generic {indexing_maps = [#id3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %amax : tensor<1x64x32xf32>, tensor<f32>) outs(%ea : tensor<1x64x32xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %y = arith.mulf %v, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x64x32xf32>
  return %r : tensor<1x64x32xf32>
}

// -----

// Two consumers of one result share one amax (the producer's result is
// reduced once); a reduction of a graph input, and one of a kernel's result
// that is not a contraction kernel (no `mma_tile` or `gemv` in its config),
// stay where they are.
// CHECK-LABEL: func.func @main
// CHECK:   %[[P:.*]]:2 = call @gemv(%{{.*}}) : (tensor<2x96xf32>) -> (tensor<2x64xf32>, tensor<f32>)
// CHECK:   call @amax_user(%[[P]]#0, %[[P]]#1) : (tensor<2x64xf32>, tensor<f32>) -> tensor<f32>
// CHECK:   call @amax_user_2(%[[P]]#0, %[[P]]#1) : (tensor<2x64xf32>, tensor<f32>) -> tensor<f32>
// CHECK:   %[[ROW:.*]] = call @row_kernel(%{{.*}}) : (tensor<2x96xf32>) -> tensor<2x96xf32>
// CHECK:   call @amax_user_3(%[[ROW]]) : (tensor<2x96xf32>) -> tensor<f32>
// CHECK:   call @amax_user_4(%{{.*}}) : (tensor<2x96xf32>) -> tensor<f32>
// CHECK-LABEL: func.func private @gemv
// CHECK-SAME: -> (tensor<2x64xf32>, tensor<f32>)
// CHECK-COUNT-1: math.absf
// CHECK-NOT: math.absf
// CHECK-LABEL: func.func private @amax_user(
// CHECK-NOT: math.absf
// CHECK-LABEL: func.func private @amax_user_2(
// CHECK-NOT: math.absf
// CHECK-LABEL: func.func private @amax_user_3(
// CHECK: math.absf
// CHECK-LABEL: func.func private @amax_user_4(
// CHECK: math.absf
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @main(%x: tensor<2x96xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = call @gemv(%x) : (tensor<2x96xf32>) -> tensor<2x64xf32>
  %1 = call @amax_user(%0) : (tensor<2x64xf32>) -> tensor<f32>
  %2 = call @amax_user_2(%0) : (tensor<2x64xf32>) -> tensor<f32>
  %3 = call @row_kernel(%x) : (tensor<2x96xf32>) -> tensor<2x96xf32>
  %4 = call @amax_user_3(%3) : (tensor<2x96xf32>) -> tensor<f32>
  %5 = call @amax_user_4(%x) : (tensor<2x96xf32>) -> tensor<f32>
  return %1, %2, %4, %5 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
func.func private @gemv(%x: tensor<2x96xf32>) -> tensor<2x64xf32> attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<64x96xf32>
  %e = tensor.empty() : tensor<2x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64xf32>) -> tensor<2x64xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x96xf32>, tensor<64x96xf32>) outs(%f : tensor<2x64xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %m = arith.mulf %l, %r : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<2x64xf32>
  return %p : tensor<2x64xf32>
}
func.func private @row_kernel(%x: tensor<2x96xf32>) -> tensor<2x96xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %e = tensor.empty() : tensor<2x96xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x96xf32>) outs(%e : tensor<2x96xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<2x96xf32>
  return %y : tensor<2x96xf32>
}
func.func private @amax_user(%x: tensor<2x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @amax_user_2(%x: tensor<2x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @amax_user_3(%x: tensor<2x96xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x96xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @amax_user_4(%x: tensor<2x96xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x96xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A producer with a malformed config is reported where it is.
func.func @main(%x: tensor<2x96xf32>) -> tensor<f32> {
  %0 = call @bad_config(%x) : (tensor<2x96xf32>) -> tensor<2x96xf32>
  %1 = call @amax_user(%0) : (tensor<2x96xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
// expected-error @+1 {{'ridge.kernel_config'}}
func.func private @bad_config(%x: tensor<2x96xf32>) -> tensor<2x96xf32> attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64}} {
  return %x : tensor<2x96xf32>
}
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func private @amax_user(%x: tensor<2x96xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x96xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A row kernel (an scf.forall over rows, each row one elementwise op's)
// returns the amax of its result too, marked for
// ridge-fold-result-amax-into-row-loops; a row kernel whose rows come
// from an op of two results keeps its consumer's reduction.
// CHECK-LABEL: func.func @main
// CHECK:   %[[P:.*]]:2 = call @rows(%{{.*}}) : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<f32>)
// CHECK:   call @amax_user(%[[P]]#0, %[[P]]#1)
// CHECK:   %[[Q:.*]]:2 = call @two_results(%{{.*}}) : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
// CHECK:   call @amax_user_2(%[[Q]]#0) : (tensor<4x64xf32>) -> tensor<f32>
// CHECK-LABEL: func.func private @rows
// CHECK:   %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<f32>
// CHECK:   %[[R:.*]] = scf.forall
// CHECK:   %[[AMAX:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<4x64xf32>) outs(%[[ZERO]] : tensor<f32>) attrs = {ridge.result_amax}
// CHECK:   return %[[R]], %[[AMAX]]
// CHECK-LABEL: func.func private @two_results
// CHECK-NOT: math.absf
// CHECK-LABEL: func.func private @amax_user_2
// CHECK: math.absf
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @main(%x: tensor<4x64xf32>) -> (tensor<f32>, tensor<f32>, tensor<4x64xf32>) {
  %0 = call @rows(%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %1 = call @amax_user(%0) : (tensor<4x64xf32>) -> tensor<f32>
  %2:2 = call @two_results(%x) : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  %3 = call @amax_user_2(%2#0) : (tensor<4x64xf32>) -> tensor<f32>
  return %1, %3, %2#1 : tensor<f32>, tensor<f32>, tensor<4x64xf32>
}
func.func private @rows(%x: tensor<4x64xf32>) -> tensor<4x64xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 128 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %e = tensor.empty() : tensor<4x64xf32>
  %r = scf.forall (%i) in (4) shared_outs(%o = %e) -> (tensor<4x64xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %out = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x64xf32>) outs(%out : tensor<1x64xf32>) {
    ^bb0(%v: f32, %w: f32):
      %t = arith.negf %v : f32
      linalg.yield %t : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  }
  return %r : tensor<4x64xf32>
}
func.func private @two_results(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 128 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %e = tensor.empty() : tensor<4x64xf32>
  %r:2 = scf.forall (%i) in (4) shared_outs(%o = %e, %p = %e) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
    %in = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %out = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %n:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x64xf32>) outs(%out, %out : tensor<1x64xf32>, tensor<1x64xf32>) {
    ^bb0(%v: f32, %w: f32, %w2: f32):
      %t = arith.negf %v : f32
      linalg.yield %t, %v : f32, f32
    } -> (tensor<1x64xf32>, tensor<1x64xf32>)
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n#0 into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
      tensor.parallel_insert_slice %n#1 into %p[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  }
  return %r#0, %r#1 : tensor<4x64xf32>, tensor<4x64xf32>
}
func.func private @amax_user(%x: tensor<4x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @amax_user_2(%x: tensor<4x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// The one-pass tensor-core attention returns the amax of its output too
// (ridge-lower-flash-attention folds it in as it stores O); a split-key
// attention keeps its consumer's reduction.
// CHECK-LABEL: func.func @main
// CHECK:   %[[A:.*]]:2 = call @attention(%{{.*}}) : (tensor<1x1x64x64xf32>) -> (tensor<1x1x64x64xf32>, tensor<f32>)
// CHECK:   call @amax_user(%[[A]]#0, %[[A]]#1)
// CHECK:   %[[S:.*]] = call @split_attention(%{{.*}}) : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
// CHECK:   call @amax_user_2(%[[S]]) : (tensor<1x1x64x64xf32>) -> tensor<f32>
// CHECK-LABEL: func.func private @attention
// CHECK:   %[[O:.*]] = linalg.generic
// CHECK:   %[[AMAX:.*]] = linalg.generic {{.*}} ins(%[[O]] : tensor<1x1x64x64xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: ridge.result_amax
// CHECK:   return %[[O]], %[[AMAX]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#s = affine_map<(d0, d1, d2, d3) -> ()>
func.func @main(%x: tensor<1x1x64x64xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = call @attention(%x) : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %1 = call @amax_user(%0) : (tensor<1x1x64x64xf32>) -> tensor<f32>
  %2 = call @split_attention(%x) : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %3 = call @amax_user_2(%2) : (tensor<1x1x64x64xf32>) -> tensor<f32>
  return %1, %3 : tensor<f32>, tensor<f32>
}
func.func private @attention(%x: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %e = tensor.empty() : tensor<1x1x64x64xf32>
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x1x64x64xf32>) outs(%e : tensor<1x1x64x64xf32>) {
  ^bb0(%v: f32, %w: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}
func.func private @split_attention(%x: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_splits = 4 : i64, attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %e = tensor.empty() : tensor<1x1x64x64xf32>
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x1x64x64xf32>) outs(%e : tensor<1x1x64x64xf32>) {
  ^bb0(%v: f32, %w: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}
func.func private @amax_user(%x: tensor<1x1x64x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<1x1x64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @amax_user_2(%x: tensor<1x1x64x64xf32>) -> tensor<f32> attributes {ridge.kernel = "contraction"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%x : tensor<1x1x64x64xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
