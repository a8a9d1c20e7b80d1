//! The backward pass: dependency counting, a ready queue ordered like
//! PyTorch's (latest-created node first, `AccumulateGrad` as soon as ready),
//! per-node input buffers that sum gradients arriving by several paths.

use super::grad_mode::GradModeGuard;
use super::node::{released_error, Edge, Node};
use crate::Tensor;
use ferrotorch_core::{Error, Result};
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

struct Ready(Arc<Node>);

impl PartialEq for Ready {
    fn eq(&self, o: &Self) -> bool {
        self.0.seq() == o.0.seq()
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ready {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.seq().cmp(&o.0.seq())
    }
}

/// Adds `g` into slot `i` of a node's input buffer.
fn accumulate(buf: &mut [Option<Tensor>], i: usize, g: Tensor) -> Result<()> {
    buf[i] = Some(match buf[i].take() {
        None => g,
        Some(prev) => prev.add(&g)?,
    });
    Ok(())
}

/// Runs the graph behind `roots` (each with its seed gradient).
///
/// * `capture`: when given, gradients arriving at these edges are returned
///   instead of being accumulated, and only nodes leading to them run
///   (`autograd.grad`, `backward(inputs=...)` uses `accumulate_into`).
/// * `accumulate_into`: restricts leaf accumulation to these leaves' nodes.
pub fn run(
    roots: Vec<(Edge, Tensor)>,
    retain_graph: bool,
    create_graph: bool,
    capture: Option<&[Edge]>,
    accumulate_into: Option<&[Edge]>,
) -> Result<Vec<Option<Tensor>>> {
    let _mode = GradModeGuard::new(create_graph);

    // 1. Discover the graph and count dependencies.
    let mut deps: HashMap<usize, usize> = HashMap::new();
    let mut nodes: HashMap<usize, Arc<Node>> = HashMap::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for (e, _) in &roots {
        if nodes.insert(e.node.id(), e.node.clone()).is_none() {
            stack.push(e.node.clone());
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.next_edges().iter().flatten() {
            *deps.entry(e.node.id()).or_insert(0) += 1;
            if nodes.insert(e.node.id(), e.node.clone()).is_none() {
                stack.push(e.node.clone());
            }
        }
    }

    // 2. Which nodes must run: those from which a target is reachable.
    let targets: Option<HashSet<usize>> = capture.or(accumulate_into).map(|es| es.iter().map(|e| e.node.id()).collect());
    let needed: Option<HashSet<usize>> = targets.as_ref().map(|t| needed_nodes(&nodes, t));
    let captured_nodes: HashSet<usize> = capture.map(|c| c.iter().map(|e| e.node.id()).collect()).unwrap_or_default();
    let mut results: Vec<Option<Tensor>> = vec![None; capture.map_or(0, |c| c.len())];

    // 3. Seed the roots.
    let mut buffers: HashMap<usize, Vec<Option<Tensor>>> = HashMap::new();
    for (e, g) in roots {
        let buf = buffers.entry(e.node.id()).or_insert_with(|| vec![None; e.node.num_outputs()]);
        accumulate(buf, e.input_nr, g)?;
    }
    let mut queue = BinaryHeap::new();
    let mut queued = HashSet::new();
    for (id, n) in &nodes {
        if deps.get(id).copied().unwrap_or(0) == 0 && queued.insert(*id) {
            queue.push(Ready(n.clone()));
        }
    }

    // 4. Execute.
    while let Some(Ready(node)) = queue.pop() {
        let id = node.id();
        let mut inputs = buffers.remove(&id).unwrap_or_else(|| vec![None; node.num_outputs()]);
        let should_run = needed.as_ref().is_none_or(|s| s.contains(&id));
        let mut outputs: Vec<Option<Tensor>> = Vec::new();
        if should_run {
            run_pre_hooks(&node, &mut inputs)?;
            if let Some(c) = capture {
                for (k, e) in c.iter().enumerate() {
                    if e.node.id() == id {
                        if let Some(g) = &inputs[e.input_nr] {
                            results[k] = Some(g.clone());
                        }
                    }
                }
            }
            let is_acc = node.variable().is_some();
            let skip_acc = is_acc
                && (captured_nodes.contains(&id)
                    || capture.is_some()
                    || accumulate_into.is_some_and(|a| !a.iter().any(|e| e.node.id() == id)));
            if !skip_acc && !(captured_nodes.contains(&id) && !is_acc && capture_only_here(&node, &nodes, &needed)) {
                outputs = call_node(&node, inputs, retain_graph)?;
            }
        }
        for (i, e) in node.next_edges().iter().enumerate() {
            let Some(e) = e else { continue };
            let cid = e.node.id();
            if let Some(Some(g)) = outputs.get(i) {
                let buf = buffers.entry(cid).or_insert_with(|| vec![None; e.node.num_outputs()]);
                accumulate(buf, e.input_nr, g.clone())?;
            }
            let d = deps.get_mut(&cid).ok_or_else(|| Error::runtime("autograd engine: dependency missing"))?;
            *d -= 1;
            if *d == 0 && queued.insert(cid) {
                queue.push(Ready(e.node.clone()));
            }
        }
    }
    Ok(results)
}

/// A captured non-leaf node still needs to run when other targets lie behind it.
fn capture_only_here(node: &Arc<Node>, nodes: &HashMap<usize, Arc<Node>>, needed: &Option<HashSet<usize>>) -> bool {
    let _ = nodes;
    match needed {
        None => true,
        Some(s) => !node.next_edges().iter().flatten().any(|e| s.contains(&e.node.id())),
    }
}

fn needed_nodes(nodes: &HashMap<usize, Arc<Node>>, targets: &HashSet<usize>) -> HashSet<usize> {
    let mut memo: HashMap<usize, bool> = HashMap::new();
    fn visit(n: &Arc<Node>, targets: &HashSet<usize>, memo: &mut HashMap<usize, bool>) -> bool {
        if let Some(&v) = memo.get(&n.id()) {
            return v;
        }
        memo.insert(n.id(), false);
        let mut r = targets.contains(&n.id());
        for e in n.next_edges().iter().flatten() {
            if visit(&e.node, targets, memo) {
                r = true;
            }
        }
        memo.insert(n.id(), r);
        r
    }
    for n in nodes.values() {
        visit(n, targets, &mut memo);
    }
    memo.into_iter().filter(|(_, v)| *v).map(|(k, _)| k).collect()
}

fn run_pre_hooks(node: &Arc<Node>, inputs: &mut Vec<Option<Tensor>>) -> Result<()> {
    let (tensor_hooks, pre_hooks, retain) = {
        let s = node.state();
        (s.tensor_pre_hooks.clone(), s.pre_hooks.clone(), s.retain_grad.clone())
    };
    if let Some(var) = node.variable() {
        let hooks: Vec<_> = var.autograd().hooks.iter().map(|(_, h)| h.clone()).collect();
        for h in hooks {
            if let Some(Some(g)) = inputs.first() {
                if let Some(new) = h(g)? {
                    inputs[0] = Some(new);
                }
            }
        }
    }
    for (nr, _, h) in tensor_hooks {
        if let Some(Some(g)) = inputs.get(nr) {
            if let Some(new) = h(g)? {
                inputs[nr] = Some(new);
            }
        }
    }
    for (_, h) in pre_hooks {
        if let Some(new) = h(inputs)? {
            *inputs = new;
        }
    }
    for (nr, w) in retain {
        if let (Some(t), Some(Some(g))) = (Tensor::upgrade(&w), inputs.get(nr)) {
            let g = if super::is_grad_enabled() { g.clone() } else { g.detach() };
            let new = match t.grad() {
                None => g.clone_data()?,
                Some(p) => p.add(&g)?,
            };
            t.set_grad(Some(new));
        }
    }
    Ok(())
}

fn call_node(node: &Arc<Node>, inputs: Vec<Option<Tensor>>, retain_graph: bool) -> Result<Vec<Option<Tensor>>> {
    let mut rule = {
        let mut s = node.state();
        if s.released {
            return Err(released_error());
        }
        s.backward.take().ok_or_else(released_error)?
    };
    let result = rule.apply(node, inputs.clone());
    {
        let mut s = node.state();
        if !retain_graph && node.variable().is_none() {
            rule.release();
            s.released = true;
        }
        s.backward = Some(rule);
    }
    let anomaly = super::anomaly::is_enabled();
    let mut outputs = match result {
        Ok(o) => o,
        Err(e) => {
            if anomaly {
                super::anomaly::report_error(node.name(), node.trace());
            }
            return Err(e);
        }
    };
    if outputs.len() != node.next_edges().len() && node.variable().is_none() {
        return Err(Error::runtime(format!(
            "function {} returned an incorrect number of gradients (expected {}, got {})",
            node.name(),
            node.next_edges().len(),
            outputs.len()
        )));
    }
    if anomaly && super::anomaly::check_nan() {
        if let Err(e) = super::anomaly::nan_check(node.name(), &outputs) {
            super::anomaly::report_error(node.name(), node.trace());
            return Err(e);
        }
    }
    let post = node.state().post_hooks.clone();
    for (_, h) in post {
        if let Some(new) = h(&outputs, &inputs)? {
            outputs = new;
        }
    }
    Ok(outputs)
}

/// The seed gradient for an output: ones for a scalar, else an error.
fn seed(t: &Tensor, g: Option<Tensor>) -> Result<Tensor> {
    match g {
        Some(g) => {
            if g.shape() != t.shape() {
                return Err(Error::runtime(format!(
                    "Mismatch in shape: grad_output[0] has a shape of {} and output[0] has a shape of {}.",
                    shape_str(g.shape()),
                    shape_str(t.shape())
                )));
            }
            Ok(g)
        }
        None => {
            if t.numel() != 1 {
                return Err(Error::runtime("grad can be implicitly created only for scalar outputs"));
            }
            if t.dtype().is_complex() {
                return Err(Error::runtime(format!("grad can be implicitly created only for real scalar outputs but got {}", t.dtype())));
            }
            Tensor::ones(t.shape(), t.dtype(), t.device())
        }
    }
}

fn shape_str(s: &[usize]) -> String {
    format!("torch.Size({})", ferrotorch_core::layout::fmt_shape(s))
}

fn root_edges(outputs: &[Tensor], grads: Vec<Option<Tensor>>) -> Result<Vec<(Edge, Tensor)>> {
    let mut roots = Vec::new();
    for (i, (t, g)) in outputs.iter().zip(grads).enumerate() {
        let edge = super::gradient_edge(t).ok_or_else(|| {
            Error::runtime(format!("element {i} of tensors does not require grad and does not have a grad_fn"))
        })?;
        roots.push((edge, seed(t, g)?));
    }
    Ok(roots)
}

/// `torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph, inputs)`.
pub fn backward(outputs: &[Tensor], grads: Vec<Option<Tensor>>, retain_graph: Option<bool>, create_graph: bool, inputs: Option<&[Tensor]>) -> Result<()> {
    let roots = root_edges(outputs, grads)?;
    let retain = retain_graph.unwrap_or(create_graph);
    let restrict: Option<Vec<Edge>> = match inputs {
        None => None,
        Some(ins) => Some(
            ins.iter()
                .map(|t| super::gradient_edge(t).ok_or_else(|| Error::runtime("One of the differentiated Tensors does not require grad")))
                .collect::<Result<_>>()?,
        ),
    };
    // Non-leaf inputs get their gradient through retain_grad-like capture.
    if let (Some(ins), Some(edges)) = (inputs, restrict.as_ref()) {
        let non_leaf: Vec<(usize, &Tensor)> = ins.iter().enumerate().filter(|(_, t)| !t.is_leaf()).collect();
        if !non_leaf.is_empty() {
            let caps: Vec<Edge> = non_leaf.iter().map(|(i, _)| edges[*i].clone()).collect();
            let got = run(roots.clone(), true, create_graph, Some(&caps), None)?;
            for ((_, t), g) in non_leaf.iter().zip(got) {
                if let Some(g) = g {
                    let new = match t.grad() {
                        None => g,
                        Some(p) => p.add(&g)?,
                    };
                    t.set_grad(Some(new));
                }
            }
        }
    }
    run(roots, retain, create_graph, None, restrict.as_deref())?;
    Ok(())
}

/// `torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)`.
pub fn grad(outputs: &[Tensor], inputs: &[Tensor], grad_outputs: Vec<Option<Tensor>>, retain_graph: Option<bool>, create_graph: bool, allow_unused: bool) -> Result<Vec<Option<Tensor>>> {
    let roots = root_edges(outputs, grad_outputs)?;
    let edges: Vec<Edge> = inputs
        .iter()
        .map(|t| super::gradient_edge(t).ok_or_else(|| Error::runtime("One of the differentiated Tensors does not require grad")))
        .collect::<Result<_>>()?;
    let retain = retain_graph.unwrap_or(create_graph);
    let res = run(roots, retain, create_graph, Some(&edges), None)?;
    if !allow_unused {
        if let Some(i) = res.iter().position(|g| g.is_none()) {
            let _ = i;
            return Err(Error::runtime(
                "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
            ));
        }
    }
    Ok(res)
}
