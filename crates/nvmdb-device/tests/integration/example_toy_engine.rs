//! CONTRIBUTING.md's worked example of a new engine and its power-loss test: a toy
//! engine of eight persistent registers in PCM, committed with a two-slot checksummed
//! record, every device write through one `PowerSwitch`. The test cuts the power before
//! every device write of a short workload in turn, recovers from the PCM alone, and checks
//! the registers against its own model of acknowledged commits.
//!
//! What survives a power loss: every commit that returned; a commit cut short leaves the
//! registers of the one before it.

use nvmdb_device::{splitmix64, Pcm, PcmConfig, PowerSwitch};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const REGISTERS: usize = 8;
/// Each slot: the registers (one 64 B line), then the header line (sequence, checksum).
const SLOT_BYTES: u64 = 128;

/// The power was cut before a device write.
#[derive(Debug, PartialEq, Eq)]
struct Cut;

struct Registers {
    pcm: Pcm,
    switch: PowerSwitch,
    values: [u64; REGISTERS],
    /// The sequence number of the last commit.
    seq: u64,
}

fn checksum(seq: u64, values: &[u64; REGISTERS]) -> u64 {
    values.iter().fold(splitmix64(seq), |sum, &v| splitmix64(sum ^ v))
}

fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
}

impl Registers {
    fn new(switch: PowerSwitch) -> Registers {
        let pcm = Pcm::new(PcmConfig::new(2 * SLOT_BYTES)).expect("a PCM device");
        Registers { pcm, switch, values: [0; REGISTERS], seq: 0 }
    }

    /// One device write, through the switch: refused writes leave the device unchanged.
    fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Cut> {
        self.switch.admit().map_err(|_| Cut)?;
        self.pcm.storage_write(addr, bytes).expect("in range");
        Ok(())
    }

    /// Makes the registers durable: the registers, then the header that validates them,
    /// into the slot the last commit did not use.
    fn commit(&mut self) -> Result<(), Cut> {
        let seq = self.seq + 1;
        let base = (seq % 2) * SLOT_BYTES;
        let payload: Vec<u8> = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write(base, &payload)?;
        let header: Vec<u8> = [seq, checksum(seq, &self.values)].iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write(base + 64, &header)?;
        self.seq = seq;
        Ok(())
    }

    /// Rebuilds the registers from the PCM alone: the valid slot with the later sequence
    /// number, or all zero when neither is valid.
    fn recover(mut pcm: Pcm, switch: PowerSwitch) -> Registers {
        let mut best = (0, [0; REGISTERS]);
        for slot in 0..2 {
            let mut bytes = [0u8; SLOT_BYTES as usize];
            pcm.storage_read(slot * SLOT_BYTES, &mut bytes).expect("in range");
            let mut values = [0; REGISTERS];
            values.iter_mut().zip(words(&bytes[..64])).for_each(|(v, w)| *v = w);
            let header: Vec<u64> = words(&bytes[64..80]).collect();
            if header[0] > best.0 && header[1] == checksum(header[0], &values) {
                best = (header[0], values);
            }
        }
        Registers { pcm, switch, values: best.1, seq: best.0 }
    }
}

/// The workload: 30 commits, each setting three random registers. Returns the registers
/// of the last commit that returned (the model of acknowledged state) and whether the
/// power was cut.
fn workload(engine: &mut Registers) -> ([u64; REGISTERS], bool) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut acknowledged = [0; REGISTERS];
    for _ in 0..30 {
        for _ in 0..3 {
            engine.values[rng.gen_range(0..REGISTERS)] = rng.gen();
        }
        if engine.commit().is_err() {
            return (acknowledged, true);
        }
        acknowledged = engine.values;
    }
    (acknowledged, false)
}

#[test]
fn a_cut_at_every_device_write_recovers_the_last_acknowledged_commit() {
    let mut uncut = Registers::new(PowerSwitch::new());
    let (last, cut) = workload(&mut uncut);
    assert!(!cut);
    let writes = uncut.switch.writes();
    assert_eq!(writes, 60, "two device writes a commit");
    for index in 0..writes {
        let mut switch = PowerSwitch::new();
        switch.cut_before(index);
        let mut engine = Registers::new(switch);
        let (acknowledged, cut) = workload(&mut engine);
        assert!(cut, "the cut before write {index} falls in the workload");
        let Registers { pcm, mut switch, .. } = engine;
        switch.restore();
        let mut recovered = Registers::recover(pcm, switch);
        assert_eq!(recovered.values, acknowledged, "cut before device write {index}");
        // The recovered engine goes on committing.
        recovered.values[0] = 1;
        recovered.commit().expect("the power is back");
        assert_eq!(Registers::recover(recovered.pcm, PowerSwitch::new()).values[0], 1);
    }
    let recovered = Registers::recover(uncut.pcm, PowerSwitch::new());
    assert_eq!(recovered.values, last);
    println!("crash points tried: {writes}");
}
