# Two MobileNetV2 inverted residual blocks (1x1 expansion, ReLU6, 3x3
# depthwise, ReLU6, 1x1 projection; the first with its residual add, the
# second strided), then a global average pool. On GPU targets the 1x1
# convolutions run on tensor cores channels-last and the depthwise ones
# follow them (ridge-assign-channels-last): no transpose between the
# convolutions. The float64 reference below computes channels-second.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(23)
F = TensorProto.FLOAT
N, C, H = 4, 64, 14
E1, E2, C2 = 256, 192, 96
def rand(*shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)
weights = {
  'e1': rand(E1, C, 1, 1, scale=0.2), 'eb1': rand(E1, scale=0.1),
  'd1': rand(E1, 1, 3, 3, scale=0.3), 'db1': rand(E1, scale=0.1),
  'p1': rand(C, E1, 1, 1, scale=0.1), 'pb1': rand(C, scale=0.1),
  'e2': rand(E2, C, 1, 1, scale=0.2), 'eb2': rand(E2, scale=0.1),
  'd2': rand(E2, 1, 3, 3, scale=0.3), 'db2': rand(E2, scale=0.1),
  'p2': rand(C2, E2, 1, 1, scale=0.1), 'pb2': rand(C2, scale=0.1),
}
six = numpy_helper.from_array(np.array(6.0, np.float32), 'six')
zero = numpy_helper.from_array(np.array(0.0, np.float32), 'zero')
def relu6(x, y):
    return helper.make_node('Clip', [x, 'zero', 'six'], [y])
nodes = [
  helper.make_node('Conv', ['x', 'e1', 'eb1'], ['a1']), relu6('a1', 'b1'),
  helper.make_node('Conv', ['b1', 'd1', 'db1'], ['c1'], group=E1,
                   pads=[1, 1, 1, 1]), relu6('c1', 'f1'),
  helper.make_node('Conv', ['f1', 'p1', 'pb1'], ['g1']),
  helper.make_node('Add', ['g1', 'x'], ['h1']),
  helper.make_node('Conv', ['h1', 'e2', 'eb2'], ['a2']), relu6('a2', 'b2'),
  helper.make_node('Conv', ['b2', 'd2', 'db2'], ['c2'], group=E2,
                   pads=[1, 1, 1, 1], strides=[2, 2]), relu6('c2', 'f2'),
  helper.make_node('Conv', ['f2', 'p2', 'pb2'], ['y']),
  helper.make_node('GlobalAveragePool', ['y'], ['z']),
]
g = helper.make_graph(nodes, 'inverted_residual',
                      [helper.make_tensor_value_info('x', F, [N, C, H, H])],
                      [helper.make_tensor_value_info('y', F, [N, C2, H // 2, H // 2]),
                       helper.make_tensor_value_info('z', F, [N, C2, 1, 1])],
                      [numpy_helper.from_array(v, n) for n, v in weights.items()]
                      + [six, zero])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')

d = np.float64
w = {n: v.astype(d) for n, v in weights.items()}
def conv1x1(x, wt, b):
    return np.einsum('nchw,oc->nohw', x, wt[:, :, 0, 0]) + b.reshape(1, -1, 1, 1)
def depthwise(x, wt, b, stride):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (h - 1) // stride + 1, (wd - 1) // stride + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(3):
        for j in range(3):
            out += xp[:, :, i:i + stride * (oh - 1) + 1:stride,
                      j:j + stride * (ow - 1) + 1:stride] * wt[:, 0, i, j].reshape(1, -1, 1, 1)
    return out + b.reshape(1, -1, 1, 1)
r6 = lambda v: np.clip(v, 0, 6)
x = rng.standard_normal((N, C, H, H)).astype(np.float32)
h1 = conv1x1(r6(depthwise(r6(conv1x1(x.astype(d), w['e1'], w['eb1'])), w['d1'], w['db1'], 1)),
             w['p1'], w['pb1']) + x
y = conv1x1(r6(depthwise(r6(conv1x1(h1, w['e2'], w['eb2'])), w['d2'], w['db2'], 2)),
            w['p2'], w['pb2'])
z = y.mean(axis=(2, 3), keepdims=True)
os.makedirs('test_data_set_0', exist_ok=True)
open('test_data_set_0/input_0.pb', 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
open('test_data_set_0/output_0.pb', 'wb').write(numpy_helper.from_array(y.astype(np.float32), 'y').SerializeToString())
open('test_data_set_0/output_1.pb', 'wb').write(numpy_helper.from_array(z.astype(np.float32), 'z').SerializeToString())
