//! The `nvmdb` binary; everything is in the library (`src/lib.rs`).

fn main() {
    nvmdb_cli::main();
}
