"""Numpy reference for ONNX RNN/LSTM/GRU with sequence_lens, layout, clip."""
import numpy as np

def act(name, x, alpha, beta):
    n = name.lower()
    if n == 'sigmoid': return 1 / (1 + np.exp(-x))
    if n == 'tanh': return np.tanh(x)
    if n == 'relu': return np.maximum(x, 0)
    if n == 'affine': return alpha * x + beta
    if n == 'hardsigmoid': return np.clip(alpha * x + beta, 0, 1)
    if n == 'leakyrelu': return np.where(x < 0, alpha * x, x)
    if n == 'thresholdedrelu': return np.where(x > alpha, x, 0)
    if n == 'scaledtanh': return alpha * np.tanh(beta * x)
    if n == 'elu': return np.where(x < 0, alpha * (np.exp(x) - 1), x)
    if n == 'softsign': return x / (1 + np.abs(x))
    if n == 'softplus': return np.log1p(np.exp(x))
    raise ValueError(n)

ALPHA = {'leakyrelu': 0.01, 'hardsigmoid': 0.2}
BETA = {'hardsigmoid': 0.5, 'scaledtanh': 1.0}
TAKES_A = {'affine', 'leakyrelu', 'thresholdedrelu', 'scaledtanh', 'hardsigmoid', 'elu'}
TAKES_B = {'affine', 'scaledtanh', 'hardsigmoid'}

def run(cell, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction='forward',
        activations=None, alphas=(), betas=(), clip=None, input_forget=0, lbr=0, layout=0):
    X = X.astype(np.float64)
    if layout == 1:
        X = X.transpose(1, 0, 2)
        if h0 is not None: h0 = h0.transpose(1, 0, 2)
        if c0 is not None: c0 = c0.transpose(1, 0, 2)
    S, Bt, I = X.shape
    D = 2 if direction == 'bidirectional' else 1
    H = R.shape[2]
    G = {'rnn': 1, 'lstm': 4, 'gru': 3}[cell]
    per = {'rnn': 1, 'lstm': 3, 'gru': 2}[cell]
    if activations is None:
        activations = {'rnn': ['Tanh'], 'lstm': ['Sigmoid', 'Tanh', 'Tanh'], 'gru': ['Sigmoid', 'Tanh']}[cell] * D
    ai = bi = 0
    acts = []
    for a in activations:
        n = a.lower(); al = ALPHA.get(n, 1.0); be = BETA.get(n, 0.0)
        if n in TAKES_A and ai < len(alphas): al = alphas[ai]; ai += 1
        if n in TAKES_B and bi < len(betas): be = betas[bi]; bi += 1
        acts.append((n, al, be))
    if B is None: B = np.zeros((D, 2 * G * H))
    if lens is None: lens = np.full(Bt, S)
    if h0 is None: h0 = np.zeros((D, Bt, H))
    if c0 is None: c0 = np.zeros((D, Bt, H))
    if P is None: P = np.zeros((D, 3 * H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Y = np.zeros((S, D, Bt, H)); YH = np.zeros((D, Bt, H)); YC = np.zeros((D, Bt, H))
    for d in range(D):
        rev = direction == 'reverse' or d == 1
        f = lambda k, v: act(acts[d * per + k][0], v, acts[d * per + k][1], acts[d * per + k][2])
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        wb, rb = B[d, :G * H].astype(np.float64), B[d, G * H:].astype(np.float64)
        h = h0[d].astype(np.float64).copy(); c = c0[d].astype(np.float64).copy()
        p = P[d].astype(np.float64)
        for step in range(S):
            t = S - 1 - step if rev else step
            x = X[t]
            valid = (t < lens)[:, None]
            xw = x @ w.T + wb
            hr = h @ r.T + rb
            if cell == 'rnn':
                hn = f(0, cl(xw + hr)); cn = c
            elif cell == 'lstm':
                sl = lambda a, k: a[:, k * H:(k + 1) * H]
                i = f(0, cl(sl(xw, 0) + sl(hr, 0) + p[:H] * c))
                if input_forget:
                    fg = 1 - i
                else:
                    fg = f(0, cl(sl(xw, 2) + sl(hr, 2) + p[2 * H:] * c))
                cc = f(1, cl(sl(xw, 3) + sl(hr, 3)))
                cn = fg * c + i * cc
                o = f(0, cl(sl(xw, 1) + sl(hr, 1) + p[H:2 * H] * cn))
                hn = o * f(2, cn)
            else:
                sl = lambda a, k: a[:, k * H:(k + 1) * H]
                z = f(0, cl(sl(xw, 0) + sl(hr, 0)))
                rg = f(0, cl(sl(xw, 1) + sl(hr, 1)))
                if lbr:
                    hh = f(1, cl(sl(xw, 2) + rg * sl(hr, 2)))
                else:
                    hh = f(1, cl(sl(xw, 2) + (rg * h) @ r[2 * H:].T + rb[2 * H:]))
                hn = (1 - z) * hh + z * h; cn = c
            Y[t, d] = np.where(valid, hn, 0)
            h = np.where(valid, hn, h); c = np.where(valid, cn, c)
        YH[d] = h; YC[d] = c
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3); YH = YH.transpose(1, 0, 2); YC = YC.transpose(1, 0, 2)
    return Y, YH, YC
