//! The CUDA kernel sources, their instantiation per dtype, NVRTC
//! compilation, and the module cache keyed by (family, dtype, arch), in
//! memory and on disk.
//!
//! Each family is one self-contained CUDA C file (no system headers) after
//! the shared `prelude.cuh`. A family is compiled once per dtype: the
//! program starts with `typedef <storage type> T;` and flags saying which
//! kind of dtype `T` is, and the file's `#if` blocks define the entry
//! points that dtype has. [`unary_entry`], [`binary_entry`] and friends map
//! the op vocabulary onto those entry points; a test checks that every name
//! they can return is in the compiled PTX.

mod cache;
mod names;

pub use cache::{disk_cache_dir, KernelCache, CACHE_DIR_ENV};
pub use names::{all_entries, binary_entry, reduce_entry, unary_entry, unary_params, ReduceEntry};

use crate::library::nvrtc_status;
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use ferrotorch_core::{DType, Error, Result};

const PRELUDE: &str = include_str!("prelude.cuh");

/// A kernel family: one `.cu` source compiled per dtype into one module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Strided copy/cast into the module's dtype (`copy.cu`).
    Copy,
    /// Fill with one value (`fill.cu`).
    Fill,
    /// `UnaryOp` kinds (`unary.cu`).
    Unary,
    /// `BinaryOp` kinds and `add_scaled` (`binary.cu`).
    Binary,
    /// `where` and `TernaryOp` kinds (`ternary.cu`).
    Ternary,
    /// `ReduceKind` kinds (`reduce.cu`).
    Reduce,
    /// softmax / log_softmax (`softmax.cu`).
    Softmax,
    /// Running folds along a dim: `CumKind` kinds and cummax/cummin (`scan.cu`).
    Scan,
    /// Reads and writes at index-tensor positions (`index.cu`).
    Index,
    /// Fused optimizer steps (`optim.cu`).
    Optim,
    /// Layer, batch and group norm forward and backward, row moments (`norm.cu`).
    Norm,
    /// Max, average and adaptive poolings and their backwards (`pool.cu`).
    Pool,
    /// The unfold/fold and bias steps of convolutions on cuBLAS (`conv.cu`).
    Conv,
    /// Philox random draws (`random.cu`).
    Random,
    /// Per-row bitonic sorts and selections (`sort.cu`).
    Sort,
    /// Stream compaction: nonzero, masked_scatter (`compact.cu`).
    Compact,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 16] = [
        Family::Copy,
        Family::Fill,
        Family::Unary,
        Family::Binary,
        Family::Ternary,
        Family::Reduce,
        Family::Softmax,
        Family::Scan,
        Family::Index,
        Family::Optim,
        Family::Norm,
        Family::Pool,
        Family::Conv,
        Family::Random,
        Family::Sort,
        Family::Compact,
    ];

    /// The family's file name stem.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Copy => "copy",
            Family::Fill => "fill",
            Family::Unary => "unary",
            Family::Binary => "binary",
            Family::Ternary => "ternary",
            Family::Reduce => "reduce",
            Family::Softmax => "softmax",
            Family::Scan => "scan",
            Family::Index => "index",
            Family::Optim => "optim",
            Family::Norm => "norm",
            Family::Pool => "pool",
            Family::Conv => "conv",
            Family::Random => "random",
            Family::Sort => "sort",
            Family::Compact => "compact",
        }
    }

    /// The family's CUDA C source (without the prelude).
    pub const fn source(self) -> &'static str {
        match self {
            Family::Copy => include_str!("copy.cu"),
            Family::Fill => include_str!("fill.cu"),
            Family::Unary => include_str!("unary.cu"),
            Family::Binary => include_str!("binary.cu"),
            Family::Ternary => include_str!("ternary.cu"),
            Family::Reduce => include_str!("reduce.cu"),
            Family::Softmax => include_str!("softmax.cu"),
            Family::Scan => include_str!("scan.cu"),
            Family::Index => include_str!("index.cu"),
            Family::Optim => include_str!("optim.cu"),
            Family::Norm => include_str!("norm.cu"),
            Family::Pool => include_str!("pool.cu"),
            Family::Conv => include_str!("conv.cu"),
            Family::Random => include_str!("random.cu"),
            Family::Sort => include_str!("sort.cu"),
            Family::Compact => include_str!("compact.cu"),
        }
    }

    /// The dtypes the family is instantiated for.
    pub fn dtypes(self) -> &'static [DType] {
        const FLOATS: [DType; 4] = [DType::Float16, DType::BFloat16, DType::Float32, DType::Float64];
        // The dtypes of cuBLAS's products, which the optimizer steps and
        // convolutions are limited to as well.
        const GEMM: [DType; 2] = [DType::Float32, DType::Float64];
        match self {
            Family::Softmax | Family::Norm | Family::Pool => &FLOATS,
            Family::Optim | Family::Conv => &GEMM,
            _ => &REAL_DTYPES,
        }
    }
}

