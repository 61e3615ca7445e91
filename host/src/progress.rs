//! Progress reporting for long transfers, decoupled from any display.

/// Receives progress of a put or get, in payload bytes. Called from the
/// task running the transfer; implementations must be cheap.
pub trait Progress: Sync {
    /// The transfer has `total` bytes to move.
    fn start(&self, total: u64) {
        let _ = total;
    }
    /// `bytes` more were moved.
    fn advance(&self, bytes: u64) {
        let _ = bytes;
    }
}

/// Reports nothing.
impl Progress for () {}

/// Counts bytes (for tests and scripts).
#[derive(Debug, Default)]
pub struct ByteCounter {
    /// The last total announced.
    pub total: std::sync::atomic::AtomicU64,
    /// Bytes moved so far.
    pub done: std::sync::atomic::AtomicU64,
}

impl Progress for ByteCounter {
    fn start(&self, total: u64) {
        self.total
            .store(total, std::sync::atomic::Ordering::Relaxed);
    }
    fn advance(&self, bytes: u64) {
        self.done
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }
}
