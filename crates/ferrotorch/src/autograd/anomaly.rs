//! Anomaly mode (`detect_anomaly`): nodes remember where their forward op ran,
//! and the backward pass checks every gradient for NaN, naming the node and
//! printing that forward traceback when something goes wrong.
//!
//! The engine has no notion of a Python stack: the bindings install a
//! [`Reporter`] that captures one and emits warnings the Python way. Without
//! one, traces are empty and warnings go to stderr.

use crate::Tensor;
use ferrotorch_core::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

static ENABLED: AtomicBool = AtomicBool::new(false);
static CHECK_NAN: AtomicBool = AtomicBool::new(true);
static REPORTER: RwLock<Option<Arc<dyn Reporter>>> = RwLock::new(None);

/// How anomaly mode sees the caller's stack and reports problems.
pub trait Reporter: Send + Sync {
    /// The traceback of the code running the forward op now.
    fn forward_trace(&self) -> String;
    /// Emits a warning (Python: `UserWarning`).
    fn warn(&self, msg: &str);
}

/// Installs the reporter (done once by the Python bindings).
pub fn set_reporter(r: Arc<dyn Reporter>) {
    *REPORTER.write().unwrap_or_else(|p| p.into_inner()) = Some(r);
}

/// Is anomaly mode on? (Process-wide, like PyTorch's.)
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Does anomaly mode check gradients for NaN?
pub fn check_nan() -> bool {
    CHECK_NAN.load(Ordering::Relaxed)
}

/// Turns anomaly mode on or off.
pub fn set_enabled(on: bool, check_nan: bool) {
    ENABLED.store(on, Ordering::Relaxed);
    CHECK_NAN.store(check_nan, Ordering::Relaxed);
}

fn reporter() -> Option<Arc<dyn Reporter>> {
    REPORTER.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The forward traceback to store in a new node (only in anomaly mode).
pub(crate) fn forward_trace() -> Option<String> {
    if !is_enabled() {
        return None;
    }
    Some(reporter().map(|r| r.forward_trace()).unwrap_or_default())
}

/// PyTorch's warning naming the node whose backward failed, with the
/// traceback of its forward call.
pub(crate) fn report_error(name: &str, trace: Option<&str>) {
    let msg = match trace {
        Some(t) => format!("Error detected in {name}. Traceback of forward call that caused the error:\n{t}"),
        None => format!(
            "Error detected in {name}. No forward pass information available. Enable detect anomaly during forward pass for more information."
        ),
    };
    match reporter() {
        Some(r) => r.warn(&msg),
        None => eprintln!("{msg}"),
    }
}

/// The error for a gradient containing NaN, if `outputs` has one.
pub(crate) fn nan_check(name: &str, outputs: &[Option<Tensor>]) -> Result<()> {
    for (i, g) in outputs.iter().enumerate() {
        let Some(g) = g else { continue };
        if !g.dtype().is_floating_point() {
            continue;
        }
        let has_nan = {
            let _off = super::GradModeGuard::new(false);
            g.to_f64_vec()?.iter().any(|v| v.is_nan())
        };
        if has_nan {
            return Err(Error::runtime(format!("Function '{name}' returned nan values in its {i}th output.")));
        }
    }
    Ok(())
}
