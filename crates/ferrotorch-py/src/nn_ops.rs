//! Bindings for neural-network kernels. Argument normalisation (pairs,
//! `padding='same'`, unbatched inputs, dtype fallbacks) lives in
//! `ferrotorch/nn/functional.py`; these take tensors and ints only.

use crate::errors::IntoPyResult;
use crate::tensor::{tensor_of, wrap};
use ferrotorch::ops::conv::ConvParams;
use ferrotorch::Tensor;
use pyo3::prelude::*;

/// `convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups)` as `torch.convolution`: batched 1/2/3-d plain or
/// transposed convolution (records `ConvolutionBackward0`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _convolution<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    weight: &Bound<'py, PyAny>,
    bias: Option<&Bound<'py, PyAny>>,
    stride: Vec<usize>,
    padding: Vec<usize>,
    dilation: Vec<usize>,
    transposed: bool,
    output_padding: Vec<usize>,
    groups: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (x, w) = (tensor_of(input)?, tensor_of(weight)?);
    let b = bias.map(tensor_of).transpose()?;
    let p = ConvParams { stride, padding, dilation, transposed, output_padding, groups };
    wrap(py, x.convolution(&w, b.as_ref(), &p).py()?)
}

/// `mse_loss(input, target, reduction)` with `reduction` 0 none, 1 mean,
/// 2 sum (PyTorch's enum); records `MseLossBackward0`.
#[pyfunction]
pub fn _mse_loss<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, target: &Bound<'py, PyAny>, reduction: i64) -> PyResult<Bound<'py, PyAny>> {
    use ferrotorch::ops::loss::Reduction;
    let r = match reduction {
        0 => Reduction::None,
        1 => Reduction::Mean,
        _ => Reduction::Sum,
    };
    wrap(py, tensor_of(input)?.mse_loss(&tensor_of(target)?, r).py()?)
}

/// `glu(input, dim)` (records `GluBackward0`).
#[pyfunction]
pub fn _glu<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, dim: i64) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.glu(dim).py()?)
}

/// `prelu(input, weight)` (records `PreluKernelBackward0`); the Python
/// wrapper checks dtypes and the weight count first.
#[pyfunction]
pub fn _prelu<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, weight: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(input)?.prelu(&tensor_of(weight)?).py()?)
}

/// `_fused_lstm_cell(igates, hgates, cx) -> (hy, cy)`: one LSTM step's gates
/// and state update (records `ThnnFusedLstmCellBackward0`).
#[pyfunction]
pub fn _fused_lstm_cell<'py>(
    py: Python<'py>,
    igates: &Bound<'py, PyAny>,
    hgates: &Bound<'py, PyAny>,
    cx: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let (hy, cy) = tensor_of(igates)?.fused_lstm_cell(&tensor_of(hgates)?, &tensor_of(cx)?).py()?;
    Ok((wrap(py, hy)?, wrap(py, cy)?))
}

/// `_fused_gru_cell(igates, hgates, hx) -> hy`: one GRU step's gates and
/// state update (records `ThnnFusedGruCellBackward0`).
#[pyfunction]
pub fn _fused_gru_cell<'py>(
    py: Python<'py>,
    igates: &Bound<'py, PyAny>,
    hgates: &Bound<'py, PyAny>,
    hx: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    wrap(py, tensor_of(igates)?.fused_gru_cell(&tensor_of(hgates)?, &tensor_of(hx)?).py()?)
}

/// `layer_norm(input, normalized_shape, weight, bias, eps)` for float
/// tensors (records `NativeLayerNormBackward0`); all argument checks and
/// their messages are the op layer's.
#[pyfunction]
pub fn _layer_norm<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    normalized_shape: Vec<i64>,
    weight: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    eps: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let (w, b) = (weight.map(tensor_of).transpose()?, bias.map(tensor_of).transpose()?);
    let out = x.layer_norm(&normalized_shape, w.as_ref(), b.as_ref(), eps);
    wrap(py, out.py()?)
}

/// Tensors from optional arguments (`None` stays `None`; anything else must
/// be a tensor).
fn optional_tensors<const N: usize>(args: [Option<&Bound<'_, PyAny>>; N]) -> PyResult<[Option<Tensor>; N]> {
    let mut out: [Option<Tensor>; N] = std::array::from_fn(|_| None);
    for (o, a) in out.iter_mut().zip(args) {
        *o = a.map(tensor_of).transpose()?;
    }
    Ok(out)
}

/// `_batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps) -> Tensor`: ATen's `batch_norm`, which answers an empty
/// input before any dtype check, then [`_native_batch_norm`]'s output.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _batch_norm<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    weight: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    running_mean: Option<&Bound<'py, PyAny>>,
    running_var: Option<&Bound<'py, PyAny>>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let [w, b, rm, rv] = optional_tensors([weight, bias, running_mean, running_var])?;
    let y = x.batch_norm(rm.as_ref(), rv.as_ref(), w.as_ref(), b.as_ref(), training, momentum, eps).py()?;
    wrap(py, y)
}

