//! CPU-heavy work (splitting, compressing, reassembling megabytes) off the
//! async runtime's way: on a multi-threaded tokio runtime the worker hands
//! its other tasks to the rest while the work runs (`block_in_place`); on a
//! current-thread runtime, where that would panic, the work runs inline.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work`, letting the runtime move this worker's other tasks elsewhere.
pub(crate) fn heavy<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}
