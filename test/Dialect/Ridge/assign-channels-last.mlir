// RUN: ridge-opt %s -split-input-file -ridge-assign-channels-last=remarks=true -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-attach-target=chip=cpu -ridge-assign-channels-last | FileCheck %s --check-prefix=CPU

// A residual block on tensor cores (bf16, 32 channels: four 16-byte pieces
// of them): both convolutions compute channels-last; the activations stay
// channels-last from one to the next, through the ReLUs and the residual
// add, so one transpose enters the block and one leaves it.
// CHECK-LABEL: func @residual_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x32x16x16xf32>, %[[W1:.*]]: tensor<32x32x3x3xf32>, %[[W2:.*]]: tensor<32x32x3x3xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[XL:.*]] = ridge.transpose %[[X]], [0, 2, 3, 1] {ridge.layout_transpose} : tensor<1x32x16x16xf32> -> tensor<1x16x16x32xf32>
// CHECK: %[[W1L:.*]] = ridge.transpose %[[W1]], [0, 2, 3, 1] {ridge.layout_transpose} : tensor<32x32x3x3xf32> -> tensor<32x3x3x32xf32>
// CHECK: %[[C1:.*]] = ridge.conv %[[XL]], %[[W1L]], %[[B]] {channels_last, {{.*}}ridge.precision = "bf16"{{.*}}} : (tensor<1x16x16x32xf32>, tensor<32x3x3x32xf32>, tensor<32xf32>) -> tensor<1x16x16x32xf32>
// CHECK: %[[R1:.*]] = ridge.relu %[[C1]] : tensor<1x16x16x32xf32>
// CHECK: %[[W2L:.*]] = ridge.transpose %[[W2]], [0, 2, 3, 1]
// CHECK: %[[C2:.*]] = ridge.conv %[[R1]], %[[W2L]] {channels_last, {{.*}}} : (tensor<1x16x16x32xf32>, tensor<32x3x3x32xf32>) -> tensor<1x16x16x32xf32>
// CHECK: %[[S:.*]] = ridge.add %[[C2]], %[[R1]] : (tensor<1x16x16x32xf32>, tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
// CHECK: %[[R2:.*]] = ridge.relu %[[S]] : tensor<1x16x16x32xf32>
// CHECK: %[[Y:.*]] = ridge.transpose %[[R2]], [0, 3, 1, 2] {ridge.layout_transpose} : tensor<1x16x16x32xf32> -> tensor<1x32x16x16xf32>
// CHECK-NOT: ridge.transpose
// CHECK: return %[[Y]]
// CPU-LABEL: func @residual_block
// CPU-NOT: channels_last
// CPU-NOT: ridge.transpose
// CPU: return
func.func @residual_block(%x: tensor<1x32x16x16xf32>, %w1: tensor<32x32x3x3xf32>, %w2: tensor<32x32x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x16x16xf32> {
  %c1 = ridge.conv %x, %w1, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %r1 = ridge.relu %c1 : tensor<1x32x16x16xf32>
  %c2 = ridge.conv %r1, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  %s = ridge.add %c2, %r1 : (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r2 = ridge.relu %s : tensor<1x32x16x16xf32>
  return %r2 : tensor<1x32x16x16xf32>
}

// -----

// Constant weights are permuted at compile time into a new resource: w[0,
// c, 0, kw] = 2c + kw becomes w'[0, 0, kw, c], so w' reads 0, 2, ..., 14
// then 1, 3, ..., 15. A strided convolution (tf32: 4 channels to a piece)
// with a broadcast scalar after it: the scalar add happens channels-last.
// Its one output channel makes the transpose back a reshape, a view.
// CHECK-LABEL: func @constant_weights
// CHECK: %[[W:.*]] = ridge.constant dense_resource<weight.hwc> : tensor<1x1x2x8xf32>
// CHECK: %[[C:.*]] = ridge.conv %{{.*}}, %[[W]] {channels_last, {{.*}}strides = array<i64: 2, 2>} : (tensor<2x6x6x8xf32>, tensor<1x1x2x8xf32>) -> tensor<2x3x3x1xf32>
// CHECK: %[[A:.*]] = ridge.add %[[C]], %{{.*}} : (tensor<2x3x3x1xf32>, tensor<1x1x1x1xf32>) -> tensor<2x3x3x1xf32>
// CHECK: ridge.reshape %[[A]] : tensor<2x3x3x1xf32> -> tensor<2x1x3x3xf32>
// CHECK: weight.hwc: "0x040000000000000000000040000080400000C040000000410000204100004041000060410000803F000040400000A0400000E04000001041000030410000504100007041"
// CPU-LABEL: func @constant_weights
// CPU-NOT: channels_last
func.func @constant_weights(%x: tensor<2x8x6x6xf32>) -> tensor<2x1x3x3xf32> {
  %w = ridge.constant dense<[[[[0.0, 1.0]], [[2.0, 3.0]], [[4.0, 5.0]], [[6.0, 7.0]], [[8.0, 9.0]], [[10.0, 11.0]], [[12.0, 13.0]], [[14.0, 15.0]]]]> : tensor<1x8x1x2xf32>
  %one = ridge.constant dense<1.0> : tensor<1x1x1x1xf32>
  %c = ridge.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 1>, dilations = array<i64: 1, 1>, ridge.precision = "tf32"} : (tensor<2x8x6x6xf32>, tensor<1x8x1x2xf32>) -> tensor<2x1x3x3xf32>
  %a = ridge.add %c, %one : (tensor<2x1x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x3x3xf32>
  return %a : tensor<2x1x3x3xf32>
}

// -----

// An operand read channels-second (a graph input) keeps the transpose
// before the add; the pooling of the sum stays channels-second with it.
// CHECK-LABEL: func @channels_second_reader
// CHECK: %[[C:.*]] = ridge.conv {{.*}}channels_last
// CHECK: %[[T:.*]] = ridge.transpose %[[C]], [0, 3, 1, 2]
// CHECK: %[[A:.*]] = ridge.add %[[T]], %arg2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// CHECK: ridge.pool %[[A]]
func.func @channels_second_reader(%x: tensor<1x16x8x8xf32>, %w: tensor<4x16x1x1xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %c = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "fp16"} : (tensor<1x16x8x8xf32>, tensor<4x16x1x1xf32>) -> tensor<1x4x8x8xf32>
  %a = ridge.add %c, %y : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = ridge.pool %a {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %p : tensor<1x4x4x4xf32>
}

// -----

// Poolings of a channels-last result compute channels-last: a max pool
// between two convolutions (no transpose left between them) and a global
// average pool whose [1, 1, 1, C] result is a view of [1, C, 1, 1] (a
// reshape, not a transpose); the per-channel gate computed from it
// multiplies the activation channels-last. The indices form of max pooling
// stays channels-second.
// CHECK-LABEL: func @poolings
// CHECK: %[[C1:.*]] = ridge.conv {{.*}}channels_last{{.*}} -> tensor<1x8x8x16xf32>
// CHECK: %[[P:.*]] = ridge.pool %[[C1]] {channels_last, {{.*}}kind = "max"{{.*}}} : tensor<1x8x8x16xf32> -> tensor<1x4x4x16xf32>
// CHECK: %[[C2:.*]] = ridge.conv %[[P]], {{.*}}channels_last{{.*}} -> tensor<1x4x4x16xf32>
// CHECK: %[[T:.*]] = ridge.transpose %[[C2]], [0, 3, 1, 2] {ridge.layout_transpose}
// CHECK: %[[G:.*]] = ridge.pool %[[C2]] {channels_last, {{.*}}kind = "avg"{{.*}}} : tensor<1x4x4x16xf32> -> tensor<1x1x1x16xf32>
// CHECK: %[[GR:.*]] = ridge.reshape %[[G]] : tensor<1x1x1x16xf32> -> tensor<1x16x1x1xf32>
// CHECK: %[[S:.*]] = ridge.sigmoid %[[G]] : tensor<1x1x1x16xf32>
// CHECK: %[[M:.*]] = ridge.mul %[[C2]], %[[S]] : (tensor<1x4x4x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[Y:.*]] = ridge.transpose %[[M]], [0, 3, 1, 2] {ridge.layout_transpose}
// CHECK: %{{.*}}, %[[I:.*]] = ridge.pool %[[T]] {{{.*}}with_indices = true} : tensor<1x16x4x4xf32>
// CHECK: return %[[Y]], %[[GR]], %[[I]]
func.func @poolings(%x: tensor<1x16x8x8xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x3x3xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x1x1xf32>, tensor<1x16x2x2xi64>) {
  %c1 = ridge.conv %x, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %p = ridge.pool %c1 {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
  %c2 = ridge.conv %p, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x4x4xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32>
  %g = ridge.pool %c2 {kind = "avg", kernel_shape = array<i64: 4, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x16x4x4xf32> -> tensor<1x16x1x1xf32>
  %s = ridge.sigmoid %g : tensor<1x16x1x1xf32>
  %m = ridge.mul %c2, %s : (tensor<1x16x4x4xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  %v, %i = ridge.pool %c2 {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, with_indices = true} : tensor<1x16x4x4xf32> -> tensor<1x16x2x2xf32>, tensor<1x16x2x2xi64>
  return %m, %g, %i : tensor<1x16x4x4xf32>, tensor<1x16x1x1xf32>, tensor<1x16x2x2xi64>
}

// -----

// A per-channel operand that is not a result of the pass ([1, C, 1, 1], an
// unfolded BatchNorm's scale) is reshaped to [1, 1, 1, C]: the scale and
// the shift happen channels-last.
// CHECK-LABEL: func @per_channel_operands
// CHECK: %[[C:.*]] = ridge.conv {{.*}}channels_last{{.*}} -> tensor<1x8x8x16xf32>
// CHECK: %[[SL:.*]] = ridge.reshape %arg2 : tensor<1x16x1x1xf32> -> tensor<1x1x1x16xf32>
// CHECK: %[[M:.*]] = ridge.mul %[[C]], %[[SL]] : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[BL:.*]] = ridge.reshape %arg3 : tensor<1x16x1x1xf32> -> tensor<1x1x1x16xf32>
// CHECK: %[[A:.*]] = ridge.add %[[M]], %[[BL]] : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: ridge.transpose %[[A]], [0, 3, 1, 2] {ridge.layout_transpose}
// CHECK-NOT: ridge.transpose
// CHECK: return
func.func @per_channel_operands(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %scale: tensor<1x16x1x1xf32>, %shift: tensor<1x16x1x1xf32>) -> tensor<1x16x8x8xf32> {
  %c = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %m = ridge.mul %c, %scale : (tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %a = ridge.add %m, %shift : (tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  return %a : tensor<1x16x8x8xf32>
}

// -----

// An inverted residual block: the 1x1 expansion and projection on tensor
// cores, the depthwise convolution between them (SIMT) follows its
// channels-last input, its constant weight w[c, 0, 0, kw] = 2c + kw
// permuted at compile time to [1, kh, kw, C] (each tap's channels
// contiguous): 0, 2, ..., 14 then 1, 3, ..., 15. No transpose between the
// three convolutions. A depthwise convolution of a channels-second input
// (the graph's) stays channels-second.
// CHECK-LABEL: func @inverted_residual
// CHECK: %[[DW:.*]] = ridge.constant dense_resource<weight.hwc> : tensor<1x1x2x8xf32>
// CHECK: %[[E:.*]] = ridge.conv {{.*}}channels_last{{.*}} -> tensor<1x4x4x8xf32>
// CHECK: %[[R:.*]] = ridge.relu %[[E]] : tensor<1x4x4x8xf32>
// CHECK: %[[D:.*]] = ridge.conv %[[R]], %[[DW]] {channels_last, {{.*}}group = 8 : i64{{.*}}} : (tensor<1x4x4x8xf32>, tensor<1x1x2x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK-NOT: ridge.transpose
// CHECK: %[[P:.*]] = ridge.conv %[[D]], {{.*}}channels_last{{.*}} -> tensor<1x4x3x8xf32>
// CHECK: %[[Y:.*]] = ridge.transpose %[[P]], [0, 3, 1, 2]
// CHECK: %[[G:.*]] = ridge.conv %arg0, %{{.*}} {dilations = {{.*}}group = 8 : i64, {{.*}}} : (tensor<1x8x4x4xf32>, tensor<8x1x1x2xf32>) -> tensor<1x8x4x3xf32>
// CHECK: return %[[Y]], %[[G]]
// CHECK: weight.hwc: "0x040000000000000000000040000080400000C040000000410000204100004041000060410000803F000040400000A0400000E04000001041000030410000504100007041"
func.func @inverted_residual(%x: tensor<1x8x4x4xf32>, %we: tensor<8x8x1x1xf32>, %wp: tensor<8x8x1x1xf32>) -> (tensor<1x8x4x3xf32>, tensor<1x8x4x3xf32>) {
  %wd = ridge.constant dense<[[[[0.0, 1.0]]], [[[2.0, 3.0]]], [[[4.0, 5.0]]], [[[6.0, 7.0]]], [[[8.0, 9.0]]], [[[10.0, 11.0]]], [[[12.0, 13.0]]], [[[14.0, 15.0]]]]> : tensor<8x1x1x2xf32>
  %e = ridge.conv %x, %we {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %r = ridge.relu %e : tensor<1x8x4x4xf32>
  %d = ridge.conv %r, %wd {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x1x2xf32>) -> tensor<1x8x4x3xf32>
  %p = ridge.conv %d, %wp {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x8x4x3xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x3xf32>
  // expected-remark @+1 {{convolution left channels-second: grouped convolution (group 8, depthwise, its input channels-second)}}
  %g = ridge.conv %x, %wd {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x1x2xf32>) -> tensor<1x8x4x3xf32>
  return %p, %g : tensor<1x8x4x3xf32>, tensor<1x8x4x3xf32>
}

// -----

// Left channels-second, with a remark: a padded 2x2 stride-2 convolution
// of an RGB image (its windows read each element once, so padding the 3
// channels to 8 would add work and save no gather; its padding makes it no
// patchify convolution), a grouped convolution, one in fp32 (no tensor
// cores).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: channels_last
// CHECK-NOT: ridge.transpose
// CHECK-NOT: ridge.pad
// CHECK: return
func.func @left_alone(%x: tensor<1x3x10x10xf32>, %w: tensor<16x3x2x2xf32>, %g: tensor<16x8x1x1xf32>, %f: tensor<16x16x1x1xf32>) -> tensor<1x16x6x6xf32> {
  // expected-remark @+1 {{convolution left channels-second: 3 input channels are not a whole number of 16-byte pieces (8 channels), and padding them to 8 would cost more than the gather it saves (each input element read 4/4 times by the windows)}}
  %c = ridge.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x3x10x10xf32>, tensor<16x3x2x2xf32>) -> tensor<1x16x6x6xf32>
  // expected-remark @+1 {{convolution left channels-second: grouped convolution (group 2)}}
  %d = ridge.conv %c, %g {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64, ridge.precision = "bf16"} : (tensor<1x16x6x6xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x6x6xf32>
  // expected-remark @+1 {{convolution left channels-second: the convolution does not run on tensor cores (not rounded to bf16, fp16 or tf32, nor stored in f16/bf16)}}
  %e = ridge.conv %d, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x6x6xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x6x6xf32>
  return %e : tensor<1x16x6x6xf32>
}

// -----

// A patchify convolution of an RGB image (a ViT's patch embedding: 2x2
// patches of stride 2, no padding) is a GEMM over its patches: the image
// reshaped into [N, C, OH, kh, OW, kw], transposed to patches and reshaped
// to [N, OH x OW, C x kh x kw]; the weights permuted at compile time to
// [C, kh, kw, M] (`<weight>.kn`, viewed as [C x kh x kw, M]); the bias
// added to the [N, OH x OW, M] product. The model's flatten + transpose of
// the result cancels the transpose back: the GEMM's result is what the
// model reads.
// CHECK-LABEL: func @patchify
// CHECK-DAG: %[[K:.*]] = ridge.constant dense_resource<weight.kn> : tensor<12x2xf32>
// CHECK-DAG: %[[B:.*]] = ridge.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK: %[[S:.*]] = ridge.reshape %arg0 : tensor<1x3x4x6xf32> -> tensor<1x3x2x2x3x2xf32>
// CHECK-NEXT: %[[T:.*]] = ridge.transpose %[[S]], [0, 2, 4, 1, 3, 5] {ridge.layout_transpose} : tensor<1x3x2x2x3x2xf32> -> tensor<1x2x3x3x2x2xf32>
// CHECK-NEXT: %[[P:.*]] = ridge.reshape %[[T]] : tensor<1x2x3x3x2x2xf32> -> tensor<1x6x12xf32>
// CHECK-NEXT: %[[M:.*]] = ridge.matmul %[[P]], %[[K]] {ridge.precision = "bf16"} : (tensor<1x6x12xf32>, tensor<12x2xf32>) -> tensor<1x6x2xf32>
// CHECK-NEXT: %[[A:.*]] = ridge.add %[[M]], %[[B]] : (tensor<1x6x2xf32>, tensor<2xf32>) -> tensor<1x6x2xf32>
// CHECK-NEXT: return %[[A]] : tensor<1x6x2xf32>
// CHECK: weight.kn: "0x0400000000000000000040410000803F000050410000004000006041000040400000704100008040000080410000A040000088410000C040000090410000E04000009841000000410000A041000010410000A841000020410000B041000030410000B841"
func.func @patchify(%x: tensor<1x3x4x6xf32>) -> tensor<1x6x2xf32> {
  %w = ridge.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0, 9.0], [10.0, 11.0]]], [[[12.0, 13.0], [14.0, 15.0]], [[16.0, 17.0], [18.0, 19.0]], [[20.0, 21.0], [22.0, 23.0]]]]> : tensor<2x3x2x2xf32>
  %b = ridge.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %c = ridge.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x3x4x6xf32>, tensor<2x3x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x3xf32>
  %f = ridge.reshape %c : tensor<1x2x2x3xf32> -> tensor<1x2x6xf32>
  %t = ridge.transpose %f, [0, 2, 1] : tensor<1x2x6xf32> -> tensor<1x6x2xf32>
  return %t : tensor<1x6x2xf32>
}

// -----

// An RGB stem (2x2 windows of stride 1: each input element read 4 times):
// its 3 input channels are padded with zeros to a whole 16-byte piece (8
// bf16 channels, 2.67x the multiply work), padded
// channels-second so that the transpose after is the pad kernel's epilogue;
// the weights [M, kh, kw, 3] are padded at compile time into
// `<weight>.hwc8` (each 8-channel group: 3 weights, 5 zeros). tf32's piece
// is 4 channels (3 -> 4); a weight that is not a constant is transposed and
// padded by ops. The max pool after the stem then runs channels-last, and
// only the pool's transpose back remains.
// CHECK-LABEL: func @padded_stem
// CHECK: %[[W:.*]] = ridge.constant dense_resource<weight.hwc8> : tensor<2x2x2x8xf32>
// CHECK-NEXT: %[[P:.*]] = ridge.pad %arg0 pads [0, 0, 0, 0, 0, 5, 0, 0] : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT: %[[T:.*]] = ridge.transpose %[[P]], [0, 2, 3, 1] {ridge.layout_transpose} : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
// CHECK-NEXT: %[[C:.*]] = ridge.conv %[[T]], %[[W]] {channels_last, {{.*}}} : (tensor<1x8x8x8xf32>, tensor<2x2x2x8xf32>) -> tensor<1x7x7x2xf32>
// CHECK-NEXT: %[[R:.*]] = ridge.relu %[[C]]
// CHECK-NEXT: %[[M:.*]] = ridge.pool %[[R]] {channels_last, {{.*}}} : tensor<1x7x7x2xf32> -> tensor<1x3x3x2xf32>
// CHECK-NEXT: ridge.transpose %[[M]], [0, 3, 1, 2]
// CHECK: %[[P4:.*]] = ridge.pad %arg0 pads [0, 0, 0, 0, 0, 1, 0, 0] : (tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[T4:.*]] = ridge.transpose %[[P4]], [0, 2, 3, 1]
// CHECK-NEXT: %[[WT:.*]] = ridge.transpose %arg1, [0, 2, 3, 1] {ridge.layout_transpose} : tensor<2x3x2x2xf32> -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[W4:.*]] = ridge.pad %[[WT]] pads [0, 0, 0, 0, 0, 0, 0, 1] : (tensor<2x2x2x3xf32>) -> tensor<2x2x2x4xf32>
// CHECK-NEXT: ridge.conv %[[T4]], %[[W4]] {channels_last, {{.*}}} : (tensor<1x8x8x4xf32>, tensor<2x2x2x4xf32>) -> tensor<1x7x7x2xf32>
// CHECK: weight.hwc8: "0x0400000000000000000080400000004100000000000000000000000000000000000000000000803F0000A040000010410000000000000000000000000000000000000000000000400000C040000020410000000000000000000000000000000000000000000040400000E04000003041000000000000000000000000000000000000000000004041000080410000A041000000000000000000000000000000000000000000005041000088410000A841000000000000000000000000000000000000000000006041000090410000B041000000000000000000000000000000000000000000007041000098410000B8410000000000000000000000000000000000000000"
func.func @padded_stem(%x: tensor<1x3x8x8xf32>, %w4: tensor<2x3x2x2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x7x7xf32>) {
  %w = ridge.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0, 9.0], [10.0, 11.0]]], [[[12.0, 13.0], [14.0, 15.0]], [[16.0, 17.0], [18.0, 19.0]], [[20.0, 21.0], [22.0, 23.0]]]]> : tensor<2x3x2x2xf32>
  %c = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x3x8x8xf32>, tensor<2x3x2x2xf32>) -> tensor<1x2x7x7xf32>
  %r = ridge.relu %c : tensor<1x2x7x7xf32>
  %m = ridge.pool %r {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x7x7xf32> -> tensor<1x2x3x3xf32>
  %t = ridge.conv %x, %w4 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "tf32"} : (tensor<1x3x8x8xf32>, tensor<2x3x2x2xf32>) -> tensor<1x2x7x7xf32>
  return %m, %t : tensor<1x2x3x3xf32>, tensor<1x2x7x7xf32>
}

