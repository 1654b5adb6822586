"""What the emulator's nvcc test runners (run_nvcc_*.py) share: running one
kernel on ridge-emu with its buffers in files, comparing a result with a
NumPy reference, random operands, and bf16 conversions.

The runners import it from their own folder, which Python puts first on
sys.path when it runs them as scripts.
"""

import os
import subprocess

import numpy as np

# The ridge-emu --buffer type of each NumPy element type; raw bf16 bits
# (uint16) name their kind themselves, see emulate.
KINDS = {np.float32: "f32", np.int32: "s32", np.uint32: "u32",
         np.float16: "f16", np.int8: "s8", np.uint8: "u8", np.uint16: "u16"}


def emulate(emu, ptx, work, kernel, grid, block, buffers, args, outputs,
            shared=0):
    """Runs `kernel` of `ptx` on ridge-emu and returns {name: array} for
    the buffers named in `outputs` [(name, dtype)], read back after the run.

    buffers: (name, array), its kind from KINDS, or (name, kind, array),
    e.g. kind "bf16" for bf16 bits held in uint16; each starts as its
    array, through a file in `work`. args: ridge-emu --arg values, in
    order. shared: bytes of dynamic shared memory (--shared where not 0).
    """
    command = [emu, ptx, "--kernel", kernel, "--grid", grid, "--block", block]
    if shared:
        command += ["--shared", str(shared)]
    for buffer in buffers:
        name, array = buffer[0], buffer[-1]
        kind = buffer[1] if len(buffer) == 3 else KINDS[array.dtype.type]
        path = os.path.join(work, "%s_%s.bin" % (kernel, name))
        array.tofile(path)
        command += ["--buffer", "%s:%s:%d:file=%s" % (name, kind, array.size,
                                                      path)]
    command += ["--arg=" + a for a in args]
    results = {}
    for name, dtype in outputs:
        path = os.path.join(work, "%s_%s.out" % (kernel, name))
        command += ["--write", "%s=%s" % (name, path)]
        results[name] = (path, dtype)
    subprocess.run(command, check=True)
    return {name: np.fromfile(path, dtype=dtype)
            for name, (path, dtype) in results.items()}


def report(case, got, want, rtol=0.0, atol=0.0, bound=None):
    """Prints "CASE: PASS" where each element of `got` equals its element of
    `want` or is within its bound of it, else "CASE: FAIL at I: GOT,
    expected WANT" for the element furthest past its bound; returns whether
    it passed. Both are flattened and compared in float64. The bound is
    `bound` (per element) where given, else atol + rtol * |want|: exact by
    default.
    """
    got = np.asarray(got).astype(np.float64).ravel()
    want = np.asarray(want).astype(np.float64).ravel()
    if bound is None:
        bound = atol + rtol * np.abs(want)
    bound = np.broadcast_to(np.asarray(bound, np.float64).ravel(), want.shape)
    # Equal elements pass even where their difference is NaN (equal
    # infinities); a NaN excess (a NaN result) fails.
    excess = np.where(got == want, -np.inf, np.abs(got - want) - bound)
    worst = int(np.argmax(excess))
    if excess[worst] <= 0:
        print("%s: PASS" % case)
        return True
    print("%s: FAIL at %d: %r, expected %r" % (case, worst, got[worst],
                                              want[worst]))
    return False


def operands(rng, exact, shapes, high, dtype=np.float32):
    """Random arrays of `shapes`, drawn in that order: integers in
    [-high, high] where `exact` (small enough that products and sums are
    exact in f32), else uniform in [-1, 1); then cast to `dtype`."""
    if exact:
        return [rng.randint(-high, high + 1, size=shape).astype(dtype)
                for shape in shapes]
    return [rng.uniform(-1, 1, size=shape).astype(dtype) for shape in shapes]


def to_bf16_bits(x):
    """float32 -> bf16 bits, round to nearest even (as __float2bfloat16),
    for finite inputs."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)
