"""Attention and transformer layers: ``MultiheadAttention``, ``Transformer`` and its parts."""

import copy
import math

from .. import _C
from .parameter import Parameter
from .modules import Module, Linear, LayerNorm, Dropout, ModuleList
from . import functional as F
from . import init


def _ft():
    import ferrotorch
    return ferrotorch


def _canonical_mask(mask, mask_name, target_dtype):
    """Bool masks become additive float masks (``-inf`` where ``True``); float masks pass through."""
    if mask is None:
        return None
    ft = _ft()
    if mask.dtype == ft.bool:
        return ft.zeros(tuple(mask.shape), dtype=target_dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    return mask


def _pad_last(t, n=1):
    """Appends ``n`` zero columns to the last dim of a mask."""
    ft = _ft()
    return ft.cat([t, ft.zeros(tuple(t.shape[:-1]) + (n,), dtype=t.dtype)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                                 out_proj_bias, training=True, key_padding_mask=None, need_weights=True,
                                 attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights=True, is_causal=False):
    r"""Functional multi-head attention, as :class:`~torch.nn.MultiheadAttention` computes it.

    Inputs are ``(L, N, E)`` (or unbatched ``(L, E)``); returns ``(attn_output, attn_weights)``
    where ``attn_weights`` is ``(N, L, S)`` averaged over heads, ``(N, num_heads, L, S)`` with
    ``average_attn_weights=False``, or ``None`` with ``need_weights=False``.
    """
    ft = _ft()
    is_batched = query.dim() == 3
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {'batched (3-D)' if is_batched else 'unbatched (2-D)'} `query`, expected "
                             f"`key` and `value` to be {query.dim()}-D but found {key.dim()}-D and "
                             f"{value.dim()}-D tensors respectively")
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)

    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.chunk(3, 0)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3, 0)
    q = F.linear(query, w_q, b_q)
    k = F.linear(key, w_k, b_k)
    v = F.linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        k = ft.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = ft.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)

    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = ft.cat([k, ft.zeros(zshape, dtype=k.dtype)], 1)
        v = ft.cat([v, ft.zeros(zshape, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0
    scores = ft.bmm(q * (1.0 / math.sqrt(head_dim)), k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = F.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = ft.bmm(weights, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` (the output projection of :class:`MultiheadAttention`)."""


class MultiheadAttention(Module):
    r"""Multi-head attention, ``MultiHead(Q, K, V) = Concat(head_1..head_h) W^O``.

    Args:
        embed_dim: model dimension. num_heads: parallel heads (``embed_dim`` divisible by it).
        dropout: dropout on the attention weights. bias: input/output projection biases.
        add_bias_kv: learnt bias appended to key and value sequences. add_zero_attn: append a
        zero batch to key and value. kdim, vdim: key/value feature sizes (default ``embed_dim``).
        batch_first: inputs and outputs are ``(batch, seq, feature)``.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                             f"and num_heads={num_heads} instead")
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_C.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(_C.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(_C.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_C.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_C.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(_C.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Returns ``(attn_output, attn_output_weights)``; see :func:`multi_head_attention_forward`."""
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        common = dict(training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                      attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not self._qkv_same_embed_dim:
            out, w = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight, **common)
        else:
            out, w = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
                self.out_proj.bias, **common)
        if self.batch_first and is_batched:
            out = out.transpose(0, 1)
        return out, w


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoderLayer(Module):
    r"""Self-attention then a feed-forward block, each with residual and LayerNorm.

    ``norm_first=True`` applies the LayerNorms before each block (pre-LN); ``activation`` is
    ``"relu"``, ``"gelu"`` or a unary callable.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """Runs the layer; masks as in :class:`MultiheadAttention`."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal and attn_mask is not None)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder memory, then a feed-forward block."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """Runs the layer over ``tgt`` attending to ``memory``."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal and attn_mask is not None, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal and attn_mask is not None, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` copies of ``encoder_layer``, with an optional final ``norm``."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Passes ``src`` through every layer in turn."""
        out = src
        for mod in self.layers:
            out = mod(out, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` copies of ``decoder_layer``, with an optional final ``norm``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Passes ``tgt`` through every layer, each attending to ``memory``."""
        out = tgt
        for mod in self.layers:
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Module):
    r"""The encoder-decoder transformer of "Attention Is All You Need".

    Args as PyTorch: ``d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    dim_feedforward=2048, dropout=0.1, activation=relu, custom_encoder=None, custom_decoder=None,
    layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True``.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Encodes ``src`` and decodes ``tgt`` against it."""
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float ``(sz, sz)`` causal mask: ``-inf`` above the diagonal, ``0`` elsewhere."""
        ft = _ft()
        return ft.full((sz, sz), float("-inf"), dtype=dtype if dtype is not None else ft.float32).triu(1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
