# The fp8 scheme of docs/precision.md in numpy, independent of Ridgeline's
# code: per-tensor power-of-two scales from each operand's amax, e4m3
# rounding to nearest even, fp32 products summed, the scales divided back
# out. Usage: fp8_reference.py TEST_DATA_DIR OUTPUTS_DIR [--min-error E]
# compares Ridgeline's saved outputs (output_N.npy of ridge-run
# --save-outputs) for matmul_fp8 with the scheme (max |diff| below 1e-3 of
# the output's RMS) and, with --min-error, checks that they are at least E
# (relative to RMS) away from the unquantized float64 result.
import sys, os
import numpy as np
import onnx
from onnx import numpy_helper

def scale_exponent(amax):
    bits = int(np.array(amax, np.float32).view(np.uint32))
    exponent = (bits >> 23) & 0xff
    e = (135 if (bits & 0x7fffff) <= 0x600000 else 134) - exponent
    return max(-126, min(126, e))

def round_e4m3(v):
    v = np.clip(v.astype(np.float64), -448, 448)
    mag = np.abs(v)
    # Subnormals step 2^-9 below 2^-6; normals keep 3 mantissa bits.
    e = np.floor(np.log2(np.where(mag > 0, mag, 1)))
    step = np.where(mag < 2.0 ** -6, 2.0 ** -9, 2.0 ** (e - 3))
    return np.round(v / step) * step  # np.round: ties to even

def quantize(t):
    e = scale_exponent(np.max(np.abs(t)))
    return round_e4m3(t.astype(np.float32) * np.float32(2.0 ** e)), e

def fp8_matmul(l, r):
    ql, el = quantize(l)
    qr, er = quantize(r)
    s = (ql.astype(np.float32) @ qr.astype(np.float32)).astype(np.float32)
    return s * np.float32(2.0 ** -el) * np.float32(2.0 ** -er)

def main():
    data, outputs = sys.argv[1], sys.argv[2]
    min_error = float(sys.argv[4]) if len(sys.argv) > 4 else None
    load = lambda n: numpy_helper.to_array(onnx.load_tensor(os.path.join(data, n)))
    here = os.path.dirname(os.path.abspath(__file__))
    m = onnx.load(os.path.join(here, 'model.onnx'))
    w = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    x, a, b = load('input_0.pb'), load('input_1.pb'), load('input_2.pb')
    h = np.maximum(fp8_matmul(x, w['w1']) + w['b1'], np.float32(0))
    expected = [fp8_matmul(h, w['w2']), fp8_matmul(a, b.T)]
    exact = [load('output_0.pb'), load('output_1.pb')]
    ok = True
    for k, (want, ref) in enumerate(zip(expected, exact)):
        got = np.load(os.path.join(outputs, 'output_%d.npy' % k))
        rms = np.sqrt(np.mean(want.astype(np.float64) ** 2))
        diff = np.max(np.abs(got - want)) / rms
        off = np.max(np.abs(got - ref)) / rms
        print('output %d: max |diff| vs the fp8 scheme %.2e, vs float64 %.2e (of RMS)' % (k, diff, off))
        ok &= diff < 1e-3
        if min_error is not None:
            ok &= off > min_error
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1

if __name__ == '__main__':
    sys.exit(main())
