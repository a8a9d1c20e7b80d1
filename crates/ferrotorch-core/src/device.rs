//! Devices (`cpu`, `cuda:N`, `meta`) and the parsing of PyTorch's device strings.

use crate::error::{Error, Result};
use std::fmt;

/// The kind of device memory lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// Host memory.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
    /// PyTorch's `meta` device: tensors with shape, dtype and strides but no
    /// data, on which every op computes only its output's metadata.
    Meta,
}

/// A device with an optional index, like `torch.device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    /// cpu or cuda.
    pub kind: DeviceType,
    /// `None` means "the current device" (only meaningful for CUDA).
    pub index: Option<u32>,
}

impl Device {
    /// The CPU.
    pub const CPU: Device = Device { kind: DeviceType::Cpu, index: None };

    /// Parses `"cpu"`, `"cuda"`, `"cuda:1"` as `torch.device` does: the whole
    /// string must match `[a-zA-Z_]+(:(0|[1-9][0-9]*))?`, with PyTorch's messages.
    pub fn parse(s: &str) -> Result<Device> {
        if s.is_empty() {
            return Err(Error::runtime("Device string must not be empty"));
        }
        let invalid = || Error::runtime(format!("Invalid device string: '{s}'"));
        let (ty, idx) = match s.split_once(':') {
            Some((t, i)) => (t, Some(i)),
            None => (s, None),
        };
        if ty.is_empty() || !ty.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_') {
            return Err(invalid());
        }
        let index = match idx {
            None => None,
            Some(i) => {
                let digits = !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) && (i == "0" || !i.starts_with('0'));
                if !digits {
                    return Err(invalid());
                }
                match i.parse::<u32>() {
                    Ok(n) if n <= i32::MAX as u32 => Some(n),
                    _ => {
                        return Err(Error::runtime(format!(
                            "Could not parse device index '{i}' in device string '{s}'"
                        )))
                    }
                }
            }
        };
        let kind = match ty {
            "cpu" => DeviceType::Cpu,
            "cuda" => DeviceType::Cuda,
            "meta" => DeviceType::Meta,
            _ => {
                return Err(Error::runtime(format!(
                    "Expected one of cpu, cuda, meta device type at start of device string: {ty}"
                )))
            }
        };
        Device::new(kind, index)
    }

    /// Builds a device. Like `torch.device`, any non-negative index is
    /// accepted, also for the CPU (`cpu:1` names the host like `cpu`).
    pub fn new(kind: DeviceType, index: Option<u32>) -> Result<Device> {
        Ok(Device { kind, index })
    }

    /// The `meta` device.
    pub const META: Device = Device { kind: DeviceType::Meta, index: None };

    /// `"cpu"`, `"cuda"` or `"meta"`.
    pub const fn type_name(self) -> &'static str {
        match self.kind {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
            DeviceType::Meta => "meta",
        }
    }

    /// Is this the host?
    pub const fn is_cpu(self) -> bool {
        matches!(self.kind, DeviceType::Cpu)
    }

    /// Is this the `meta` device (no memory behind its tensors)?
    pub const fn is_meta(self) -> bool {
        matches!(self.kind, DeviceType::Meta)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{}", self.type_name(), i),
            None => f.write_str(self.type_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_strings() {
        assert_eq!(Device::parse("cpu").unwrap(), Device::CPU);
        assert_eq!(Device::parse("cuda:1").unwrap().to_string(), "cuda:1");
        assert!(Device::parse("gpu").is_err());
        assert!(Device::parse("cuda:x").is_err());
        assert!(Device::parse("cuda:01").is_err());
        assert!(Device::parse(" cpu").is_err());
        assert!(Device::parse("").is_err());
        assert_eq!(Device::parse("cpu:1").unwrap().index, Some(1));
        assert!(Device::parse("meta").unwrap().is_meta());
        assert_eq!(Device::parse("meta:0").unwrap().to_string(), "meta:0");
    }
}
