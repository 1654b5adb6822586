# Makes test/models/mlp_fp8_gated: run in that folder with numpy and onnx.
# A LLaMA-style gated MLP, down(silu(x Wg) * (x Wu)), at shapes that are
# compute-bound on the H100's fp32 roofline (30 FLOP/B), so --precision=fp8
# quantizes all three MatMuls: the gate and up projections share one
# activation and become one kernel of two products, and k = 200 leaves a
# partial k tile of 8 (the tail of the 16-byte loads that quantize the
# activation). The reference is float64, unquantized.
import onnx, numpy as np, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(5)
F = TensorProto.FLOAT
wg = (rng.standard_normal((200, 256)) * 0.07).astype(np.float32)
wu = (rng.standard_normal((200, 256)) * 0.07).astype(np.float32)
wd = (rng.standard_normal((256, 200)) * 0.06).astype(np.float32)
nodes = [
  helper.make_node('MatMul', ['x', 'wg'], ['g']),
  helper.make_node('Sigmoid', ['g'], ['s']),
  helper.make_node('Mul', ['g', 's'], ['silu']),
  helper.make_node('MatMul', ['x', 'wu'], ['u']),
  helper.make_node('Mul', ['silu', 'u'], ['h']),
  helper.make_node('MatMul', ['h', 'wd'], ['y']),
]
inputs = [helper.make_tensor_value_info('x', F, [128, 200])]
outputs = [helper.make_tensor_value_info('y', F, [128, 200])]
inits = [numpy_helper.from_array(v, n) for n, v in
         (('wg', wg), ('wu', wu), ('wd', wd))]
g = helper.make_graph(nodes, 'mlp_fp8_gated', inputs, outputs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, 'model.onnx')
x = rng.standard_normal((128, 200)).astype(np.float32)
d = np.float64
gate = x.astype(d) @ wg.astype(d)
y = ((gate / (1 + np.exp(-gate))) * (x.astype(d) @ wu.astype(d))) @ wd.astype(d)
os.makedirs('test_data_set_0', exist_ok=True)
open('test_data_set_0/input_0.pb', 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
open('test_data_set_0/output_0.pb', 'wb').write(numpy_helper.from_array(y.astype(np.float32), 'y').SerializeToString())
