//! Thread-local grad mode (`no_grad`, `enable_grad`, `set_grad_enabled`).

use std::cell::Cell;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Is gradient recording on for this thread?
pub fn is_grad_enabled() -> bool {
    ENABLED.with(|e| e.get())
}

/// Turns recording on or off for this thread.
pub fn set_grad_enabled(on: bool) {
    ENABLED.with(|e| e.set(on));
}

/// Restores the previous grad mode when dropped.
pub struct GradModeGuard(bool);

impl GradModeGuard {
    /// Sets grad mode to `on` until the guard is dropped.
    pub fn new(on: bool) -> GradModeGuard {
        let prev = is_grad_enabled();
        set_grad_enabled(on);
        GradModeGuard(prev)
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.0);
    }
}
