//! Devices (`cpu`, `cuda:N`) and the parsing of PyTorch's device strings.

use crate::error::{Error, Result};
use std::fmt;

/// The kind of device memory lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// Host memory.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
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

    /// Parses `"cpu"`, `"cuda"`, `"cuda:1"` with PyTorch's error messages.
    pub fn parse(s: &str) -> Result<Device> {
        let (ty, idx) = match s.split_once(':') {
            Some((t, i)) => (t, Some(i)),
            None => (s, None),
        };
        let kind = match ty {
            "cpu" => DeviceType::Cpu,
            "cuda" => DeviceType::Cuda,
            _ => {
                return Err(Error::runtime(format!(
                    "Expected one of cpu, cuda device type at start of device string: {s}"
                )))
            }
        };
        let index = match idx {
            None => None,
            Some(i) => {
                let ok = !i.is_empty()
                    && i.bytes().all(|b| b.is_ascii_digit())
                    && (i == "0" || !i.starts_with('0'));
                match i.parse::<u32>() {
                    Ok(n) if ok => Some(n),
                    _ => return Err(Error::runtime(format!("Invalid device string: '{s}'"))),
                }
            }
        };
        Device::new(kind, index)
    }

    /// Builds a device, checking PyTorch's constraint that the CPU index is 0.
    pub fn new(kind: DeviceType, index: Option<u32>) -> Result<Device> {
        if kind == DeviceType::Cpu && matches!(index, Some(i) if i != 0) {
            return Err(Error::runtime(format!(
                "CPU device index must be -1 or zero, got {}",
                index.unwrap_or(0)
            )));
        }
        Ok(Device { kind, index })
    }

    /// `"cpu"` or `"cuda"`.
    pub const fn type_name(self) -> &'static str {
        match self.kind {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
        }
    }

    /// Is this the host?
    pub const fn is_cpu(self) -> bool {
        matches!(self.kind, DeviceType::Cpu)
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
        assert!(Device::parse("cpu:1").is_err());
    }
}
