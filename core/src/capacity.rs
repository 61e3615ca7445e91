//! Capacity units: what a write or read of an item costs.
//!
//! From the DynamoDB developer guide ("Read/write capacity mode"): one write
//! capacity unit (WCU) covers a write of up to 1 KB, one read capacity unit
//! (RCU) a strongly consistent read of up to 4 KB; eventually consistent
//! reads cost half, and transactional reads and writes cost double. Sizes are
//! rounded up to the next unit, and every request costs at least one unit.

/// Bytes one write capacity unit covers.
pub const WRITE_UNIT_BYTES: usize = 1024;
/// Bytes one read capacity unit covers.
pub const READ_UNIT_BYTES: usize = 4096;

/// How a read is made, which decides its price.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ReadConsistency {
    /// Eventually consistent: half a unit per 4 KB.
    Eventual,
    /// Strongly consistent: one unit per 4 KB.
    #[default]
    Strong,
    /// Inside TransactGetItems: two units per 4 KB.
    Transactional,
}

/// Write capacity units for writing (or deleting) an item of `size` bytes;
/// doubled inside a transaction.
pub fn write_units(size: usize, transactional: bool) -> u64 {
    let units = size.div_ceil(WRITE_UNIT_BYTES).max(1) as u64;
    if transactional { units * 2 } else { units }
}

/// Read capacity units for reading an item of `size` bytes, in half units
/// (an eventually consistent 4 KB read is `1`), so sums stay exact.
pub fn read_half_units(size: usize, consistency: ReadConsistency) -> u64 {
    let units = size.div_ceil(READ_UNIT_BYTES).max(1) as u64;
    match consistency {
        ReadConsistency::Eventual => units,
        ReadConsistency::Strong => units * 2,
        ReadConsistency::Transactional => units * 4,
    }
}

/// Read capacity units as DynamoDB reports them (`0.5`, `1.0`, …).
pub fn read_units(size: usize, consistency: ReadConsistency) -> f64 {
    read_half_units(size, consistency) as f64 / 2.0
}