// -----

// A convolution whose input is channels-last already (the result of one
// with 12 output channels) pads that input channels-last, after the
// transpose, so that the two transposes cancel: 12 -> 16 channels.
// CHECK-LABEL: func @padded_between_convs
// CHECK: %[[A:.*]] = ridge.conv {{.*}}channels_last{{.*}} -> tensor<1x8x8x12xf32>
// CHECK-NEXT: %[[R:.*]] = ridge.relu %[[A]] : tensor<1x8x8x12xf32>
// CHECK-NEXT: %[[P:.*]] = ridge.pad %[[R]] pads [0, 0, 0, 0, 0, 0, 0, 4] : (tensor<1x8x8x12xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT: ridge.conv %[[P]], {{.*}}channels_last{{.*}} -> tensor<1x6x6x16xf32>
// CHECK-NEXT: ridge.transpose {{.*}} [0, 3, 1, 2]
// CHECK-NEXT: return
func.func @padded_between_convs(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x6x6xf32> {
  %w = ridge.constant dense<1.0> : tensor<12x16x3x3xf32>
  %v = ridge.constant dense<2.0> : tensor<16x12x3x3xf32>
  %a = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x8x8xf32>, tensor<12x16x3x3xf32>) -> tensor<1x12x8x8xf32>
  %r = ridge.relu %a : tensor<1x12x8x8xf32>
  %b = ridge.conv %r, %v {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x12x8x8xf32>, tensor<16x12x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %b : tensor<1x16x6x6xf32>
}

// -----

// An fp32 1x1 convolution (off tensor cores) reading a channels-last
// activation follows it: no transpose between the two.
// CHECK-LABEL: func @follower
// CHECK: %[[A:.*]] = ridge.conv {{.*}}channels_last
// CHECK-NEXT: %[[R:.*]] = ridge.relu %[[A]] : tensor<1x8x8x16xf32>
// CHECK-NOT: ridge.transpose %[[R]]
// CHECK: %[[B:.*]] = ridge.conv %[[R]], %{{.*}} {channels_last, {{.*}}} : (tensor<1x8x8x16xf32>, tensor<32x1x1x16xf32>) -> tensor<1x4x4x32xf32>
// CHECK: ridge.transpose %[[B]], [0, 3, 1, 2]
func.func @follower(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %d: tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32> {
  %a = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = ridge.relu %a : tensor<1x16x8x8xf32>
  %b = ridge.conv %r, %d {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32>
  return %b : tensor<1x32x4x4xf32>
}
