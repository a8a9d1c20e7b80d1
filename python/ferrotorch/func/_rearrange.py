"""``rearrange``: einops-style axis reordering as one reshape, one permute and one reshape.

The pattern grammar and its error messages follow functorch's einops parser.
"""

import functools
import keyword

_ELLIPSIS = "\u2026"


class _Side:
    """One side of a pattern: ``composition`` is a list of groups (lists of axis names; an empty
    list is a unit axis) and the ellipsis marker."""

    def __init__(self, expression):
        self.has_ellipsis = False
        self.ellipsis_parenthesized = None
        self.identifiers = set()
        self.has_non_unit_anonymous = False
        self.composition = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); "
                                 "only one ellipsis for tensor ")
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None
        current = None

        def add(name):
            if name in self.identifiers:
                raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
            if name == _ELLIPSIS:
                self.identifiers.add(_ELLIPSIS)
                (self.composition if group is None else group).append(_ELLIPSIS)
                self.ellipsis_parenthesized = group is not None
                return
            if name.isdecimal():
                if int(name) == 1:
                    if group is None:
                        self.composition.append([])
                    return
                if int(name) < 1:
                    raise ValueError(f"Anonymous axis should have positive length, not {int(name)}")
                self.has_non_unit_anonymous = True
                return
            if not name.isidentifier():
                raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
            if name[0] == "_" or name[-1] == "_":
                raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start or end "
                                 "with underscore")
            if keyword.iskeyword(name):
                import warnings
                warnings.warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning)
            self.identifiers.add(name)
            if group is None:
                self.composition.append([name])
            else:
                group.append(name)

        for char in expression:
            if char in "() ":
                if current is not None:
                    add(current)
                current = None
                if char == "(":
                    if group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                current = char if current is None else current + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current is not None:
            add(current)


@functools.lru_cache(256)
def _plan(shape, pattern, lengths):
    """(elementary shape, permutation, final shape) turning a tensor of ``shape`` per ``pattern``."""
    axes_lengths = dict(lengths)
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    left, right = _Side(left_str), _Side(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_parenthesized:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.has_non_unit_anonymous or right.has_non_unit_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")

    ndim = len(shape)
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.composition) - 1)
        pattern_ndim = len(left.composition) - 1
        if pattern_ndim > ndim:
            raise ValueError(f"Number of dimensions in pattern ({pattern_ndim}) must be less than or equal to the "
                             f"number of dimensions in the tensor ({ndim})")
    else:
        n_ellipsis = 0
        if len(left.composition) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the number "
                             f"of dimensions in the tensor ({ndim})")
    ellipsis_names = [f"{_ELLIPSIS}{i}" for i in range(n_ellipsis)]

    sizes = {}
    order = []
    dim = 0
    for group in left.composition:
        if group == _ELLIPSIS:
            for name in ellipsis_names:
                sizes[name] = shape[dim]
                order.append(name)
                dim += 1
            continue
        size = shape[dim]
        dim += 1
        if not group:
            if size != 1:
                raise ValueError(f"rearrange: unit axis '1' at dimension {dim - 1} has size {size}")
            continue
        known = 1
        unknown = [n for n in group if n not in axes_lengths]
        for n in group:
            if n in axes_lengths:
                known *= axes_lengths[n]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: could not infer sizes for {unknown}: specify all but one of them")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"rearrange: can't divide axis of length {size} in chunks of {known}")
            axes_lengths[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"rearrange: shape mismatch, {known} != {size} for the axis composed of {group}")
        for n in group:
            sizes[n] = axes_lengths[n]
            order.append(n)

    right_names = []
    final = []
    for group in right.composition:
        if group == _ELLIPSIS:
            right_names.extend(ellipsis_names)
            final.extend(sizes[n] for n in ellipsis_names)
            continue
        names = [m for n in group for m in (ellipsis_names if n == _ELLIPSIS else [n])]
        right_names.extend(names)
        total = 1
        for n in names:
            total *= sizes[n]
        final.append(total)
    perm = tuple(order.index(n) for n in right_names)
    return tuple(sizes[n] for n in order), perm, tuple(final)


def rearrange(tensor, pattern, **axes_lengths):
    r"""A native implementation of `einops.rearrange`, a reader-friendly smart element reordering for multidimensional
    tensors. This operation includes functionality of transpose (axes permutation), reshape (view), squeeze, unsqueeze,
    stack, concatenate and other operations.

    See: https://einops.rocks/api/rearrange/

    Args:
        tensor (Tensor or sequence of Tensor): the tensor(s) to rearrange
        pattern (str): the rearrangement pattern
        axes_lengths (int): any additional length specifications for dimensions

    Returns:
        Tensor: the rearranged tensor

    Examples:
        >>> from torch.func import rearrange
        >>> images = torch.randn((32, 30, 40, 3))
        >>> rearrange(images, "b h w c -> (b h) w c").shape
        torch.Size([960, 40, 3])
        >>> rearrange(images, "b h w c -> b c h w").shape
        torch.Size([32, 3, 30, 40])
        >>> rearrange(images, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2).shape
        torch.Size([32, 15, 20, 12])
    """
    from .. import _C
    if not isinstance(tensor, _C.TensorBase):
        from .._shape_ops import stack
        tensor = stack(list(tensor))
    elementary, perm, final = _plan(tuple(tensor.shape), pattern, tuple(sorted(axes_lengths.items())))
    if tensor.dim() == 0 and not final:
        return tensor
    return tensor.reshape(elementary).permute(*perm).reshape(final)
