# Makes test/models/matmul_fp8: run in that folder with numpy and onnx.
# f32 contractions compute-bound on the H100's fp32 roofline (25-32 FLOP/B
# against its ridge point of 20), so --precision=fp8 quantizes all three
# (docs/precision.md): a two-layer MLP with constant weights (W1, W2: scales
# chosen at compile time; its hidden activation gets a scale at run time)
# and a Gemm of two graph inputs with transB (both scales at run time). The
# reference is float64, unquantized; fp8_reference.py computes the fp8
# scheme itself.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(8)
F = TensorProto.FLOAT
w1 = (rng.standard_normal((256, 256)) * 0.06).astype(np.float32)
b1 = (rng.standard_normal((256,)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((256, 128)) * 0.06).astype(np.float32)
nodes = [
  helper.make_node('MatMul', ['x', 'w1'], ['h0']),
  helper.make_node('Add', ['h0', 'b1'], ['h1']),
  helper.make_node('Relu', ['h1'], ['h']),
  helper.make_node('MatMul', ['h', 'w2'], ['y']),
  helper.make_node('Gemm', ['a', 'b'], ['z'], transB=1),
]
inputs = [helper.make_tensor_value_info('x', F, [128, 256]),
          helper.make_tensor_value_info('a', F, [128, 256]),
          helper.make_tensor_value_info('b', F, [128, 256])]
outputs = [helper.make_tensor_value_info('y', F, [128, 128]),
           helper.make_tensor_value_info('z', F, [128, 128])]
inits = [numpy_helper.from_array(v, n) for n, v in
         (('w1', w1), ('b1', b1), ('w2', w2))]
g = helper.make_graph(nodes, 'matmul_fp8', inputs, outputs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')
x = rng.standard_normal((128, 256)).astype(np.float32)
a = rng.standard_normal((128, 256)).astype(np.float32)
b = (rng.standard_normal((128, 256)) * 3).astype(np.float32)
d = np.float64
y = np.maximum(x.astype(d) @ w1.astype(d) + b1, 0) @ w2.astype(d)
z = a.astype(d) @ b.astype(d).T
os.makedirs('test_data_set_0', exist_ok=True)
for i, (n, v) in enumerate((('x', x), ('a', a), ('b', b))):
    open('test_data_set_0/input_%d.pb' % i, 'wb').write(numpy_helper.from_array(v, n).SerializeToString())
for i, (n, v) in enumerate((('y', y), ('z', z))):
    open('test_data_set_0/output_%d.pb' % i, 'wb').write(numpy_helper.from_array(v.astype(np.float32), n).SerializeToString())
