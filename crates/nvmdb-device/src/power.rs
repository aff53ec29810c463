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

/// A power switch that can be set to cut before a given device write.
///
/// An engine that owns several devices passes every device write through one switch,
/// so a crash test can cut the power at each write index of a workload in turn. The
/// switch only counts and refuses; the engine maps a refusal to its own error and must
/// leave the device unchanged for the refused write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PowerSwitch {
    writes: u64,
    cut_before: Option<u64>,
    /// The cut [`PowerSwitch::restore`] arms (see [`PowerSwitch::cut_after_restore`]).
    cut_after_restore: Option<u64>,
}

impl PowerSwitch {
    /// A switch that never cuts.
    pub fn new() -> PowerSwitch {
        PowerSwitch::default()
    }

    /// Device writes admitted so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Cuts the power before device write number `index` (0-based, counted over the
    /// switch's life): that write and every later one are refused.
    pub fn cut_before(&mut self, index: u64) {
        self.cut_before = Some(index);
    }

    /// True once the cut has been reached: the next write would be refused.
    #[inline]
    pub fn is_cut(&self) -> bool {
        self.cut_before.is_some_and(|cut| self.writes >= cut)
    }

    /// Whether the next `n` device writes would all be admitted (no cut among them).
    #[inline]
    pub fn admits(&self, n: u64) -> bool {
        self.cut_before.is_none_or(|cut| self.writes.saturating_add(n) <= cut)
    }

    /// Admits `n` device writes at once, as `n` calls of [`PowerSwitch::admit`] would when
    /// no cut lies among them ([`PowerSwitch::admits`]); otherwise admits none and refuses
    /// with the number of writes admitted so far.
    #[inline]
    pub fn admit_all(&mut self, n: u64) -> Result<(), u64> {
        if !self.admits(n) {
            return Err(self.writes);
        }
        self.writes = self.writes.saturating_add(n);
        Ok(())
    }

    /// Admits one device write, or refuses it with the number of writes admitted so far
    /// when the cut has been reached.
    #[inline]
    pub fn admit(&mut self) -> Result<(), u64> {
        if self.is_cut() {
            return Err(self.writes);
        }
        self.writes = self.writes.saturating_add(1);
        Ok(())
    }

    /// Arms a second cut: the next [`PowerSwitch::restore`] brings the power back with a
    /// cut before device write `index` (a crash test cutting again during recovery).
    pub fn cut_after_restore(&mut self, index: u64) {
        self.cut_after_restore = Some(index);
    }

    /// Restores the power: the cut is cleared (or replaced by the one
    /// [`PowerSwitch::cut_after_restore`] armed), the count kept.
    pub fn restore(&mut self) {
        self.cut_before = self.cut_after_restore.take();
    }
}

#[cfg(test)]
mod tests {
    use super::PowerSwitch;

    #[test]
    fn the_switch_refuses_from_the_cut_on_and_restores() {
        let mut switch = PowerSwitch::new();
        switch.cut_before(2);
        assert_eq!(switch.admit(), Ok(()));
        assert_eq!(switch.admit(), Ok(()));
        assert!(switch.is_cut());
        assert_eq!(switch.admit(), Err(2));
        assert_eq!(switch.admit(), Err(2));
        assert_eq!(switch.writes(), 2);
        switch.restore();
        assert_eq!(switch.admit(), Ok(()));
        assert_eq!(switch.writes(), 3);
    }

    #[test]
    fn a_cut_armed_for_the_restore_cuts_again() {
        let mut switch = PowerSwitch::new();
        switch.cut_before(1);
        assert_eq!(switch.admit(), Ok(()));
        switch.cut_after_restore(3);
        assert_eq!(switch.admit(), Err(1), "arming the next cut leaves this one");
        switch.restore();
        assert_eq!((switch.admit(), switch.admit()), (Ok(()), Ok(())));
        assert_eq!(switch.admit(), Err(3));
        switch.restore();
        assert_eq!(switch.admit(), Ok(()), "the armed cut was used once");
    }
}
