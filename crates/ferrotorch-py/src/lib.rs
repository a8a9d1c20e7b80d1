#![allow(non_snake_case)] // the module must be called `_C`, as PyTorch's is
//! `ferrotorch._C`: the Python extension. Thin bindings over the `ferrotorch`
//! crate; every engine error is mapped to a Python exception in `errors`.

mod args;
mod autograd;
mod complex;
mod convert;
mod cuda;
mod device;
mod dlpack;
mod dtype;
mod errors;
mod fft;
mod functions;
mod grad_mode;
mod index;
mod linalg;
mod math_ops;
mod memory;
mod nn_ops;
mod numpy;
mod optim_ops;
mod safetensors;
mod shape_ops;
mod storage;
mod tensor;

use pyo3::prelude::*;

#[pymodule]
fn _C(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<tensor::PyTensor>()?;
    m.add_function(wrap_pyfunction!(tensor::set_tensor_class, m)?)?;
    shape_ops::register(m)?;
    complex::register(m)?;
    nn_ops::register(m)?;
    optim_ops::register(m)?;
    safetensors::register(m)?;
    m.add_class::<dtype::PyDType>()?;
    m.add_class::<device::PyDevice>()?;
    m.add_function(wrap_pyfunction!(device::_set_default_device, m)?)?;
    m.add_function(wrap_pyfunction!(device::_get_default_device, m)?)?;
    m.add_class::<storage::PyUntypedStorage>()?;
    m.add_class::<functions::PyGenerator>()?;
    m.add_class::<numpy::ArrayHolder>()?;
    m.add_class::<autograd::PyNode>()?;
    m.add_class::<autograd::NodeHandle>()?;
    m.add_class::<autograd::RemovableHandle>()?;
    m.add_function(wrap_pyfunction!(autograd::_run_backward, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_run_grad, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_tensor_register_hook, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_tensor_register_post_accumulate_hook, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_tensor_retain_grad, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_record_function, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_detach_, m)?)?;
    autograd::register(m)?;
    m.add("OutOfMemoryError", py.get_type::<errors::OutOfMemoryError>())?;
    m.add("_LinAlgError", py.get_type::<errors::LinAlgError>())?;
    // The panic guard: `ferrotorch/__init__.py` makes this a RuntimeError.
    m.add("_PanicException", py.get_type::<pyo3::panic::PanicException>())?;
    for d in ferrotorch::DType::ALL {
        m.add(d.name(), dtype::dtype_obj(py, d))?;
    }
    m.add_function(wrap_pyfunction!(functions::tensor, m)?)?;
    m.add_function(wrap_pyfunction!(functions::as_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(functions::from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(functions::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(functions::zeros, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ones, m)?)?;
    m.add_function(wrap_pyfunction!(functions::empty, m)?)?;
    m.add_function(wrap_pyfunction!(functions::full, m)?)?;
    m.add_function(wrap_pyfunction!(functions::zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::full_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::rand_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randn_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::arange, m)?)?;
    m.add_function(wrap_pyfunction!(functions::linspace, m)?)?;
    m.add_function(wrap_pyfunction!(functions::logspace, m)?)?;
    m.add_function(wrap_pyfunction!(functions::eye, m)?)?;
    m.add_function(wrap_pyfunction!(functions::rand, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randn, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randint, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_poisson, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_binomial, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randperm, m)?)?;
    m.add_function(wrap_pyfunction!(functions::normal, m)?)?;
    m.add_function(wrap_pyfunction!(functions::manual_seed, m)?)?;
    m.add_function(wrap_pyfunction!(functions::initial_seed, m)?)?;
    m.add_function(wrap_pyfunction!(functions::get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(functions::set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_default_generator, m)?)?;
    m.add_function(wrap_pyfunction!(functions::get_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(functions::set_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(functions::promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(functions::can_cast, m)?)?;
    m.add_function(wrap_pyfunction!(functions::result_type, m)?)?;
    m.add_function(wrap_pyfunction!(memory::memory_allocated, m)?)?;
    m.add_function(wrap_pyfunction!(memory::max_memory_allocated, m)?)?;
    m.add_function(wrap_pyfunction!(memory::memory_reserved, m)?)?;
    m.add_function(wrap_pyfunction!(memory::max_memory_reserved, m)?)?;
    m.add_function(wrap_pyfunction!(memory::reset_peak_memory_stats, m)?)?;
    m.add_function(wrap_pyfunction!(memory::empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(memory::memory_stats, m)?)?;
    #[cfg(unix)]
    m.add_function(wrap_pyfunction!(memory::_tensor_from_shared_fd, m)?)?;
    m.add_function(wrap_pyfunction!(grad_mode::is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(grad_mode::_set_grad_enabled, m)?)?;
    math_ops::register(m)?;
    cuda::register(m)?;
    linalg::register(m)?;
    fft::register(m)?;
    Ok(())
}
