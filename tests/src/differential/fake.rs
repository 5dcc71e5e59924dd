//! [`FakeBackend`]: the model itself as a backend, optionally with an
//! injected fault, so that CPU tests can check the generators, the runner
//! and the shrinker without a GPU.

use super::model::{Model, Read};
use super::ops::{Op, ReadWay, Target};
use super::run::Backend;

/// The fault of a [`FakeBackend`]: which operations it corrupts.
pub type Fault = Box<dyn Fn(&Op) -> bool>;

/// A backend that is the model itself, with an optional injected fault: when
/// `fault(op)` is true, the last byte the operation writes is flipped after
/// it (for testing the runner and the shrinker without a GPU).
pub struct FakeBackend {
    model: Model,
    fault: Option<Fault>,
    /// How many times the fault fired.
    pub faults: usize,
}

impl FakeBackend {
    /// A backend without faults.
    pub fn correct() -> Self {
        Self {
            model: Model::new(),
            fault: None,
            faults: 0,
        }
    }

    /// A backend that corrupts the result of every operation `fault` selects.
    pub fn with_fault(fault: impl Fn(&Op) -> bool + 'static) -> Self {
        Self {
            fault: Some(Box::new(fault)),
            ..Self::correct()
        }
    }
}

impl Backend for FakeBackend {
    fn apply(&mut self, op: &Op) -> Result<(), String> {
        self.model.apply(op);
        if self.fault.as_ref().is_some_and(|f| f(op)) {
            if let Some((slot, t)) = op.written() {
                let b = self.model.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(t).expect("valid op");
                if y > x {
                    b.bytes[y - 1] ^= 0x5a;
                    b.known[y - 1] = true;
                    self.faults += 1;
                }
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn read(&mut self, slot: usize, target: Target, way: ReadWay) -> Result<Read, String> {
        let b = self.model.get(slot).ok_or("empty slot")?;
        let (x, y) = b.shape.span(target).ok_or("invalid target")?;
        let logical = (x..y)
            .map(|i| if b.known[i] { b.bytes[i] } else { 0xa5 })
            .collect();
        let padding = (way == ReadWay::RawPadded).then(|| vec![b.pad; 3 * b.shape.height]);
        Ok(Read { logical, padding })
    }
}
