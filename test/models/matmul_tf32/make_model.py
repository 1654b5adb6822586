# Makes test/models/matmul_tf32: run in that folder with numpy and onnx.
# f32 contractions of 64 (10.7 FLOP/B, compute-bound on the A100's fp32
# roofline: --precision=tf32 --gpu=A100-SXM-80GB rounds all three) in the
# three staging shapes of the tf32 kernel: a batched MatMul with a broadcast
# [K, N] weight and a bias + Tanh epilogue (B MN-major), a Gemm with transB
# and bias (B K-major) and a Gemm with transA (A MN-major). The reference is
# float64, unrounded.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
F = TensorProto.FLOAT
w1 = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
b1 = rng.standard_normal((64,)).astype(np.float32)
w2 = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
c2 = rng.standard_normal((64,)).astype(np.float32)
w3 = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
nodes = [
  helper.make_node('MatMul', ['x3', 'w1'], ['y1']),
  helper.make_node('Add', ['y1', 'b1'], ['z1']),
  helper.make_node('Tanh', ['z1'], ['out0']),
  helper.make_node('Gemm', ['x2', 'w2', 'c2'], ['out1'], transB=1),
  helper.make_node('Gemm', ['a', 'w3'], ['out2'], transA=1),
]
inputs = [helper.make_tensor_value_info('x3', F, [2, 64, 64]),
          helper.make_tensor_value_info('x2', F, [64, 64]),
          helper.make_tensor_value_info('a', F, [64, 64])]
outputs = [helper.make_tensor_value_info('out0', F, [2, 64, 64]),
           helper.make_tensor_value_info('out1', F, [64, 64]),
           helper.make_tensor_value_info('out2', F, [64, 64])]
inits = [numpy_helper.from_array(v, n) for n, v in
         (('w1', w1), ('b1', b1), ('w2', w2), ('c2', c2), ('w3', w3))]
g = helper.make_graph(nodes, 'matmul_tf32', inputs, outputs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')
x3 = rng.standard_normal((2, 64, 64)).astype(np.float32)
x2 = rng.standard_normal((64, 64)).astype(np.float32)
a = rng.standard_normal((64, 64)).astype(np.float32)
d = np.float64
out0 = np.tanh(x3.astype(d) @ w1.astype(d) + b1)
out1 = x2.astype(d) @ w2.astype(d).T + c2
out2 = a.astype(d).T @ w3.astype(d)
os.makedirs('test_data_set_0', exist_ok=True)
for i, (n, v) in enumerate((('x3', x3), ('x2', x2), ('a', a))):
    open('test_data_set_0/input_%d.pb' % i, 'wb').write(numpy_helper.from_array(v, n).SerializeToString())
for i, (n, v) in enumerate((('out0', out0), ('out1', out1), ('out2', out2))):
    open('test_data_set_0/output_%d.pb' % i, 'wb').write(numpy_helper.from_array(v.astype(np.float32), n).SerializeToString())
