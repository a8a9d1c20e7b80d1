"""Variable-length sequence utilities: padding, packing (``PackedSequence``) and back.

Packing keeps autograd: the packed ``data`` is built from slices of the padded input with
``cat``/``index_select``, one slice per time step (never per element).
"""

from collections.abc import Iterable
from typing import NamedTuple

from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _ft():
    import ferrotorch

    return ferrotorch


class PackedSequence_(NamedTuple):
    data: object
    batch_sizes: object
    sorted_indices: object
    unsorted_indices: object


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    r"""Holds the data and list of :attr:`batch_sizes` of a packed sequence.

    All RNN modules accept packed sequences as inputs. Instances should be created by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand.

    Attributes:
        data (Tensor): Tensor containing packed sequence
        batch_sizes (Tensor): Tensor of integers holding information about the batch size at each sequence step
        sorted_indices (Tensor, optional): Tensor of integers holding how this
            :class:`PackedSequence` is constructed from sequences.
        unsorted_indices (Tensor, optional): Tensor of integers holding how this
            to recover the original sequences with correct order.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Converts ``data`` like :meth:`Tensor.to` (indices keep their integer dtype)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def pin_memory(self):
        """Returns ``self`` (pinned host memory has no meaning on this backend)."""
        return self

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs) if (args or kwargs) else self

    def double(self):
        return self.to(dtype=_ft().float64)

    def float(self):
        return self.to(dtype=_ft().float32)

    def half(self):
        return self.to(dtype=_ft().float16)

    def long(self):
        return self.to(dtype=_ft().int64)

    def int(self):
        return self.to(dtype=_ft().int32)

    def short(self):
        return self.to(dtype=_ft().int16)

    def char(self):
        return self.to(dtype=_ft().int8)

    def byte(self):
        return self.to(dtype=_ft().uint8)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """Returns the inverse of ``permutation`` (``None`` for ``None``)."""
    if permutation is None:
        return None
    ft = _ft()
    n = permutation.numel()
    output = ft.empty_like(permutation)
    output.scatter_(0, permutation, ft.arange(0, n, dtype=permutation.dtype))
    return output


def _lengths_list(lengths):
    if isinstance(lengths, _C.TensorBase):
        return [int(x) for x in lengths.to(dtype=_ft().int64).tolist()]
    return [int(x) for x in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Packs a Tensor containing padded sequences of variable length.

    :attr:`input` can be of size ``T x B x *`` (or ``B x T x *`` with ``batch_first=True``),
    where ``T`` is the length of the longest sequence and ``B`` the batch size.
    With ``enforce_sorted=True`` the sequences must be sorted by length, longest first.

    Args:
        input (Tensor): padded batch of variable length sequences.
        lengths (Tensor or list(int)): list of sequence lengths of each batch element.
        batch_first (bool, optional): if ``True``, the input is expected in ``B x T x *`` format.
        enforce_sorted (bool, optional): if ``True``, the input is expected to contain sequences
            sorted by length in a decreasing order. If ``False``, the input will get sorted
            unconditionally. Default: ``True``.

    Returns:
        a :class:`PackedSequence` object
    """
    ft = _ft()
    lens = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lt = ft.tensor(lens, dtype=ft.int64)
        lt, sorted_indices = ft.sort(lt, descending=True)
        lens = [int(x) for x in lt.tolist()]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lens) != input.size(1):
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size={input.size(1)})"
        )
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability."
        )
    if lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    # batch_sizes[t] = number of sequences longer than t; step t contributes input[t, :batch_sizes[t]].
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    steps = [input[t, :b] for t, b in enumerate(batch_sizes)]
    data = ft.cat(steps, 0)
    return PackedSequence(data, ft.tensor(batch_sizes, dtype=ft.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Pads a packed batch of variable length sequences (the inverse of :func:`pack_padded_sequence`).

    Args:
        sequence (PackedSequence): batch to pad
        batch_first (bool, optional): if ``True``, the output will be in ``B x T x *`` format.
        padding_value (float, optional): values for padded elements.
        total_length (int, optional): if not ``None``, the output will be padded to
            have length :attr:`total_length`.

    Returns:
        Tuple of Tensor containing the padded sequence, and a Tensor
        containing the list of lengths of each sequence in the batch.
    """
    ft = _ft()
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length "
                "of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0]
    trailing = tuple(data.shape[1:])
    rows, offset = [], 0
    for b in batch_sizes:
        chunk = data[offset:offset + b]
        offset += b
        if b < batch:
            pad = ft.full((batch - b,) + trailing, padding_value, dtype=data.dtype)
            chunk = ft.cat([chunk, pad], 0)
        rows.append(chunk)
    for _ in range(max_seq_length - len(batch_sizes)):
        rows.append(ft.full((batch,) + trailing, padding_value, dtype=data.dtype))
    padded = ft.stack(rows, 0)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    lengths = ft.tensor(lengths, dtype=ft.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Pads a list of variable length Tensors with :attr:`padding_value`.

    Stacks a list of Tensors of shape ``L_i x *`` into ``T x B x *`` (or ``B x T x *``
    with ``batch_first=True``), ``T`` being the longest length.

    Args:
        sequences (list[Tensor]): list of variable length sequences.
        batch_first (bool, optional): if ``True``, the output will be in ``B x T x *`` format.
        padding_value (float, optional): value for padded elements. Default: 0.
        padding_side (str, optional): the side to pad the sequences on. Default: "right".

    Returns:
        Tensor of size ``T x B x *`` if :attr:`batch_first` is ``False``, ``B x T x *`` otherwise.
    """
    ft = _ft()
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    max_len = max(s.size(0) for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    rows = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            for d, (a, b) in enumerate(zip(trailing, s.shape[1:])):
                if a != b:
                    raise RuntimeError(
                        f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                        f"dimension {d + 1}"
                    )
            raise RuntimeError("pad_sequence: all sequences must have the same number of dimensions")
        n = max_len - s.size(0)
        if n:
            pad = ft.full((n,) + trailing, padding_value, dtype=s.dtype)
            s = ft.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return ft.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Unpads a padded Tensor into a list of variable length Tensors.

    Args:
        padded_sequences (Tensor): padded sequences.
        lengths (Tensor): length of original (unpadded) sequences.
        batch_first (bool, optional): whether batch dimension first or not. Default: False.

    Returns:
        a list of :class:`Tensor` objects
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Packs a list of variable length Tensors.

    Equivalent to calling :func:`pad_sequence` and then :func:`pack_padded_sequence`.

    Args:
        sequences (list[Tensor]): A list of sequences of decreasing length.
        enforce_sorted (bool, optional): if ``True``, checks that the input
            contains sequences sorted by length in a decreasing order. Default: ``True``.

    Returns:
        a :class:`PackedSequence` object
    """
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""Unpacks a :class:`PackedSequence` into a list of variable length Tensors.

    Args:
        packed_sequences (PackedSequence): A PackedSequence object.

    Returns:
        a list of :class:`Tensor` objects
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
