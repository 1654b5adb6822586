// RUN: ridge-opt %s -split-input-file -ridge-attach-target | FileCheck %s --check-prefix=DEFAULT
// RUN: ridge-opt %s -split-input-file -ridge-attach-target=chip=sm_80 | FileCheck %s --check-prefix=A100
// RUN: ridge-opt %s -split-input-file -ridge-attach-target="chip=sm_89 gpu=L4 precision=fp8" | FileCheck %s --check-prefix=L4
// RUN: ridge-opt %s -split-input-file -ridge-attach-target="chip=sm_80 gpu=H200" 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: not ridge-opt %s -split-input-file -ridge-attach-target=chip=sm_70 2>&1 | FileCheck %s --check-prefix=BAD-CHIP
// RUN: not ridge-opt %s -split-input-file -ridge-attach-target="chip=sm_80 precision=fp8" 2>&1 | FileCheck %s --check-prefix=NO-FP8

// Without options the default target: sm_90a planned for the H100.
// DEFAULT-LABEL: module attributes
// DEFAULT-SAME: ridge.target = {bandwidth = 3.350000e+12 : f64, chip = "sm_90a", gpu = "H100-SXM", gpu_chip = "sm_90a", l2_bytes = 52428800 : i64, numerics = "bf16"
// DEFAULT-SAME: precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 233472 : i64}

// sm_8x stands for the A100.
// A100-LABEL: module attributes
// A100-SAME: chip = "sm_80", gpu = "A100-SXM-80GB"
// A100-SAME: sm_count = 108 : i64, smem_per_sm = 167936 : i64

// L4: chip = "sm_89", gpu = "L4"
// L4-SAME: precision = "fp8"
// L4-SAME: sm_count = 58 : i64, smem_per_sm = 102400 : i64

// WARN: warning: kernels are planned for the H200 (sm_90a) but compiled for sm_80
// BAD-CHIP: error: unknown target 'sm_70' (expected cpu, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a)
// NO-FP8: error: --precision=fp8 needs fp8 tensor cores (sm_89, sm_90a or newer); target sm_80 has none
module {
  func.func @f() {
    return
  }
}

// -----

// A module that has a target keeps it when no option is given.
// DEFAULT-LABEL: module attributes
// DEFAULT-SAME: chip = "cpu", gpu = "RTX-4090"
// A100-LABEL: module attributes
// A100-SAME: chip = "sm_80", gpu = "A100-SXM-80GB"
module attributes {ridge.target = {bandwidth = 1.008000e+12 : f64, chip = "cpu", gpu = "RTX-4090", l2_bytes = 75497472 : i64, peak_flops = {bf16 = 1.652000e+14 : f64, fp16 = 1.652000e+14 : f64, fp32 = 8.260000e+13 : f64, fp8 = 3.303000e+14 : f64, tf32 = 8.260000e+13 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 128 : i64, smem_per_sm = 102400 : i64}} {
  func.func @g() {
    return
  }
}
