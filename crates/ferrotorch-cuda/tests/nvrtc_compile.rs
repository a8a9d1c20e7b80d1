//! Compiles every kernel source for every dtype it is instantiated for with
//! NVRTC, for compute_80 and compute_90, and checks that every entry point
//! the backend can ask for is in the PTX. Needs no GPU: NVRTC is a host
//! library.
//!
//! NVRTC is found through `FERROTORCH_NVRTC_DIR`, else through the
//! `nvidia-cuda-nvrtc` wheel of `$PYTHON` (else `python3`, `python`)
//! (`site-packages/nvidia/cu13/lib`), else on the loader's path. Without it
//! the test prints why and passes, unless `FERROTORCH_REQUIRE_NVRTC=1`
//! (set by CI, which installs the wheel), where it fails.

use ferrotorch_cuda::kernels::{all_entries, compile, Family};
use ferrotorch_cuda::library::{nvrtc_status, nvrtc_version, set_nvrtc_dir, NVRTC_DIR_ENV};
use std::path::PathBuf;
use std::process::Command;

const ARCHS: [u32; 2] = [80, 90];

/// The lib folders of the `nvidia-cuda-nvrtc` wheel in python3's path.
fn wheel_dirs() -> Vec<PathBuf> {
    let script = "import os, nvidia\n\
                  for p in nvidia.__path__:\n\
                  \tfor sub in ('cu13', 'cuda_nvrtc'):\n\
                  \t\td = os.path.join(p, sub, 'lib')\n\
                  \t\tif os.path.isdir(d): print(d)";
    // $PYTHON, else whichever of python3/python is on the path.
    let pythons: Vec<String> = std::env::var("PYTHON").into_iter().chain(["python3".into(), "python".into()]).collect();
    for py in pythons {
        if let Ok(out) = Command::new(&py).args(["-c", script]).output() {
            if out.status.success() {
                return String::from_utf8_lossy(&out.stdout).lines().map(PathBuf::from).collect();
            }
        }
    }
    Vec::new()
}

fn find_nvrtc() -> Result<(), String> {
    if std::env::var_os(NVRTC_DIR_ENV).is_none() {
        for dir in wheel_dirs() {
            if set_nvrtc_dir(&dir).is_ok() {
                return Ok(());
            }
        }
    }
    nvrtc_status().map_err(|e| e.msg)
}

#[test]
fn every_kernel_compiles_for_every_dtype_and_arch() {
    if let Err(why) = find_nvrtc() {
        if std::env::var("FERROTORCH_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("FERROTORCH_REQUIRE_NVRTC=1 but NVRTC is missing: {why}");
        }
        eprintln!("skipping the NVRTC compile test: {why}");
        return;
    }
    let version = nvrtc_version().expect("NVRTC loaded");
    eprintln!("NVRTC {}.{}", version.0, version.1);

    // FERROTORCH_NVRTC_ONLY=<family> narrows the run while editing one file.
    let only = std::env::var("FERROTORCH_NVRTC_ONLY").ok();
    let mut jobs = Vec::new();
    for family in Family::ALL.into_iter().filter(|f| only.as_deref().is_none_or(|o| o == f.name())) {
        for &dtype in family.dtypes() {
            for arch in ARCHS {
                jobs.push((family, dtype, arch));
            }
        }
    }
    let total = jobs.len();
    // NVRTC compiles independent programs concurrently; two threads suit
    // small CI machines.
    let jobs = std::sync::Mutex::new(jobs);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((family, dtype, arch)) = jobs.lock().unwrap().pop() else { break };
                let r = compile(family, dtype, arch);
                results.lock().unwrap().push((family, dtype, arch, r));
            });
        }
    });
    let results = results.into_inner().unwrap();
    assert_eq!(results.len(), total);

    let mut failures = Vec::new();
    for (family, dtype, arch, r) in &results {
        match r {
            Err(e) => failures.push(e.msg.clone()),
            Ok(ptx) => {
                assert!(ptx.contains(&format!(".target sm_{arch}")), "{} {:?}: PTX not for sm_{arch}", family.name(), dtype);
                for (fam, name) in all_entries(*dtype) {
                    if fam == *family && !ptx.contains(&format!(".entry {name}(")) {
                        failures.push(format!("{} for {}: no entry point `{name}` in the PTX", family.name(), dtype.name()));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {total} compilations failed:\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("compiled {total} programs ({} families x their dtypes x compute_80/compute_90)", Family::ALL.len());
}
