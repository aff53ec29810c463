//! The replay engine: feeds block requests to a [`PageStore`] at their arrival times.
//!
//! Each request is split into logical pages. A page the request covers only partly is a
//! read-modify-write: the old page is read, the new bytes merged in, and the page written
//! when the read completes. All pages of a request are issued at its arrival time (they
//! spread over planes), and the request's response time is the latest page completion
//! minus the arrival time. Byte offsets beyond the device wrap around modulo its logical
//! capacity, page by page (as MQSim does), and the report counts the wrapped pages.
//!
//! Before the trace the device may be aged ([`ReplayOptions::age`]) and the trace's pages
//! pre-filled; the trace may be replayed several times ([`ReplayOptions::passes`]), the
//! last pass reported alone beside the whole; and the store may be drained after it
//! ([`ReplayOptions::drain`]), so that no work it accepted is left unpaid.

use nvmdb_workload::Request;

use crate::layer::PageStore;

mod engine;
mod model;
mod options;
mod report;
mod responses;
#[cfg(test)]
mod tests;

pub use engine::replay_reading;
pub use model::Check;
pub use options::{CutPastEnd, ReadBack, ReplayError, ReplayOptions, SYNTHETIC_BYTES_STREAM};
pub use report::{PowerLossReport, ReplayReport, ReplaySummary};
pub use responses::estimated_response_bytes;

/// Replays `requests` into `store`. Requests must come in arrival order (a request
/// arriving earlier than the one before it is issued at the later time). With a pre-fill
/// or more than one pass the requests are held in memory; [`replay_passes`] reads them
/// afresh instead.
pub fn replay<E>(
    store: &mut dyn PageStore,
    requests: impl Iterator<Item = Result<Request, E>>,
    options: &ReplayOptions,
) -> Result<ReplayReport, ReplayError<E>> {
    if options.prefill || options.passes > 1 {
        let requests: Vec<Request> = requests.collect::<Result<_, E>>().map_err(ReplayError::Input)?;
        return replay_passes(store, || requests.iter().cloned().map(Ok), options);
    }
    let mut once = Some(requests);
    replay_passes(store, || once.take().expect("one pass and no pre-fill read the trace once"), options)
}

/// Replays the trace `trace()` gives into `store`: once for the pre-fill's footprint when
/// asked, then once per pass, each call giving the same requests in arrival order.
pub fn replay_passes<E, I>(
    store: &mut dyn PageStore,
    trace: impl FnMut() -> I,
    options: &ReplayOptions,
) -> Result<ReplayReport, ReplayError<E>>
where
    I: Iterator<Item = Result<Request, E>>,
{
    replay_reading(store, trace, options, None)
}
