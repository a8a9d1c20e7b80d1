//! Finding the CUDA libraries at run time without letting cudarc panic.
//!
//! cudarc (with `dynamic-loading`) opens `libcuda`/`libnvrtc`/`libcublas` lazily on the
//! first call into them and panics when no candidate name loads. Every entry
//! point of this crate first asks the probes here, which only try to open
//! the library, so a machine without a driver or NVRTC gets an ordinary
//! error.
//!
//! NVRTC and cuBLAS often live outside the loader's search path (PyPI's
//! `nvidia-cuda-nvrtc` and `nvidia-cublas` wheels put them in
//! `site-packages/nvidia/cu13/lib`).
//! [`load_nvrtc_from`] opens it there by full path and keeps it loaded; the
//! dynamic loader then answers cudarc's later `dlopen("libnvrtc.so.13")`
//! with the same library, because a loaded library also matches its soname.

use ferrotorch_core::{Error, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the folder that holds `libnvrtc.so.13`
/// (and `libnvrtc-builtins.so.13.0`), searched before the loader's path.
pub const NVRTC_DIR_ENV: &str = "FERROTORCH_NVRTC_DIR";

/// The file names NVRTC 13 is loaded under, builtins first (NVRTC opens its
/// builtins library by soname when it compiles).
const NVRTC_FILES: [&str; 2] = ["libnvrtc-builtins.so.13.0", "libnvrtc.so.13"];

/// Whether the CUDA driver library (`libcuda.so.1`) can be loaded. Cached:
/// a driver does not appear while a process runs.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: the probe only tries `dlopen` on cudarc's candidate names and
    // closes what it opened; it calls no function of the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// Opens `path` with `RTLD_GLOBAL` and never closes it, so the library stays
/// resident and matches later loads by its soname.
fn dlopen_keep(path: &Path) -> std::result::Result<(), String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: `c` is a valid NUL-terminated path; loading runs the library's
    // initialisers, which for NVIDIA's libraries have no preconditions. The
    // handle is leaked on purpose (the library must stay loaded).
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a thread-local NUL-terminated string or null.
        let msg = unsafe {
            let e = libc::dlerror();
            if e.is_null() { "unknown dlopen error".to_string() } else { std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned() }
        };
        return Err(msg);
    }
    Ok(())
}

/// Loads NVRTC from `dir` (which must hold `libnvrtc.so.13`). Returns the
/// library's path. Loading it twice is harmless.
pub fn load_nvrtc_from(dir: &Path) -> Result<PathBuf> {
    NVRTC.load_from(dir)
}

/// A CUDA library found at run time: the variable naming its folder, the
/// files to load from there (dependencies first), cudarc's probe of the
/// loader's search path, and what to install.
struct RuntimeLib {
    name: &'static str,
    env: &'static str,
    files: &'static [&'static str],
    present: unsafe fn() -> bool,
    install: &'static str,
}

const NVRTC: RuntimeLib = RuntimeLib {
    name: "NVRTC (libnvrtc.so.13)",
    env: NVRTC_DIR_ENV,
    files: &NVRTC_FILES,
    present: cudarc::nvrtc::sys::is_culib_present,
    install: "the `nvidia-cuda-nvrtc==13.0.88` wheel",
};

/// The environment variable naming the folder that holds `libcublas.so.13`
/// (and `libcublasLt.so.13`), searched before the loader's path.
pub const CUBLAS_DIR_ENV: &str = "FERROTORCH_CUBLAS_DIR";

const CUBLAS: RuntimeLib = RuntimeLib {
    name: "cuBLAS (libcublas.so.13)",
    env: CUBLAS_DIR_ENV,
    files: &["libcublasLt.so.13", "libcublas.so.13"],
    present: cudarc::cublas::sys::is_culib_present,
    install: "the `nvidia-cublas` wheel for CUDA 13 (PyTorch's CUDA wheels bring it)",
};

