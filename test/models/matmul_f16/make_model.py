# Makes test/models/matmul_f16: run in that folder with numpy and onnx.
# f16 operands in memory: the tensor-core kernels copy them into shared
# memory with cp.async (3+ stages) instead of staging them through registers.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
H = TensorProto.FLOAT16
nodes = [
  helper.make_node('MatMul', ['a', 'b'], ['c']),
  helper.make_node('Gemm', ['x', 'w', 'bias'], ['y'], transB=1, alpha=0.5),
]
w = (rng.standard_normal((40, 96)) * 0.2).astype(np.float16)
bias = rng.standard_normal((40,)).astype(np.float16)
inputs = [helper.make_tensor_value_info('a', H, [2, 72, 64]),
          helper.make_tensor_value_info('b', H, [2, 64, 80]),
          helper.make_tensor_value_info('x', H, [56, 96])]
outputs = [helper.make_tensor_value_info('c', H, [2, 72, 80]),
           helper.make_tensor_value_info('y', H, [56, 40])]
g = helper.make_graph(nodes, 'matmul_f16', inputs, outputs,
                      [numpy_helper.from_array(w, 'w'),
                       numpy_helper.from_array(bias, 'bias')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')
a = (rng.standard_normal((2, 72, 64)) * 0.5).astype(np.float16)
b = (rng.standard_normal((2, 64, 80)) * 0.5).astype(np.float16)
x = rng.standard_normal((56, 96)).astype(np.float16)
# f16 products are exact in f32; f32 accumulation; f16 results.
c = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
y = (0.5 * (x.astype(np.float32) @ w.astype(np.float32).T)).astype(np.float16)
y = (y.astype(np.float32) + bias.astype(np.float32)).astype(np.float16)
os.makedirs('test_data_set_0', exist_ok=True)
for i, (n, v) in enumerate((('a', a), ('b', b), ('x', x))):
    open('test_data_set_0/input_%d.pb' % i, 'wb').write(numpy_helper.from_array(v, n).SerializeToString())
for i, (n, v) in enumerate((('c', c), ('y', y))):
    open('test_data_set_0/output_%d.pb' % i, 'wb').write(numpy_helper.from_array(v, n).SerializeToString())
