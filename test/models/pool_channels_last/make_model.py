# Poolings between tensor-core convolutions, for ridge-assign-channels-last:
# a max pool (ceil_mode, padding), an average pool that excludes its padding,
# one that counts it, a global average pool read by a per-channel gate
# (squeeze-and-excitation without its FCs) and a global max pool. Every
# pooling reads a channels-last convolution's result, so the pass computes
# them channels-last; the float64 reference below pools channels-second.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
F = TensorProto.FLOAT
N, C, H = 2, 16, 15
w1 = (rng.standard_normal((C, C, 3, 3)) * 0.2).astype(np.float32)
b1 = (rng.standard_normal((C,)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((2 * C, C, 3, 3)) * 0.2).astype(np.float32)
w3 = (rng.standard_normal((2 * C, 2 * C, 1, 1)) * 0.2).astype(np.float32)
nodes = [
  helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
  helper.make_node('Relu', ['c1'], ['r1']),
  helper.make_node('MaxPool', ['r1'], ['p1'], kernel_shape=[3, 3],
                   strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
  helper.make_node('Conv', ['p1', 'w2'], ['c2'], pads=[1, 1, 1, 1]),
  helper.make_node('AveragePool', ['c2'], ['p2'], kernel_shape=[3, 3],
                   strides=[2, 2], pads=[1, 1, 1, 1]),
  helper.make_node('AveragePool', ['c2'], ['p3'], kernel_shape=[2, 2],
                   strides=[2, 2], pads=[0, 0, 1, 1], count_include_pad=1),
  helper.make_node('Add', ['p2', 'p3'], ['s']),
  helper.make_node('GlobalAveragePool', ['s'], ['g']),
  helper.make_node('Sigmoid', ['g'], ['gate']),
  helper.make_node('Mul', ['s', 'gate'], ['m']),
  helper.make_node('Conv', ['m', 'w3'], ['y']),
  helper.make_node('GlobalMaxPool', ['y'], ['z']),
]
g = helper.make_graph(nodes, 'pool_channels_last',
                      [helper.make_tensor_value_info('x', F, [N, C, H, H])],
                      [helper.make_tensor_value_info('y', F, [N, 2 * C, 4, 4]),
                       helper.make_tensor_value_info('z', F, [N, 2 * C, 1, 1])],
                      [numpy_helper.from_array(v, n) for n, v in
                       (('w1', w1), ('b1', b1), ('w2', w2), ('w3', w3))])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')

def conv(x, w, b=None, pad=0):
    # Every window as a view [n, c, oh, ow, kh, kw], summed against w.
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    out = np.einsum('nchwij,ocij->nohw', windows, w)
    return out if b is None else out + b.reshape(1, -1, 1, 1)

def pool(x, k, s, pads, kind, out, count_include_pad=False):
    # pads = (top, left, bottom, right); `out` the ONNX output size, which
    # may need windows past the end padding (ceil_mode): those positions
    # are padding that is never counted.
    n, c, h, w = x.shape
    fill = -np.inf if kind == 'max' else 0.0
    ph = max(pads[2], (out - 1) * s + k - h - pads[0])
    pw = max(pads[3], (out - 1) * s + k - w - pads[1])
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], ph), (pads[1], pw)),
                constant_values=fill)
    inside = np.pad(np.ones((h, w)), ((pads[0], ph), (pads[1], pw)))
    counted = np.pad(np.ones((h, w)), ((pads[0], pads[2]), (pads[1], pads[3])),
                     constant_values=1.0 if count_include_pad else 0.0)
    counted = np.pad(counted, ((0, ph - pads[2]), (0, pw - pads[3])))
    y = np.zeros((n, c, out, out))
    for i in range(out):
        for j in range(out):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if kind == 'max':
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                y[:, :, i, j] = win.sum(axis=(2, 3)) / counted[
                    i * s:i * s + k, j * s:j * s + k].sum()
    return y

d = np.float64
x = rng.standard_normal((N, C, H, H)).astype(np.float32)
r1 = np.maximum(conv(x.astype(d), w1.astype(d), b1.astype(d), 1), 0)
p1 = pool(r1, 3, 2, (1, 1, 1, 1), 'max', 8)       # ceil((15 + 2 - 3) / 2) + 1
c2 = conv(p1, w2.astype(d), None, 1)
p2 = pool(c2, 3, 2, (1, 1, 1, 1), 'avg', 4)
p3 = pool(c2, 2, 2, (0, 0, 1, 1), 'avg', 4, count_include_pad=True)
s = p2 + p3
gate = 1 / (1 + np.exp(-s.mean(axis=(2, 3), keepdims=True)))
y = conv(s * gate, w3.astype(d))
z = y.max(axis=(2, 3), keepdims=True)
os.makedirs('test_data_set_0', exist_ok=True)
open('test_data_set_0/input_0.pb', 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
open('test_data_set_0/output_0.pb', 'wb').write(numpy_helper.from_array(y.astype(np.float32), 'y').SerializeToString())
open('test_data_set_0/output_1.pb', 'wb').write(numpy_helper.from_array(z.astype(np.float32), 'z').SerializeToString())