impl RuntimeLib {
    /// Loads the library's files from `dir`; the last one must exist.
    fn load_from(&self, dir: &Path) -> Result<PathBuf> {
        let Some((main, deps)) = self.files.split_last() else {
            return Err(Error::runtime(format!("{}: no file to load", self.name)));
        };
        let lib = dir.join(main);
        if !lib.is_file() {
            return Err(Error::runtime(format!("{} not found: {} does not exist", self.name, lib.display())));
        }
        for dep in deps.iter().map(|f| dir.join(f)).filter(|p| p.is_file()) {
            dlopen_keep(&dep).map_err(|e| Error::runtime(format!("cannot load {}: {e}", dep.display())))?;
        }
        dlopen_keep(&lib).map_err(|e| Error::runtime(format!("cannot load {}: {e}", lib.display())))?;
        Ok(lib)
    }

    /// Whether the library can be used: loaded from its folder variable when
    /// set, else from the loader's search path. A yes is cached in `ok`; a
    /// no is asked again (the folder may be given later).
    fn status(&self, ok: &OnceLock<()>, lock: &Mutex<()>) -> Result<()> {
        if ok.get().is_some() {
            return Ok(());
        }
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut why = String::new();
        if let Some(dir) = std::env::var_os(self.env) {
            if let Err(e) = self.load_from(Path::new(&dir)) {
                why = format!("{}={}: {e}; ", self.env, Path::new(&dir).display());
            }
        }
        // SAFETY: cudarc's probe only attempts dlopen on its candidate names.
        if unsafe { (self.present)() } {
            let _ = ok.set(());
            return Ok(());
        }
        Err(Error::runtime(format!(
            "{} could not be loaded: {why}install {} and set {} to its lib folder, or put that folder on LD_LIBRARY_PATH",
            self.name, self.install, self.env
        )))
    }
}

/// Whether NVRTC can be used: loaded from [`NVRTC_DIR_ENV`] when that is
/// set, else from the loader's search path. The answer is cached once it is
/// yes; a no is asked again (a later [`set_nvrtc_dir`] may fix it).
pub fn nvrtc_present() -> bool {
    nvrtc_status().is_ok()
}

/// [`nvrtc_present`] with the reason when it is not.
pub fn nvrtc_status() -> Result<()> {
    static OK: OnceLock<()> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    NVRTC.status(&OK, &LOCK)
}

/// Whether cuBLAS can be used (as [`nvrtc_status`], from [`CUBLAS_DIR_ENV`]
/// or the loader's search path), with the reason when it cannot. Asked
/// before the first cuBLAS call, which cudarc would otherwise turn into a
/// panic when the library is missing.
pub fn cublas_status() -> Result<()> {
    static OK: OnceLock<()> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    CUBLAS.status(&OK, &LOCK)
}

/// Points NVRTC discovery at `dir` (what `ferrotorch.cuda` does with the
/// `nvidia-cuda-nvrtc` wheel it finds) and loads it from there.
pub fn set_nvrtc_dir(dir: &Path) -> Result<()> {
    load_nvrtc_from(dir)?;
    nvrtc_status()
}

/// The version of the loaded NVRTC, as `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    nvrtc_status()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above); the call writes two ints.
    let rc = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if rc != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::runtime(format!("nvrtcVersion failed: {rc:?}")));
    }
    Ok((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_nvrtc_folder_is_an_error_naming_the_file() {
        let err = load_nvrtc_from(Path::new("/nonexistent/ferrotorch")).unwrap_err();
        assert!(err.msg.contains("/nonexistent/ferrotorch/libnvrtc.so.13"), "{}", err.msg);
    }

    #[test]
    fn missing_cublas_folder_is_an_error_naming_the_file() {
        let err = CUBLAS.load_from(Path::new("/nonexistent/ferrotorch")).unwrap_err();
        assert!(err.msg.contains("/nonexistent/ferrotorch/libcublas.so.13"), "{}", err.msg);
        // Whatever the machine has, the status answers instead of panicking.
        if let Err(e) = cublas_status() {
            assert!(e.msg.contains("cuBLAS (libcublas.so.13) could not be loaded"), "{}", e.msg);
        }
    }

    #[test]
    fn driver_probe_does_not_panic() {
        // Whatever the machine has, the probe answers instead of panicking,
        // and answers the same twice.
        assert_eq!(driver_present(), driver_present());
    }
}
