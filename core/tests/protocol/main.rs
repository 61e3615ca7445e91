//! The protocol machines against a simulated store: every request of each
//! protocol answered every way (applied, refused, throttled, failed
//! before or after it was applied, part of a batch left unprocessed), and
//! writers, readers and gc interleaved at random with faults and crashes
//! (`races.rs`). What must hold: a stored parent's version always has all
//! its chunks, a read returns exactly some version that was committed (or
//! a typed error), and after a final gc no chunk is left that no parent
//! refers to.

mod gc;
mod history;
mod query;
mod races;
mod scripted;
mod sim;
mod update;
