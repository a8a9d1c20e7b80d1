"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells.

Every time step runs one matmul over the stacked gate weights (``weight_hh``); the input
projection of all time steps of a layer is a single matmul before the loop.  Sequences are
always processed in packed form (a padded batch is a packed sequence whose batch sizes are all
equal), which gives ``PackedSequence`` support and plain inputs one code path.
"""

import math
import numbers

from .. import _C
from .parameter import Parameter
from .modules import Module
from . import functional as F
from . import init
from .utils.rnn import PackedSequence


def _ft():
    import ferrotorch
    return ferrotorch


# -- single-step gate math ----------------------------------------------------------------

def _rnn_tanh_step(gi, h, c, w_hh, b_hh, w_hr):
    g = gi + F.linear(h, w_hh, b_hh)
    return g.tanh(), None


def _rnn_relu_step(gi, h, c, w_hh, b_hh, w_hr):
    g = gi + F.linear(h, w_hh, b_hh)
    return g.relu(), None


def _fusable(*ts):
    """The fused cells take 2-D float32/float64 CPU operands of one dtype (the layers' own case)."""
    ft = _ft()
    dt = ts[0].dtype
    return dt in (ft.float32, ft.float64) and all(t.dtype == dt and t.dim() == 2 and not t.is_cuda for t in ts)


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr):
    gh = F.linear(h, w_hh, b_hh)
    if _fusable(gi, gh, c):
        h_new, c_new = _C._fused_lstm_cell(gi, gh, c)
    else:
        i, f, gg, o = (gi + gh).chunk(4, -1)
        c_new = f.sigmoid() * c + i.sigmoid() * gg.tanh()
        h_new = o.sigmoid() * c_new.tanh()
    if w_hr is not None:
        h_new = F.linear(h_new, w_hr)
    return h_new, c_new


def _gru_step(gi, h, c, w_hh, b_hh, w_hr):
    gh = F.linear(h, w_hh, b_hh)
    if _fusable(gi, gh, h):
        return _C._fused_gru_cell(gi, gh, h), None
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n), None


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _run_direction(mode, data, batch_sizes, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, reverse):
    """Runs one layer in one direction over packed ``data``; returns (packed output, h_n, c_n).

    ``h0``/``c0`` hold the whole batch; at step ``t`` only the first ``batch_sizes[t]`` rows are
    active (packed batches are sorted by decreasing length), so rows past the active count keep
    their final state (forward) or their initial state (reverse) without any masking.
    """
    step = _STEPS[mode]
    gi_all = F.linear(data, w_ih, b_ih)
    # One split node for all steps: its backward concatenates the step gradients once,
    # where per-step slices would each scatter into a full-size buffer.
    gi_steps = gi_all.split(list(batch_sizes), 0)
    h, c = h0, c0
    steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    outs = [None] * len(batch_sizes)
    full = batch_sizes[0]
    for t in steps:
        bs = batch_sizes[t]
        gi = gi_steps[t]
        if bs == full:
            h_new, c_new = step(gi, h, c, w_hh, b_hh, w_hr)
            h = h_new
            if c is not None:
                c = c_new
        else:
            h_new, c_new = step(gi, h[:bs], None if c is None else c[:bs], w_hh, b_hh, w_hr)
            h = _ft().cat([h_new, h[bs:]], 0)
            if c is not None:
                c = _ft().cat([c_new, c[bs:]], 0)
        outs[t] = h_new
    return _ft().cat(outs, 0), h, c