/// The dtypes the kernel sources are written for: every real dtype, in
/// `DType::ALL`'s order (complex tensors have no CUDA kernels yet; the
/// backend refuses them before asking for a kernel).
pub const REAL_DTYPES: [DType; 10] = {
    // `DType::ALL` lists the ten real dtypes before the complex ones.
    let mut out = [DType::Bool; 10];
    let mut i = 0;
    while i < out.len() {
        assert!(!DType::ALL[i].is_complex());
        out[i] = DType::ALL[i];
        i += 1;
    }
    out
};

/// The CUDA C storage type of `dtype` (see `prelude.cuh`).
pub const fn storage_type(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "ft_bool",
        DType::UInt8 => "unsigned char",
        DType::Int8 => "signed char",
        DType::Int16 => "short",
        DType::Int32 => "int",
        DType::Int64 => "i64",
        DType::Float16 => "ft_half",
        DType::BFloat16 => "ft_bf16",
        DType::Float32 => "float",
        DType::Float64 => "double",
        // Never compiled: see REAL_DTYPES.
        DType::Complex64 | DType::Complex128 => "ft_no_complex_kernels",
    }
}

/// The dtype's code in `prelude.cuh` (`FT_CODE_*`), its index in `DType::ALL`.
pub fn dtype_code(dtype: DType) -> i32 {
    DType::ALL.iter().position(|&d| d == dtype).map_or(0, |i| i as i32)
}

/// The whole program NVRTC compiles for `family` in `dtype`.
pub fn program_source(family: Family, dtype: DType) -> String {
    let float = matches!(dtype, DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64);
    let boolean = dtype == DType::Bool;
    let int = !float && !boolean;
    let mut src = String::with_capacity(PRELUDE.len() + family.source().len() + 256);
    src.push_str(&format!(
        "// ferrotorch kernel family `{}` for {}\n#define FT_FLOAT {}\n#define FT_INT {}\n#define FT_BOOL {}\n",
        family.name(),
        dtype.name(),
        float as u8,
        int as u8,
        boolean as u8
    ));
    src.push_str(PRELUDE);
    src.push_str(&format!("\ntypedef {} T;\n\n", storage_type(dtype)));
    src.push_str(family.source());
    src
}

/// The virtual architecture PTX is generated for: `compute_<arch>`.
pub fn arch_option(arch: u32) -> String {
    format!("--gpu-architecture=compute_{arch}")
}

/// Compiles `family` for `dtype` to PTX for compute capability `arch`
/// (80 for sm_80) with NVRTC. Errors carry NVRTC's log.
pub fn compile(family: Family, dtype: DType, arch: u32) -> Result<String> {
    nvrtc_status()?;
    let opts = CompileOptions {
        options: vec![arch_option(arch), "--std=c++17".into()],
        name: Some(format!("{}_{}.cu", family.name(), dtype.name())),
        ..Default::default()
    };
    match compile_ptx_with_opts(program_source(family, dtype), opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, .. }) => Err(Error::runtime(format!(
            "NVRTC failed to compile the CUDA kernels `{}` for {} (compute_{arch}):\n{}",
            family.name(),
            dtype.name(),
            log.to_string_lossy()
        ))),
        Err(e) => Err(Error::runtime(format!("NVRTC error for `{}` ({}): {e:?}", family.name(), dtype.name()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_self_contained() {
        for family in Family::ALL {
            let src = program_source(family, DType::Float32);
            assert!(!src.contains("#include"), "{} includes a header", family.name());
            assert!(src.contains("typedef float T;"));
        }
        assert!(program_source(Family::Unary, DType::Float16).contains("#define FT_FLOAT 1"));
        assert!(program_source(Family::Unary, DType::Int32).contains("#define FT_INT 1"));
        assert!(program_source(Family::Unary, DType::Bool).contains("#define FT_BOOL 1"));
    }

    #[test]
    fn dtype_codes_follow_the_prelude() {
        // The prelude's FT_CODE_* constants are written out by hand: check
        // each against DType::ALL.
        for (i, dt) in REAL_DTYPES.iter().enumerate() {
            let line = format!("#define FT_CODE_{} {i}\n", dt.name().to_uppercase());
            assert!(PRELUDE.contains(&line), "missing {line:?}");
            assert_eq!(dtype_code(*dt), i as i32);
        }
    }
}

/// The `copy.cu` entry point reading `src` dtype.
pub fn copy_entry(src: DType) -> &'static str {
    match src {
        DType::Bool => "copy_from_bool",
        DType::UInt8 => "copy_from_uint8",
        DType::Int8 => "copy_from_int8",
        DType::Int16 => "copy_from_int16",
        DType::Int32 => "copy_from_int32",
        DType::Int64 => "copy_from_int64",
        DType::Float16 => "copy_from_float16",
        DType::BFloat16 => "copy_from_bfloat16",
        DType::Float32 => "copy_from_float32",
        DType::Float64 => "copy_from_float64",
        // Never launched: the backend refuses complex copies first.
        DType::Complex64 | DType::Complex128 => "copy_from_complex_unsupported",
    }
}
