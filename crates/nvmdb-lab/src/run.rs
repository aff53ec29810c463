//! A finished run: what identifies it, each experiment's outcome with its identity, and
//! how its files are written (whole, under a temporary name, then renamed).

use std::path::Path;

use serde::Serialize;

use crate::outcome::Outcome;
use crate::{Experiment, LabError, Scale};

/// What identifies a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunMeta {
    /// The seed.
    pub seed: u64,
    /// The scale.
    pub scale: Scale,
    /// The git commit the running code was built from, or `unknown`.
    pub git_commit: String,
    /// The nvmdb version.
    pub version: String,
}

impl RunMeta {
    /// Metadata for a run of the code at `git_commit` (`unknown` when it is not known).
    pub fn new(seed: u64, scale: Scale, git_commit: &str) -> RunMeta {
        RunMeta { seed, scale, git_commit: git_commit.into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// One finished experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Finished {
    /// Experiment id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Source in the seeds.
    pub source: String,
    /// Its result.
    pub outcome: Outcome,
}

impl Finished {
    /// Bundles an experiment's identity with its outcome.
    pub fn new(experiment: &dyn Experiment, outcome: Outcome) -> Finished {
        Finished {
            id: experiment.id().into(),
            title: experiment.title().into(),
            source: experiment.source().into(),
            outcome,
        }
    }
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> LabError + '_ {
    move |source| LabError::Io { path: path.display().to_string(), source }
}

/// Writes `path` whole: under a temporary name beside it (`.NAME.partial`), renamed to
/// `path` once complete, so that a run stopped on the way never leaves a half-written
/// file, and a file written before stays until its replacement is complete. A path that
/// names a link replaces the file it links to; one that names something other than a
/// file is written in place.
pub(crate) fn write_file(path: &Path, contents: &str) -> Result<(), LabError> {
    // Something other than a file (a link to /dev/null) is written in place.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, contents).map_err(io_err(path));
    }
    // Through a link, the file it names is replaced.
    let target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = target.with_file_name(format!(".{name}.partial"));
    std::fs::write(&partial, contents).map_err(io_err(&partial))?;
    std::fs::rename(&partial, &target).map_err(io_err(path))
}