class RNNBase(Module):
    """Base class of :class:`RNN`, :class:`LSTM` and :class:`GRU`.

    Holds the per-layer, per-direction weights under PyTorch's names
    (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}`` and the ``_reverse`` suffix for the backward direction).
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] "
                             "representing the probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero "
                          f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                kw = dict(dtype=dtype, device=device)
                params = [Parameter(_C.empty(gate_size, layer_input, **kw)),
                          Parameter(_C.empty(gate_size, real_hidden, **kw))]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [Parameter(_C.empty(gate_size, **kw)), Parameter(_C.empty(gate_size, **kw))]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(_C.empty(proj_size, hidden_size, **kw)))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for n, p in zip(names, params):
                    setattr(self, n, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """Parameters grouped per layer and direction, in PyTorch's order."""
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        """No-op: there is no cuDNN weight buffer to compact on this backend."""
        return None

    def reset_parameters(self):
        """Every weight and bias uniform in ``±1/sqrt(hidden_size)``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        g = lambda n: getattr(self, f"{n}_l{layer}{suffix}", None)  # noqa: E731
        return g("weight_ih"), g("weight_hh"), g("bias_ih"), g("bias_hh"), g("weight_hr")

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- checks ----------------------------------------------------------------------------

    def check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. "
                               f"Expected {self.input_size}, got {input.size(-1)}")

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.shape)))

    # -- forward ---------------------------------------------------------------------------

    def _prepare(self, input, hx):
        """Normalises input to packed form; returns (data, batch_sizes, sorted, unsorted, batched, is_packed)."""
        is_packed = isinstance(input, PackedSequence)
        if is_packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes.tolist()]
            self.check_input(data, batch_sizes)
            return data, batch_sizes, sorted_indices, unsorted_indices, True, True
        name = "LSTM" if self.mode == "LSTM" else ("GRU" if self.mode == "GRU" else "RNN")
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        self.check_input(input, None)
        T, B = input.shape[0], input.shape[1]
        return input.reshape(T * B, input.shape[2]), [B] * T, None, None, batched, False

    def _run(self, data, batch_sizes, h0, c0):
        num_directions = 2 if self.bidirectional else 1
        hs, cs = [], []
        layer_input = data
        for layer in range(self.num_layers):
            outs = []
            for d in range(num_directions):
                idx = layer * num_directions + d
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, d)
                out, h, c = _run_direction(self.mode, layer_input, batch_sizes, h0[idx],
                                           None if c0 is None else c0[idx], w_ih, w_hh, b_ih, b_hh,
                                           w_hr, d == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_input = outs[0] if num_directions == 1 else _ft().cat(outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, p=self.dropout, training=True)
        h_n = _ft().stack(hs, 0)
        c_n = _ft().stack(cs, 0) if c0 is not None else None
        return layer_input, h_n, c_n

    def _finish(self, out_data, batch_sizes, sorted_indices, unsorted_indices, batched, is_packed, orig):
        if is_packed:
            return PackedSequence(out_data, orig.batch_sizes, sorted_indices, unsorted_indices)
        T, B = len(batch_sizes), batch_sizes[0]
        out = out_data.reshape(T, B, out_data.shape[-1])
        if not batched:
            return out.squeeze(1)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out

    def _zeros_state(self, size, B, like):
        num_directions = 2 if self.bidirectional else 1
        return _ft().zeros(self.num_layers * num_directions, B, size, dtype=like.dtype, device=like.device)

    def forward(self, input, hx=None):
        orig = input
        data, batch_sizes, sorted_idx, unsorted_idx, batched, is_packed = self._prepare(input, hx)
        B = batch_sizes[0]
        num_directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * num_directions, B, self.hidden_size)
        if hx is None:
            h0 = self._zeros_state(self.hidden_size, B, data)
        else:
            if not is_packed and not batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif not is_packed and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            if sorted_idx is not None:
                hx = hx.index_select(1, sorted_idx)
            self._check_hidden(hx, expected)
            h0 = hx
        out_data, h_n, _ = self._run(data, batch_sizes, h0, None)
        if unsorted_idx is not None:
            h_n = h_n.index_select(1, unsorted_idx)
        if not is_packed and not batched:
            h_n = h_n.squeeze(1)
        return self._finish(out_data, batch_sizes, sorted_idx, unsorted_idx, batched, is_packed, orig), h_n


class RNN(RNNBase):
    r"""Multi-layer Elman RNN with ``tanh`` or ``ReLU`` non-linearity.

    .. math:: h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})

    Args:
        input_size: features of the input ``x``.
        hidden_size: features of the hidden state ``h``.
        num_layers: number of stacked recurrent layers. Default: 1
        nonlinearity: ``'tanh'`` or ``'relu'``. Default: ``'tanh'``
        bias: use ``b_ih`` and ``b_hh``. Default: ``True``
        batch_first: input and output are ``(batch, seq, feature)``. Default: ``False``
        dropout: dropout on the outputs of every layer but the last. Default: 0
        bidirectional: run a reverse direction too. Default: ``False``

    Inputs: ``input, hx``; outputs: ``output, h_n``, as in PyTorch.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    r"""Multi-layer gated recurrent unit (GRU) RNN.

    .. math::
        r_t = \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}),\quad
        z_t = \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
        n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})),\quad
        h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}

    Arguments as :class:`RNN` (without ``nonlinearity``).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    r"""Multi-layer long short-term memory (LSTM) RNN.

    .. math::
        i_t, f_t, g_t, o_t = \text{split}(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}) \\
        c_t = \sigma(f_t) \odot c_{t-1} + \sigma(i_t) \odot \tanh(g_t),\quad
        h_t = \sigma(o_t) \odot \tanh(c_t)

    With ``proj_size > 0`` the hidden state is projected, ``h_t = W_{hr} h_t``.
    Arguments as :class:`RNN` plus ``proj_size``; inputs ``input, (h_0, c_0)``; outputs
    ``output, (h_n, c_n)``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        orig = input
        data, batch_sizes, sorted_idx, unsorted_idx, batched, is_packed = self._prepare(input, hx)
        B = batch_sizes[0]
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_exp = (self.num_layers * num_directions, B, real_hidden)
        c_exp = (self.num_layers * num_directions, B, self.hidden_size)
        if hx is None:
            h0 = self._zeros_state(real_hidden, B, data)
            c0 = self._zeros_state(self.hidden_size, B, data)
        else:
            h0, c0 = hx
            if not is_packed and not batched:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            elif not is_packed and (h0.dim() != 3 or c0.dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            if sorted_idx is not None:
                h0, c0 = h0.index_select(1, sorted_idx), c0.index_select(1, sorted_idx)
            self._check_hidden(h0, h_exp)
            self._check_hidden(c0, c_exp, "Expected hidden[1] size {}, got {}")
        out_data, h_n, c_n = self._run(data, batch_sizes, h0, c0)
        if unsorted_idx is not None:
            h_n, c_n = h_n.index_select(1, unsorted_idx), c_n.index_select(1, unsorted_idx)
        if not is_packed and not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        out = self._finish(out_data, batch_sizes, sorted_idx, unsorted_idx, batched, is_packed, orig)
        return out, (h_n, c_n)


# -- cells ---------------------------------------------------------------------------------

class RNNCellBase(Module):
    """Shared parameters (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``) of the cells."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = dict(dtype=dtype, device=device)
        self.weight_ih = Parameter(_C.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(_C.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        """Every weight and bias uniform in ``±1/sqrt(hidden_size)``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _batch(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and not isinstance(hx, tuple) and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                               f"{self.input_size}")
        return input, batched

    def _check_h(self, input, h, i=""):
        if h.size(0) != input.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch "
                               f"size {h.size(0)}")
        if h.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected "
                               f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, batched = self._batch(input, hx, "RNNCell")
        if hx is None:
            hx = _ft().zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check_h(input, hx)
        step = _rnn_tanh_step if self.nonlinearity == "tanh" else _rnn_relu_step
        h, _ = step(F.linear(input, self.weight_ih, self.bias_ih), hx, None, self.weight_hh, self.bias_hh, None)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""A long short-term memory cell; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and not isinstance(hx, tuple):
            hx = tuple(hx)
        input, batched = self._batch(input, None, "LSTMCell")
        if hx is None:
            z = _ft().zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (z, z)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_h(input, hx[0], "[0]")
        self._check_h(input, hx[1], "[1]")
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), hx[0], hx[1],
                          self.weight_hh, self.bias_hh, None)
        if not batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    r"""A gated recurrent unit cell."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._batch(input, hx, "GRUCell")
        if hx is None:
            hx = _ft().zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check_h(input, hx)
        h, _ = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, None, self.weight_hh,
                         self.bias_hh, None)
        return h if batched else h.squeeze(0)
