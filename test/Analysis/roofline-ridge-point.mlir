// The bound flips at each built-in GPU's ridge point (bf16 peak / bandwidth).
// A square bf16 matmul of size N has intensity 2N^3 / (2 * 3N^2) = N/3 FLOP/B,
// so each GPU gets one N just below its ridge point and one just above.
//
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=A100-SXM-80GB | FileCheck %s --check-prefix=A100
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=H100-SXM | FileCheck %s --check-prefix=H100
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=H200 | FileCheck %s --check-prefix=H200
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=L4 | FileCheck %s --check-prefix=L4
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=B200 | FileCheck %s --check-prefix=B200
// RUN: ridge-opt %s -ridge-annotate-roofline=gpu=rtx-4090 | FileCheck %s --check-prefix=RTX4090

// A100-SXM-80GB, 312e12 / 2.039e12 = 153.02 FLOP/B: N = 459 (153) is below.
// A100: ridge_point = 153.01
// A100-LABEL: func @a100
// A100: bound = "memory"{{.*}}intensity = 1.530000e+02
// A100: bound = "compute"{{.*}}intensity = 1.540000e+02
// H100-SXM, 989.4e12 / 3.35e12 = 295.34.
// H100: ridge_point = 295.34
// H100-LABEL: func @h100
// H100: bound = "memory"{{.*}}intensity = 2.950000e+02
// H100: bound = "compute"{{.*}}intensity = 2.960000e+02
// H200, 989.4e12 / 4.8e12 = 206.13: the same chip with faster memory turns
// compute-bound at a lower intensity.
// H200: ridge_point = 2.061250e+02
// H200-LABEL: func @h200
// H200: bound = "memory"{{.*}}intensity = 2.060000e+02
// H200: bound = "compute"{{.*}}intensity = 2.070000e+02
// L4, 121e12 / 0.3e12 = 403.33.
// L4: ridge_point = 403.33
// L4-LABEL: func @l4
// L4: bound = "memory"{{.*}}intensity = 4.030000e+02
// L4: bound = "compute"{{.*}}intensity = 4.040000e+02
// B200, 2250e12 / 8e12 = 281.25.
// B200: ridge_point = 2.812500e+02
// B200-LABEL: func @b200
// B200: bound = "memory"{{.*}}intensity = 2.810000e+02
// B200: bound = "compute"{{.*}}intensity = 2.820000e+02
// RTX-4090, 165.2e12 / 1.008e12 = 163.89.
// RTX4090: ridge_point = 163.88
// RTX4090-LABEL: func @rtx4090
// RTX4090: bound = "memory"{{.*}}intensity = 1.630000e+02
// RTX4090: bound = "compute"{{.*}}intensity = 1.640000e+02

func.func @a100(%a: tensor<459x459xbf16>, %b: tensor<462x462xbf16>) -> (tensor<459x459xbf16>, tensor<462x462xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<459x459xbf16>, tensor<459x459xbf16>) -> tensor<459x459xbf16>
  %1 = ridge.matmul %b, %b : (tensor<462x462xbf16>, tensor<462x462xbf16>) -> tensor<462x462xbf16>
  return %0, %1 : tensor<459x459xbf16>, tensor<462x462xbf16>
}
func.func @h100(%a: tensor<885x885xbf16>, %b: tensor<888x888xbf16>) -> (tensor<885x885xbf16>, tensor<888x888xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<885x885xbf16>, tensor<885x885xbf16>) -> tensor<885x885xbf16>
  %1 = ridge.matmul %b, %b : (tensor<888x888xbf16>, tensor<888x888xbf16>) -> tensor<888x888xbf16>
  return %0, %1 : tensor<885x885xbf16>, tensor<888x888xbf16>
}
func.func @h200(%a: tensor<618x618xbf16>, %b: tensor<621x621xbf16>) -> (tensor<618x618xbf16>, tensor<621x621xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<618x618xbf16>, tensor<618x618xbf16>) -> tensor<618x618xbf16>
  %1 = ridge.matmul %b, %b : (tensor<621x621xbf16>, tensor<621x621xbf16>) -> tensor<621x621xbf16>
  return %0, %1 : tensor<618x618xbf16>, tensor<621x621xbf16>
}
func.func @l4(%a: tensor<1209x1209xbf16>, %b: tensor<1212x1212xbf16>) -> (tensor<1209x1209xbf16>, tensor<1212x1212xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<1209x1209xbf16>, tensor<1209x1209xbf16>) -> tensor<1209x1209xbf16>
  %1 = ridge.matmul %b, %b : (tensor<1212x1212xbf16>, tensor<1212x1212xbf16>) -> tensor<1212x1212xbf16>
  return %0, %1 : tensor<1209x1209xbf16>, tensor<1212x1212xbf16>
}
func.func @b200(%a: tensor<843x843xbf16>, %b: tensor<846x846xbf16>) -> (tensor<843x843xbf16>, tensor<846x846xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<843x843xbf16>, tensor<843x843xbf16>) -> tensor<843x843xbf16>
  %1 = ridge.matmul %b, %b : (tensor<846x846xbf16>, tensor<846x846xbf16>) -> tensor<846x846xbf16>
  return %0, %1 : tensor<843x843xbf16>, tensor<846x846xbf16>
}
func.func @rtx4090(%a: tensor<489x489xbf16>, %b: tensor<492x492xbf16>) -> (tensor<489x489xbf16>, tensor<492x492xbf16>) {
  %0 = ridge.matmul %a, %a : (tensor<489x489xbf16>, tensor<489x489xbf16>) -> tensor<489x489xbf16>
  %1 = ridge.matmul %b, %b : (tensor<492x492xbf16>, tensor<492x492xbf16>) -> tensor<492x492xbf16>
  return %0, %1 : tensor<489x489xbf16>, tensor<492x492xbf16>
}
