//===- RidgeSignalOps.td - ridge Signal ops ----------------*- tablegen -*-===//
//
// Signal processing and linear algebra (DFT, determinants). STFT is imported
// as frames (ridge.gather) times the window feeding ridge.dft; MelWeightMatrix
// and the window functions are computed at import.
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_SIGNAL_OPS
#define RIDGE_SIGNAL_OPS

def Ridge_DFTOp : Ridge_Op<"dft", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Discrete Fourier transform along one axis (ONNX DFT)";
  let description = [{
    The input holds real signals (last dimension 1) or complex ones (last
    dimension 2: real, imaginary). `axis` (non-negative, not the last
    dimension) is the transformed dimension; `length` is the DFT size: the
    signal is zero-padded or truncated to it.

    Forward: X[f] = sum_t x[t] exp(-2 pi i f t / length); the result holds
    `length` bins, or `length / 2 + 1` with `onesided`, as complex numbers
    (last dimension 2). `inverse` uses exp(+2 pi i f t / length) and divides
    by `length`. `inverse` with `onesided` is the inverse real transform:
    the input holds the first `length / 2 + 1` bins of a Hermitian spectrum
    and the result is `length` real samples (last dimension 1).

    FLOPs: eight per input sample per output bin (a complex multiply-add),
    counting min(input size along `axis`, `length`) samples; the twiddle
    factors are constants.

    ```mlir
    %y = ridge.dft %x {axis = 1 : i64, length = 10 : i64}
        : tensor<1x10x10x1xf32> -> tensor<1x10x10x2xf32>
    ```
  }];
  let arguments = (ins Ridge_FloatTensor:$input, I64Attr:$axis,
                       I64Attr:$length,
                       DefaultValuedAttr<BoolAttr, "false">:$inverse,
                       DefaultValuedAttr<BoolAttr, "false">:$onesided);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ridge_DetOp : Ridge_Op<"det", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Determinants of square matrices (ONNX Det)";
  let description = [{
    The input is [*, n, n]; the result [*] holds the determinant of each
    matrix, computed by LU decomposition with partial pivoting.

    FLOPs: 2/3 n^3 per matrix.

    ```mlir
    %d = ridge.det %x : tensor<3x2x2xf32> -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Ridge_FloatTensor:$input);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // RIDGE_SIGNAL_OPS
