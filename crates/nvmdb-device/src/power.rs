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

/// What an engine was doing when it asked for a device write, so that a crash report can
/// say where a cut fell (set with [`PowerSwitch::set_activity`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activity {
    /// Serving a host request (a write, a trim, a transaction's own writes).
    #[default]
    Host,
    /// Writing buffered data down (a DRAM buffer, eNVy's SRAM write buffer).
    Flush,
    /// Cleaning: copying live data out of a segment and erasing it (eNVy).
    Clean,
    /// Garbage collection of a flash translation layer.
    Gc,
    /// Merging log records into their data pages (IPL, d-PRAM, the PCM log, IPL-P).
    Merge,
    /// Committing: a transaction's or a group's durable commit point (the journal, the kv
    /// engine's metadata).
    Commit,
    /// Recovering after a power loss.
    Recovery,
    /// Preparing a run (loading, ageing, pre-filling), before the measured work.
    Setup,
}

/// Where a cut fell: the first device write it refused, and what the engine was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cut {
    /// The refused device write (0-based over the switch's life, as
    /// [`PowerSwitch::cut_before`] counts).
    pub device_write: u64,
    /// The activity the engine had set when it asked for that write.
    pub activity: Activity,
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
    /// What the engine is doing now.
    activity: Activity,
    /// Every cut reached so far, in order.
    cuts: Vec<Cut>,
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
            self.record_cut();
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
            self.record_cut();
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

    /// Sets what the engine is doing from now on; returns what it was doing, for the
    /// caller to set back when it is done.
    pub fn set_activity(&mut self, activity: Activity) -> Activity {
        std::mem::replace(&mut self.activity, activity)
    }

    /// What the engine is doing now.
    pub fn activity(&self) -> Activity {
        self.activity
    }

    /// Every cut reached so far, in order: where each fell and what the engine was doing.
    pub fn cuts(&self) -> &[Cut] {
        &self.cuts
    }

    /// Notes the cut the write being refused has reached, once per cut (a restore arms
    /// the next).
    #[cold]
    fn record_cut(&mut self) {
        let cut = self.cut_before.map_or(self.writes, |cut| cut.max(self.writes));
        if self.cuts.last().is_none_or(|last| last.device_write != cut) {
            self.cuts.push(Cut { device_write: cut, activity: self.activity });
        }
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
    fn each_cut_is_recorded_once_with_the_activity_it_fell_in() {
        use super::{Activity, Cut};
        let mut switch = PowerSwitch::new();
        switch.cut_before(2);
        assert_eq!(switch.admit(), Ok(()));
        assert_eq!(switch.set_activity(Activity::Gc), Activity::Host);
        assert_eq!(switch.admit(), Ok(()));
        assert!(switch.cuts().is_empty(), "no write refused yet");
        assert_eq!(switch.admit_all(3), Err(2));
        assert_eq!(switch.admit(), Err(2));
        assert_eq!(switch.cuts(), [Cut { device_write: 2, activity: Activity::Gc }]);
        switch.cut_after_restore(4);
        switch.restore();
        assert_eq!(switch.set_activity(Activity::Recovery), Activity::Gc);
        assert_eq!((switch.admit(), switch.admit()), (Ok(()), Ok(())));
        assert_eq!(switch.admit(), Err(4));
        let second = Cut { device_write: 4, activity: Activity::Recovery };
        assert_eq!(switch.cuts(), [Cut { device_write: 2, activity: Activity::Gc }, second]);
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