/// `_native_batch_norm(input, weight, bias, running_mean, running_var,
/// training, momentum, eps) -> (output, save_mean, save_invstd)` (records
/// `NativeBatchNormBackward0`; running statistics update in place); all
/// argument checks and their messages are the op layer's.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _native_batch_norm<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    weight: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    running_mean: Option<&Bound<'py, PyAny>>,
    running_var: Option<&Bound<'py, PyAny>>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let x = tensor_of(input)?;
    let [w, b, rm, rv] = optional_tensors([weight, bias, running_mean, running_var])?;
    let (y, m, s) = x.native_batch_norm(w.as_ref(), b.as_ref(), rm.as_ref(), rv.as_ref(), training, momentum, eps).py()?;
    Ok((wrap(py, y)?, wrap(py, m)?, wrap(py, s)?))
}

/// `_native_group_norm(input, num_groups, weight, bias, eps) -> (output,
/// mean, rstd)` (records `NativeGroupNormBackward0`); all argument checks
/// and their messages are the op layer's.
#[pyfunction]
pub fn _native_group_norm<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    num_groups: i64,
    weight: Option<&Bound<'py, PyAny>>,
    bias: Option<&Bound<'py, PyAny>>,
    eps: f64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let x = tensor_of(input)?;
    let (w, b) = (weight.map(tensor_of).transpose()?, bias.map(tensor_of).transpose()?);
    let (y, m, s) = x.native_group_norm(num_groups, w.as_ref(), b.as_ref(), eps).py()?;
    Ok((wrap(py, y)?, wrap(py, m)?, wrap(py, s)?))
}

/// `_max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode,
/// return_indices) -> (values, indices or None)` for `nd` 1, 2 or 3 spatial
/// dims (records `MaxPool{2,3}DWithIndicesBackward0`; 1-d through the 2-d op).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _max_pool<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    nd: usize,
    kernel_size: Vec<i64>,
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    ceil_mode: bool,
    return_indices: bool,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let x = tensor_of(input)?;
    let (k, s, p, d) = (&kernel_size[..], &stride[..], &padding[..], &dilation[..]);
    let (y, i) = if return_indices {
        let (y, i) = match nd {
            1 => x.max_pool1d_with_indices(k, s, p, d, ceil_mode),
            2 => x.max_pool2d_with_indices(k, s, p, d, ceil_mode),
            _ => x.max_pool3d_with_indices(k, s, p, d, ceil_mode),
        }
        .py()?;
        (y, Some(i))
    } else {
        let y = match nd {
            1 => x.max_pool1d(k, s, p, d, ceil_mode),
            2 => x.max_pool2d(k, s, p, d, ceil_mode),
            _ => x.max_pool3d(k, s, p, d, ceil_mode),
        }
        .py()?;
        (y, None)
    };
    Ok((wrap(py, y)?, i.map(|i| wrap(py, i)).transpose()?))
}

/// `_avg_pool(input, nd, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)` for 1, 2 or 3 spatial dims
/// (records `AvgPool{2,3}DBackward0`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _avg_pool<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    nd: usize,
    kernel_size: Vec<i64>,
    stride: Vec<i64>,
    padding: Vec<i64>,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let (k, s, p) = (&kernel_size[..], &stride[..], &padding[..]);
    let y = match nd {
        1 => x.avg_pool1d(k, s, p, ceil_mode, count_include_pad),
        2 => x.avg_pool2d(k, s, p, ceil_mode, count_include_pad, divisor_override),
        _ => x.avg_pool3d(k, s, p, ceil_mode, count_include_pad, divisor_override),
    };
    wrap(py, y.py()?)
}

/// `_adaptive_avg_pool(input, nd, output_size)` for 1, 2 or 3 spatial dims
/// (records `AdaptiveAvgPool{2,3}DBackward0`, or `MeanBackward1` for an
/// output of ones).
#[pyfunction]
pub fn _adaptive_avg_pool<'py>(py: Python<'py>, input: &Bound<'py, PyAny>, nd: usize, output_size: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    let x = tensor_of(input)?;
    let y = match nd {
        1 => x.adaptive_avg_pool1d(&output_size),
        2 => x.adaptive_avg_pool2d(&output_size),
        _ => x.adaptive_avg_pool3d(&output_size),
    };
    wrap(py, y.py()?)
}

/// `_adaptive_max_pool(input, nd, output_size) -> (values, indices)` for 1,
/// 2 or 3 spatial dims (records `AdaptiveMaxPool{2,3}DBackward0`).
#[pyfunction]
pub fn _adaptive_max_pool<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    nd: usize,
    output_size: Vec<i64>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let x = tensor_of(input)?;
    let (y, i) = match nd {
        1 => x.adaptive_max_pool1d(&output_size),
        2 => x.adaptive_max_pool2d(&output_size),
        _ => x.adaptive_max_pool3d(&output_size),
    }
    .py()?;
    Ok((wrap(py, y)?, wrap(py, i)?))
}

/// Registers the functions above on `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_convolution, m)?)?;
    m.add_function(wrap_pyfunction!(_mse_loss, m)?)?;
    m.add_function(wrap_pyfunction!(_glu, m)?)?;
    m.add_function(wrap_pyfunction!(_prelu, m)?)?;
    m.add_function(wrap_pyfunction!(_fused_lstm_cell, m)?)?;
    m.add_function(wrap_pyfunction!(_fused_gru_cell, m)?)?;
    m.add_function(wrap_pyfunction!(_layer_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_batch_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_native_batch_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_native_group_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_max_pool, m)?)?;
    m.add_function(wrap_pyfunction!(_avg_pool, m)?)?;
    m.add_function(wrap_pyfunction!(_adaptive_avg_pool, m)?)?;
    m.add_function(wrap_pyfunction!(_adaptive_max_pool, m)?)?;
    Ok(())
}
