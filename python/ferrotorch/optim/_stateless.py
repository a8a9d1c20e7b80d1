"""``swap_in_optimizer_params_and_state``: run an optimizer on other tensors for a while."""

import contextlib
from collections import defaultdict

from .. import _C

__all__ = ["swap_in_optimizer_params_and_state"]

_PREFIX = "swap_in_optimizer_params_and_state requires "


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(
            _PREFIX + "swapin_optim_state['state'] to be a dict mapping packed parameter ids to "
            f"per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, _C.TensorBase) for k in state):
        raise RuntimeError(_PREFIX + "optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(_PREFIX + "per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_group(idx, group, swapin_group):
    if not isinstance(swapin_group, dict):
        raise RuntimeError(_PREFIX + "each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(
            _PREFIX + "optimizer.state_dict()-style param_groups[*]['params'] entries keyed by packed parameter ids."
        )
    if len(group["params"]) != len(ids):
        raise RuntimeError(
            f"swapin_optim_state param group {idx} has a different number of params than the live optimizer "
            "param group."
        )
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(
            _PREFIX + "optimizer.state_dict()-style param group keys to exactly match the live optimizer group "
            f"keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only in live: {live_only}."
        )
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Temporarily replaces an optimizer's parameters and state, restoring them on exit.

    Args:
        optimizer: the live optimizer; its state must already be initialized.
        swapin_parameters (dict[str, Tensor]): tensors to use as parameters during the
            context, in the order of the optimizer's parameters.
        swapin_optim_state (dict): an ``optimizer.state_dict()``-shaped dict holding the
            state to install. In-place tensor edits propagate back to it; other changes
            made during the context are dropped.
    """
    if not optimizer.state:
        raise RuntimeError(_PREFIX + "initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(_PREFIX + "a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(
            _PREFIX + "swapin_optim_state['param_groups'] to be a list of param-group dicts, got "
            f"{type(groups).__name__}."
        )
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (group, sgroup) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, group, sgroup)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(
                _PREFIX + "the explicit parameter state to match optimizer.param_groups ordering."
            )
        plan.append((group, sgroup, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            _PREFIX + "swapin_optim_state['state'] to be keyed only by packed parameter ids from "
            f"param_groups[*]['params']; got extra keys {extra!r}."
        )

    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        new_state = defaultdict(dict)
        for group, sgroup, params in plan:
            group["params"] = params
            for k, v in sgroup.items():
                if k != "params":
                    group[k] = v
            for p, pid in zip(params, sgroup["params"]):
                # A shallow copy: in-place tensor updates reach the caller's dict,
                # structural changes stay local to the context.
                new_state[p] = dict(state.get(pid, {}))
        optimizer.state = new_state
        yield
    finally:
        for group, snap in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snap)
        optimizer.state = original_state
