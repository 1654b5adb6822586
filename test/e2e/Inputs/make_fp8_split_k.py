# Makes an fp8 model whose first contraction is a split-K kernel that also
# computes the amax of its result (ridge-move-scale-reductions-to-producers):
# x[128, 2048] @ w1[2048, 128] (4 output tiles over 2048 of k: split-K), ReLU,
# @ w2[128, 512]. Writes OUT/model.onnx and OUT/test_data_set_0 (the input and
# the float64 output). Usage: make_fp8_split_k.py OUT
import sys, os, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(11)
F = TensorProto.FLOAT
w1 = (rng.standard_normal((2048, 128)) * 0.02).astype(np.float32)
w2 = (rng.standard_normal((128, 512)) * 0.08).astype(np.float32)
nodes = [helper.make_node('MatMul', ['x', 'w1'], ['h0']),
         helper.make_node('Relu', ['h0'], ['h']),
         helper.make_node('MatMul', ['h', 'w2'], ['y'])]
g = helper.make_graph(nodes, 'split_k_fp8',
                      [helper.make_tensor_value_info('x', F, [128, 2048])],
                      [helper.make_tensor_value_info('y', F, [128, 512])],
                      [numpy_helper.from_array(w1, 'w1'), numpy_helper.from_array(w2, 'w2')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
os.makedirs(os.path.join(out, 'test_data_set_0'), exist_ok=True)
onnx.save(m, os.path.join(out, 'model.onnx'))
x = rng.standard_normal((128, 2048)).astype(np.float32)
d = np.float64
y = np.maximum(x.astype(d) @ w1.astype(d), 0) @ w2.astype(d)
open(os.path.join(out, 'test_data_set_0', 'input_0.pb'), 'wb').write(numpy_helper.from_array(x, 'x').SerializeToString())
open(os.path.join(out, 'test_data_set_0', 'output_0.pb'), 'wb').write(numpy_helper.from_array(y.astype(np.float32), 'y').SerializeToString())
