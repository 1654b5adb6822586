"""Builds the recurrent fixtures (models + numpy reference outputs).

Run with a Python that has onnx and numpy: python3 gen.py
"""
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE); import ref
rng = np.random.default_rng(0)

def make(name, cell, S, Bt, I, H, direction='forward', layout=0, lens=None, use_B=True, use_h0=True,
         use_c0=True, use_P=True, acts=None, alphas=(), betas=(), clip=None, input_forget=0, lbr=0,
         dtype=np.float32, outputs=(1, 1, 1), opset=14):
    D = 2 if direction == 'bidirectional' else 1
    G = {'rnn': 1, 'lstm': 4, 'gru': 3}[cell]
    xs = (Bt, S, I) if layout else (S, Bt, I)
    hs = (Bt, D, H) if layout else (D, Bt, H)
    vals = [('X', rng.standard_normal(xs)), ('W', rng.standard_normal((D, G * H, I)) * 0.5),
            ('R', rng.standard_normal((D, G * H, H)) * 0.5)]
    vals.append(('B', rng.standard_normal((D, 2 * G * H)) * 0.5 if use_B else None))
    vals.append(('sequence_lens', None if lens is None else np.array(lens, np.int32)))
    vals.append(('initial_h', rng.standard_normal(hs) if use_h0 else None))
    if cell == 'lstm':
        vals.append(('initial_c', rng.standard_normal(hs) if use_c0 else None))
        vals.append(('P', rng.standard_normal((D, 3 * H)) * 0.5 if use_P else None))
    vals = [(n, None if v is None else (v if v.dtype == np.int32 else v.astype(dtype))) for n, v in vals]
    while vals[-1][1] is None: vals.pop()
    get = {n: v for n, v in vals}
    attrs = dict(hidden_size=H, direction=direction)
    if opset >= 14: attrs['layout'] = layout
    if acts: attrs['activations'] = acts
    if alphas: attrs['activation_alpha'] = list(alphas)
    if betas: attrs['activation_beta'] = list(betas)
    if clip: attrs['clip'] = clip
    if input_forget: attrs['input_forget'] = 1
    if lbr: attrs['linear_before_reset'] = 1
    nouts = 3 if cell == 'lstm' else 2
    onames = [['Y', 'Y_h', 'Y_c'][i] if outputs[i] else '' for i in range(nouts)]
    node = helper.make_node(cell.upper(), [n if v is not None else '' for n, v in vals], onames, **attrs)
    et = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    res = ref.run(cell, get['X'], get['W'], get['R'], B=get.get('B'), lens=get.get('sequence_lens'),
                  h0=get.get('initial_h'), c0=get.get('initial_c'), P=get.get('P'), direction=direction,
                  activations=acts, alphas=alphas, betas=betas, clip=clip, input_forget=input_forget,
                  lbr=lbr, layout=layout)
    ginputs = [helper.make_tensor_value_info(n, TensorProto.INT32 if v.dtype == np.int32 else et, v.shape)
               for n, v in vals if v is not None]
    goutputs, odata = [], []
    for i, o in enumerate(onames):
        if o:
            goutputs.append(helper.make_tensor_value_info(o, et, res[i].shape))
            odata.append(res[i].astype(dtype))
    g = helper.make_graph([node], name, ginputs, goutputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 7
    d = os.path.join(HERE, name); os.makedirs(d + '/test_data_set_0', exist_ok=True)
    onnx.save(m, d + '/model.onnx')
    for i, (n, v) in enumerate([(n, v) for n, v in vals if v is not None]):
        onnx.save_tensor(numpy_helper.from_array(v, n), f'{d}/test_data_set_0/input_{i}.pb')
    for i, v in enumerate(odata):
        onnx.save_tensor(numpy_helper.from_array(v), f'{d}/test_data_set_0/output_{i}.pb')

# Ragged runtime sequence lengths (0 included), clip, peepholes, layout 1,
# every activation, GRU in both reset modes, an opset-7 model and f16.
make('lstm_bidi_lens_clip', 'lstm', 5, 3, 4, 6, 'bidirectional', lens=[5, 2, 3], clip=2.5)
make('lstm_rev_lens_layout1', 'lstm', 4, 3, 2, 3, 'reverse', layout=1, lens=[1, 4, 0], use_P=False)
make('lstm_acts_forget', 'lstm', 4, 2, 3, 5, 'bidirectional',
     acts=['HardSigmoid', 'LeakyRelu', 'Softsign', 'Affine', 'ScaledTanh', 'Elu'],
     alphas=[0.3, 0.05, 0.7, 1.1, 0.9], betas=[0.4, 0.2, 0.8], input_forget=1, use_h0=False)
make('gru_bidi_lbr_layout1', 'gru', 6, 2, 3, 4, 'bidirectional', layout=1, lens=[6, 3], lbr=1)
make('gru_rev_lens', 'gru', 5, 3, 3, 4, 'reverse', lens=[2, 5, 4], use_B=False)
make('gru_acts', 'gru', 3, 2, 3, 4, 'forward', acts=['Softplus', 'ThresholdedRelu'], alphas=[0.2], use_h0=False,
     outputs=(0, 1))
make('rnn_bidi_relu_layout1', 'rnn', 5, 2, 3, 4, 'bidirectional', layout=1, lens=[3, 5], acts=['Relu', 'Tanh'])
make('rnn_opset7', 'rnn', 4, 2, 3, 4, 'bidirectional', opset=7, use_h0=False)
make('lstm_f16', 'lstm', 4, 2, 3, 4, 'bidirectional', dtype=np.float16, lens=[4, 2])
