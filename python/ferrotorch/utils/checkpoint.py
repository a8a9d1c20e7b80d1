"""Gradient checkpointing: keep only a segment's inputs during forward and
recompute its activations when backward first needs them.

The non-reentrant variant is built on saved-tensor hooks: tensors saved inside
the segment are packed as small placeholders; the first unpack re-runs the
segment (same RNG state, grad enabled) under hooks that capture the recomputed
tensors in the order they are saved, and every placeholder resolves to its
recomputed twin.
"""

from .. import _C
from ..autograd.graph import saved_tensors_hooks


class _Placeholder:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _Frame:
    """State shared by one checkpointed call's placeholders."""

    def __init__(self, fn, args, kwargs, preserve_rng_state):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.count = 0
        self.recomputed = None
        self.rng_state = _C._default_generator().get_state() if preserve_rng_state else None

    def pack(self, tensor):
        p = _Placeholder(self.count)
        self.count += 1
        return p

    def unpack(self, placeholder):
        if self.recomputed is None:
            self._recompute()
        if placeholder.index not in self.recomputed:
            raise RuntimeError(
                "torch.utils.checkpoint: the recomputed forward saved fewer tensors than the original one "
                f"(no tensor #{placeholder.index}); the checkpointed function must be deterministic, and "
                "backward through a checkpointed region twice needs retain_graph=True on the first call"
            )
        # Each saved tensor is unpacked once per backward: drop it right away so
        # recomputed activations do not pile up across segments.
        return self.recomputed.pop(placeholder.index)

    def _recompute(self):
        saved = []

        def capture(t):
            saved.append(t)
            return t

        gen = _C._default_generator()
        current = gen.get_state() if self.rng_state is not None else None
        if self.rng_state is not None:
            gen.set_state(self.rng_state)
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, _C.TensorBase) else a for a in self.args]
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)
        try:
            with saved_tensors_hooks(capture, lambda t: t):
                self.fn(*inputs, **self.kwargs)
        finally:
            _C._set_grad_enabled(prev)
            if current is not None:
                gen.set_state(current)
        self.recomputed = dict(enumerate(saved))
        # The recomputed graph's nodes hold `capture` (through their hooks),
        # which holds `saved`: empty it so no cycle keeps the activations alive.
        saved.clear()


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Runs ``function(*args, **kwargs)`` saving only its inputs; activations are
    recomputed during backward. Only ``use_reentrant=False`` semantics are provided
    (``use_reentrant=True`` is accepted and behaves the same)."""
    frame = _Frame(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoints a sequential model in ``segments`` chunks."""
    mods = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, len(mods) // segments)

    def run(start, end):
        def f(x):
            for m in mods[start:end]:
                x = m(x)
            return x
        return f

    x = input
    for start in range(0, len(mods), size):
        x = checkpoint(run(start, min(start + size, len(mods))), x, use_reentrant=use_reentrant)
    return x
