"""Flattening nested tuples, lists and dicts of tensors into leaves and back.

The function transforms accept and return such nests ("pytrees") like PyTorch's do; this
module holds only what they need: flatten, unflatten, and a spec that compares and prints.
"""

from collections import OrderedDict


class TreeSpec:
    """The shape of a nest: its container type, context (dict keys) and children specs."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type_, context, children):
        self.type = type_
        self.context = context
        self.children = children

    @property
    def num_leaves(self):
        if self.type is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def is_leaf(self):
        return self.type is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __repr__(self, indent=0):
        # PyTorch's TreeSpec format, which the transforms' error messages print.
        if self.type is None:
            return "*"
        if self.type in (tuple, list, dict, OrderedDict):
            name, context = self.type.__name__, self.context
        else:
            name, context = "namedtuple", self.type
        kids = ""
        if self.children:
            indent += 2
            kids = self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            kids += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return f"TreeSpec({name}, {context}, [{kids}])"


LEAF = TreeSpec(None, None, ())


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    """(type, context, children) of a container, or None for a leaf."""
    if _is_namedtuple(x):
        return type(x), None, list(x)
    if isinstance(x, (tuple, list)):
        return type(x) if type(x) in (tuple, list) else (tuple if isinstance(x, tuple) else list), None, list(x)
    if isinstance(x, dict):
        keys = list(x.keys())
        return (OrderedDict if isinstance(x, OrderedDict) else dict), keys, [x[k] for k in keys]
    return None


def tree_flatten(tree):
    """Returns ``(leaves, spec)`` for a nest of tuples, lists and dicts."""
    leaves = []

    def go(x):
        node = _children(x)
        if node is None:
            leaves.append(x)
            return LEAF
        type_, context, kids = node
        return TreeSpec(type_, context, [go(k) for k in kids])

    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    """Rebuilds the nest that ``spec`` describes from ``leaves`` (in flattening order)."""
    it = iter(leaves)

    def go(s):
        if s.type is None:
            return next(it)
        kids = [go(c) for c in s.children]
        if s.type is dict or s.type is OrderedDict:
            return s.type(zip(s.context, kids))
        if s.type is list:
            return kids
        if s.type is tuple:
            return tuple(kids)
        return s.type(*kids)

    return go(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree_spec, what):
    """Expands ``prefix`` (a nest matching the top of ``tree_spec``, leaves standing for whole
    subtrees) to one entry per leaf of ``tree_spec``; raises ValueError naming ``what`` if the
    structures do not fit."""
    out = []

    def go(p, s):
        node = _children(p)
        if node is None:
            out.extend([p] * s.num_leaves)
            return
        type_, context, kids = node
        if s.type is None or len(kids) != len(s.children) or context != s.context or \
                (type_ is not s.type and not ({type_, s.type} <= {dict, OrderedDict})):
            raise ValueError(what)
        for k, c in zip(kids, s.children):
            go(k, c)

    go(prefix, tree_spec)
    return out
