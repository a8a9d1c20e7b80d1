"""The ``Optimizer`` base: parameter groups, per-parameter state, ``zero_grad``."""

from collections import defaultdict

from .. import _C


class _NoGrad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class Optimizer:
    """Holds ``param_groups`` (dicts of params and hyper-parameters) and ``state``."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        params = list(params)
        if len(params) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        for g in params:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group of parameters with its own hyper-parameters."""
        ps = param_group["params"]
        ps = [ps] if isinstance(ps, _C.Tensor) else list(ps)
        for p in ps:
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(self.defaults)
        group.update(param_group)
        group["params"] = ps
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clears gradients (``None`` by default, zeros with ``set_to_none=False``)."""
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def state_dict(self):
        """Optimizer state and hyper-parameters (parameters referred to by index)."""
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores what ``state_dict`` returned."""
        params = [p for g in self.param_groups for p in g["params"]]
        for g, sg in zip(self.param_groups, state_dict["param_groups"]):
            for k, v in sg.items():
                if k != "params":
                    g[k] = v
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            self.state[params[i]] = dict(s)

    def step(self, closure=None):
        raise NotImplementedError

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)
