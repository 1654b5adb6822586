# Makes test/models/se_block: run in that folder with numpy and onnx.
# A convolution, its squeeze-and-excitation gate (GlobalAveragePool -> 1x1
# Conv -> Relu -> 1x1 Conv -> Sigmoid) scaling its channels, and the next
# convolution: ridge-fold-channel-scales moves the gate into that
# convolution's weights (2,304 weights against 3,136 activations). The
# reference is float64 NumPy, unfolded.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(5)
F = TensorProto.FLOAT
C, R, H = 16, 4, 14
w1 = (rng.standard_normal((C, C, 3, 3)) * 0.2).astype(np.float32)
b1 = (rng.standard_normal((C,)) * 0.1).astype(np.float32)
f1 = (rng.standard_normal((R, C, 1, 1)) * 0.5).astype(np.float32)
f2 = (rng.standard_normal((C, R, 1, 1)) * 0.5).astype(np.float32)
w2 = (rng.standard_normal((C, C, 3, 3)) * 0.2).astype(np.float32)
nodes = [
  helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
  helper.make_node('Relu', ['c1'], ['r1']),
  helper.make_node('GlobalAveragePool', ['r1'], ['g']),
  helper.make_node('Conv', ['g', 'f1'], ['h1']),
  helper.make_node('Relu', ['h1'], ['h2']),
  helper.make_node('Conv', ['h2', 'f2'], ['h3']),
  helper.make_node('Sigmoid', ['h3'], ['s']),
  helper.make_node('Mul', ['r1', 's'], ['m']),
  helper.make_node('Conv', ['m', 'w2'], ['y'], pads=[1, 1, 1, 1]),
]
g = helper.make_graph(nodes, 'se_block',
                      [helper.make_tensor_value_info('x', F, [1, C, H, H])],
                      [helper.make_tensor_value_info('y', F, [1, C, H, H])],
                      [numpy_helper.from_array(v, n) for n, v in
                       (('w1', w1), ('b1', b1), ('f1', f1), ('f2', f2), ('w2', w2))])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')

def conv(x, w, b=None, pad=0):
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    out = np.zeros((n, w.shape[0], oh, ow))
    for i in range(k):
        for j in range(k):
            out += np.einsum('nchw,oc->nohw', xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out if b is None else out + b.reshape(1, -1, 1, 1)

d = np.float64
x = rng.standard_normal((1, C, H, H)).astype(np.float32)
r1 = np.maximum(conv(x.astype(d), w1.astype(d), b1.astype(d), 1), 0)
gate = 1 / (1 + np.exp(-conv(np.maximum(conv(r1.mean(axis=(2, 3), keepdims=True), f1.astype(d)), 0), f2.astype(d))))
y = conv(r1 * gate, w2.astype(d), None, 1)
os.makedirs('test_data_set_0', exist_ok=True)
open('test_data_set_0/input_0.pb', 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
open('test_data_set_0/output_0.pb', 'wb').write(numpy_helper.from_array(y.astype(np.float32), 'y').SerializeToString())
