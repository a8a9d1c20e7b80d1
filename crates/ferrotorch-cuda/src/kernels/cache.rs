//! Compiled kernels, cached per (family, dtype, arch): loaded modules and
//! functions in memory, PTX on disk so a new process skips NVRTC.

use super::{compile, program_source, Family};
use crate::library::nvrtc_version;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use ferrotorch_core::{DType, Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The environment variable naming the folder for compiled PTX; set it to
/// an empty string to keep compiled kernels in memory only.
pub const CACHE_DIR_ENV: &str = "FERROTORCH_KERNEL_CACHE";

/// The folder compiled PTX is kept in: `$FERROTORCH_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/ferrotorch/kernels`, else `~/.cache/ferrotorch/kernels`;
/// `None` when disabled or no home is known.
pub fn disk_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV) {
        return if dir.is_empty() { None } else { Some(PathBuf::from(dir)) };
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(x) if !x.is_empty() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(base.join("ferrotorch").join("kernels"))
}

/// FNV-1a, 64 bits: a stable content hash for cache file names (the
/// standard library's hasher may change between Rust releases).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff; // separates parts, so ("ab", "c") != ("a", "bc")
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The file name of a cached PTX: readable key plus a hash of everything
/// the PTX depends on (the program text, the NVRTC version, the options).
pub fn cache_file_name(family: Family, dtype: DType, arch: u32, nvrtc: (i32, i32)) -> String {
    let src = program_source(family, dtype);
    let version = format!("nvrtc {}.{} {}", nvrtc.0, nvrtc.1, super::arch_option(arch));
    let h = fnv1a(&[src.as_bytes(), version.as_bytes()]);
    format!("{}-{}-sm{arch}-{h:016x}.ptx", family.name(), dtype.name())
}

/// PTX for (family, dtype, arch): read from `dir` when cached there, else
/// made by `compile_fn` and written to `dir` (best effort: a read-only or
/// full disk only costs the next process a compile).
pub fn ptx_cached(
    dir: Option<&Path>,
    family: Family,
    dtype: DType,
    arch: u32,
    nvrtc: (i32, i32),
    compile_fn: impl FnOnce() -> Result<String>,
) -> Result<String> {
    let path = dir.map(|d| d.join(cache_file_name(family, dtype, arch, nvrtc)));
    if let Some(p) = &path {
        if let Ok(text) = std::fs::read_to_string(p) {
            if text.contains(".entry") {
                return Ok(text);
            }
        }
    }
    let ptx = compile_fn()?;
    if let (Some(p), Some(d)) = (&path, dir) {
        // Write to a private name, then rename: another process reading the
        // cache sees either no file or the whole PTX.
        let tmp = d.join(format!(".{}.{}.tmp", std::process::id(), cache_file_name(family, dtype, arch, nvrtc)));
        if std::fs::create_dir_all(d).is_ok() && std::fs::write(&tmp, &ptx).is_ok() && std::fs::rename(&tmp, p).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(ptx)
}

type ModuleKey = (Family, DType, u32);

/// One device's loaded kernel modules and functions.
#[derive(Default)]
pub struct KernelCache {
    modules: Mutex<HashMap<ModuleKey, Arc<CudaModule>>>,
    functions: Mutex<HashMap<(ModuleKey, &'static str), CudaFunction>>,
}

impl KernelCache {
    /// The entry point `name` of `family` in `dtype`, compiled for `arch`
    /// and loaded into `ctx` on first use.
    pub fn function(&self, ctx: &Arc<CudaContext>, family: Family, dtype: DType, arch: u32, name: &'static str) -> Result<CudaFunction> {
        let key = (family, dtype, arch);
        if let Some(f) = self.functions.lock().unwrap_or_else(PoisonError::into_inner).get(&(key, name)) {
            return Ok(f.clone());
        }
        let module = self.module(ctx, key)?;
        let f = module
            .load_function(name)
            .map_err(|e| Error::runtime(format!("CUDA kernel `{name}` missing from `{}` ({}): {e}", family.name(), dtype.name())))?;
        self.functions.lock().unwrap_or_else(PoisonError::into_inner).insert((key, name), f.clone());
        Ok(f)
    }

    fn module(&self, ctx: &Arc<CudaContext>, key: ModuleKey) -> Result<Arc<CudaModule>> {
        let (family, dtype, arch) = key;
        if let Some(m) = self.modules.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(m.clone());
        }
        let nvrtc = nvrtc_version()?;
        let ptx = ptx_cached(disk_cache_dir().as_deref(), family, dtype, arch, nvrtc, || compile(family, dtype, arch))?;
        let module = ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| Error::runtime(format!("CUDA error loading the `{}` kernels ({}): {e}", family.name(), dtype.name())))?;
        self.modules.lock().unwrap_or_else(PoisonError::into_inner).insert(key, module.clone());
        Ok(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ferrotorch-kcache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn file_names_change_with_everything_the_ptx_depends_on() {
        let base = cache_file_name(Family::Unary, DType::Float32, 80, (13, 0));
        assert!(base.starts_with("unary-float32-sm80-") && base.ends_with(".ptx"), "{base}");
        assert_eq!(base, cache_file_name(Family::Unary, DType::Float32, 80, (13, 0)));
        for other in [
            cache_file_name(Family::Unary, DType::Float32, 90, (13, 0)),
            cache_file_name(Family::Unary, DType::Float64, 80, (13, 0)),
            cache_file_name(Family::Binary, DType::Float32, 80, (13, 0)),
            cache_file_name(Family::Unary, DType::Float32, 80, (13, 1)),
        ] {
            assert_ne!(base, other);
        }
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
    }

    #[test]
    fn disk_cache_compiles_once_then_reads() {
        let dir = scratch("once");
        let calls = Cell::new(0);
        let fake = || {
            calls.set(calls.get() + 1);
            Ok::<_, Error>(".version 9.0\n.entry fill(\n)".to_string())
        };
        let a = ptx_cached(Some(&dir), Family::Fill, DType::Int8, 80, (13, 0), fake).unwrap();
        let b = ptx_cached(Some(&dir), Family::Fill, DType::Int8, 80, (13, 0), fake).unwrap();
        assert_eq!(a, b);
        assert_eq!(calls.get(), 1, "the second request is served from disk");
        // Another arch is another file.
        ptx_cached(Some(&dir), Family::Fill, DType::Int8, 90, (13, 0), fake).unwrap();
        assert_eq!(calls.get(), 2);
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(files.len(), 2, "no temporary files left: {files:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_cache_file_is_recompiled_and_errors_propagate() {
        let dir = scratch("corrupt");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(cache_file_name(Family::Copy, DType::Bool, 80, (13, 0))), "garbage").unwrap();
        let calls = Cell::new(0);
        let ptx = ptx_cached(Some(&dir), Family::Copy, DType::Bool, 80, (13, 0), || {
            calls.set(calls.get() + 1);
            Ok(".entry copy_from_bool(\n)".to_string())
        })
        .unwrap();
        assert!(ptx.contains(".entry"));
        assert_eq!(calls.get(), 1);
        let err = ptx_cached(None, Family::Copy, DType::Int8, 80, (13, 0), || Err(Error::runtime("boom"))).unwrap_err();
        assert_eq!(err.msg, "boom");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
