# Makes test/models/matmul_bf16: run in that folder with numpy and onnx.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(7)
def bf(a):
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)
BF = TensorProto.BFLOAT16; F = TensorProto.FLOAT
w1 = (rng.standard_normal((64, 40)) * 0.1).astype(np.float32)
b1 = rng.standard_normal((40,)).astype(np.float32)
w2 = (rng.standard_normal((24, 64)) * 0.1).astype(np.float32)
c2 = rng.standard_normal((24,)).astype(np.float32)
w3 = (rng.standard_normal((64, 16)) * 0.1).astype(np.float32)
nodes = [
  helper.make_node('Cast', ['x3'], ['x3b'], to=BF),
  helper.make_node('Cast', ['w1'], ['w1b'], to=BF),
  helper.make_node('MatMul', ['x3b', 'w1b'], ['y1b']),
  helper.make_node('Cast', ['y1b'], ['y1'], to=F),
  helper.make_node('Add', ['y1', 'b1'], ['z1']),
  helper.make_node('Tanh', ['z1'], ['out0']),
  helper.make_node('Cast', ['x2'], ['x2b'], to=BF),
  helper.make_node('Cast', ['w2'], ['w2b'], to=BF),
  helper.make_node('Cast', ['c2'], ['c2b'], to=BF),
  helper.make_node('Gemm', ['x2b', 'w2b', 'c2b'], ['y2b'], transB=1),
  helper.make_node('Cast', ['y2b'], ['out1'], to=F),
  helper.make_node('Cast', ['a'], ['ab'], to=BF),
  helper.make_node('Cast', ['w3'], ['w3b'], to=BF),
  helper.make_node('Gemm', ['ab', 'w3b'], ['y3b'], transA=1),
  helper.make_node('Cast', ['y3b'], ['out2'], to=F),
]
inputs = [helper.make_tensor_value_info('x3', F, [2, 48, 64]),
          helper.make_tensor_value_info('x2', F, [40, 64]),
          helper.make_tensor_value_info('a', F, [64, 32])]
outputs = [helper.make_tensor_value_info('out0', F, [2, 48, 40]),
           helper.make_tensor_value_info('out1', F, [40, 24]),
           helper.make_tensor_value_info('out2', F, [32, 16])]
inits = [numpy_helper.from_array(v, n) for n, v in
         (('w1', w1), ('b1', b1), ('w2', w2), ('c2', c2), ('w3', w3))]
g = helper.make_graph(nodes, 'matmul_bf16', inputs, outputs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')
x3 = rng.standard_normal((2, 48, 64)).astype(np.float32)
x2 = rng.standard_normal((40, 64)).astype(np.float32)
a = rng.standard_normal((64, 32)).astype(np.float32)
# bf16 operands, products exact in f32, f32 accumulation, bf16 results (the
# MatMul's and Gemm's output type); summation order differs from the GPU's,
# which the runner's tolerance absorbs.
out0 = np.tanh(bf(bf(x3) @ bf(w1)) + b1)
out1 = bf(bf(bf(x2) @ bf(w2).T) + bf(c2))
out2 = bf(bf(a).T @ bf(w3))
os.makedirs('test_data_set_0', exist_ok=True)
for i, (n, v) in enumerate((('x3', x3), ('x2', x2), ('a', a))):
    open('test_data_set_0/input_%d.pb' % i, 'wb').write(numpy_helper.from_array(v, n).SerializeToString())
for i, (n, v) in enumerate((('out0', out0), ('out1', out1), ('out2', out2))):
    open('test_data_set_0/output_%d.pb' % i, 'wb').write(numpy_helper.from_array(v.astype(np.float32), n).SerializeToString())
