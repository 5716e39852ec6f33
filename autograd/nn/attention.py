"""Multi-head attention (torch.nn.MultiheadAttention), with the Linear subclass PyTorch uses for
its output projection, so that a torch state_dict (in_proj_weight, in_proj_bias,
out_proj.weight, out_proj.bias, ...) loads as it is."""

from autograd import factories
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.linear import Linear
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear (PyTorch marks MultiheadAttention.out_proj with this class; here it only
    carries the name)."""


class MultiheadAttention(Module):
    """Attention over num_heads heads of size embed_dim // num_heads:
    out_proj(concat_h(softmax(q_h k_h^T / sqrt(head_dim) + mask) v_h)), q, k, v projected from
    query, key, value. kdim/vdim other than embed_dim give separate q/k/v_proj_weight instead of
    the packed in_proj_weight (3 embed_dim, embed_dim). add_bias_kv appends learned bias_k and
    bias_v to the keys and values, add_zero_attn a zero key and value. batch_first: inputs
    (N, L, E) instead of (L, N, E). Initialisation as PyTorch: xavier_uniform_ projections,
    zero biases, xavier_normal_ bias_k/bias_v. AssertionError when embed_dim is not divisible
    by num_heads; ValueError for embed_dim or num_heads <= 0."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(factories.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(factories.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(factories.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(factories.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(factories.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(factories.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(factories.empty((1, 1, embed_dim), **kw))
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

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights): see torch.nn.functional.multi_head_attention_forward;
        attn_weights is None unless need_weights. key_padding_mask (N, S) and attn_mask (L, S)
        or (N*num_heads, L, S) are bool (True = masked out) or float (added)."""
        is_batched = query.ndim == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             None if attn_mask is None else attn_mask.dtype,
                                             "attn_mask", query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights
