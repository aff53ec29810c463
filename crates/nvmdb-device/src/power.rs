//! Simulated power loss.

use crate::flash::FlashArray;
use crate::pcm::Pcm;

/// A device that can lose power. Non-volatile devices keep their cells; volatile ones
/// drop their contents.
pub trait PowerLoss {
    /// Cuts power and restores it: whatever the technology cannot keep is lost.
    fn power_loss(&mut self);
}

impl PowerLoss for Pcm {
    /// PCM is non-volatile: nothing is lost.
    fn power_loss(&mut self) {}
}

impl PowerLoss for FlashArray {
    /// Flash is non-volatile: nothing is lost (operations complete atomically here).
    fn power_loss(&mut self) {}
}
