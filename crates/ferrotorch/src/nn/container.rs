//! `Sequential`.

use ferrotorch_core::Result;

use super::module::{Entry, Module};
use crate::Tensor;

/// `nn.Sequential(*modules)`: each module's output is the next one's input;
/// the children are named `"0"`, `"1"`, ... as in PyTorch.
///
/// ```
/// use ferrotorch::nn::{Linear, Module, ReLU, Sequential};
/// let model = Sequential::new().push(Linear::new(4, 8, true).unwrap()).push(ReLU).push(Linear::new(8, 2, true).unwrap());
/// let names: Vec<String> = model.state_dict().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["0.weight", "0.bias", "2.weight", "2.bias"]);
/// ```
#[derive(Default)]
pub struct Sequential {
    names: Vec<String>,
    modules: Vec<Box<dyn Module>>,
}

impl Sequential {
    /// An empty container.
    pub fn new() -> Sequential {
        Sequential::default()
    }

    /// Appends `m` (`append`), named by its position.
    pub fn push(mut self, m: impl Module + 'static) -> Sequential {
        self.names.push(self.modules.len().to_string());
        self.modules.push(Box::new(m));
        self
    }

    /// Appends a boxed module.
    pub fn push_boxed(mut self, m: Box<dyn Module>) -> Sequential {
        self.names.push(self.modules.len().to_string());
        self.modules.push(m);
        self
    }

    /// The `i`-th module.
    pub fn get(&self, i: usize) -> Option<&dyn Module> {
        self.modules.get(i).map(|m| m.as_ref())
    }

    /// The number of modules.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }
}

impl Module for Sequential {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let mut x = input.clone();
        for m in &self.modules {
            x = m.forward(&x)?;
        }
        Ok(x)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        for (n, m) in self.names.iter().zip(&self.modules) {
            f(Entry::Child(n, m.as_ref()));
        }
    }
}
