//! Wall-clock speed of the simulator itself, for `nvmdb bench`. Only benchmarks read the
//! clock; the simulation never does, and no test asserts on the figures.

pub mod btree;
pub mod envy;
pub mod flash;
pub mod join;
pub mod kv;
pub mod table;
