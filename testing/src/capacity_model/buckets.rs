//! The capacity model's token buckets (`capacity_model.rs`): one per table
//! and one per partition key value, each holding *seconds of capacity*.
//!
//! DynamoDB states its limits as "up to 3,000 read units or 1,000 write
//! units per second, or a linear combination of both" per partition, and
//! "4,000 write request units or 12,000 read request units, or a linear
//! combination of both" for a new on-demand table (AWS Knowledge Center, "Why
//! is my on-demand DynamoDB table being throttled?",
//! https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb).
//! A linear combination is one budget: a write unit costs `1 / write_rate`
//! seconds of it, a read unit `1 / read_rate`. So each bucket fills at one
//! second per second, up to its burst, and a request costs
//! `write_units / write_rate + read_units / read_rate` seconds.
//!
//! A request may cost more than a bucket holds (a 4 MB transaction is 8,192
//! write units, two seconds of a new table): levels go negative, which is a
//! debt later requests wait out or are throttled by, and which keeps the
//! long-run rate exact.

#![allow(dead_code)] // each user takes its own part

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One limit: the rates a bucket serves and how much unused capacity it keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// Write units per second with no reads.
    pub write_per_s: f64,
    /// Read units per second with no writes.
    pub read_per_s: f64,
    /// The bucket's size, in seconds of capacity: how much unused capacity
    /// is saved for a burst (and how much a new bucket starts with).
    pub burst_s: f64,
}

impl Limit {
    /// Seconds of this limit's capacity that `write_units` and
    /// `read_half_units` (half read units) take.
    pub fn cost(&self, write_units: u64, read_half_units: u64) -> f64 {
        write_units as f64 / self.write_per_s + read_half_units as f64 / 2.0 / self.read_per_s
    }
}

/// Which bucket: a table's, or one partition key value's in a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BucketId {
    /// A table as a whole.
    Table(String),
    /// One partition key value (its DynamoDB JSON) in a table.
    Partition {
        /// The table's name.
        table: String,
        /// The partition key attribute's value as compact DynamoDB JSON.
        key: String,
    },
}

impl BucketId {
    /// The table the bucket belongs to.
    pub fn table(&self) -> &str {
        match self {
            BucketId::Table(table) | BucketId::Partition { table, .. } => table,
        }
    }
}

/// Why a request was not admitted: the first bucket that could not take it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A partition key value's bucket.
    Partition,
    /// A table's bucket.
    Table,
}

struct Bucket {
    level: f64,
    updated: Instant,
}

/// Every bucket, created on first use.
pub struct Buckets {
    partition: Limit,
    table: Limit,
    buckets: HashMap<BucketId, Bucket>,
    /// Whether a table's bucket created now starts full (saved burst) or
    /// empty. A partition's always starts full: a key value not seen before
    /// sits on a partition with capacity to spare.
    tables_start_full: bool,
}

impl Buckets {
    /// No buckets yet; new ones start full.
    pub fn new(partition: Limit, table: Limit) -> Self {
        Buckets {
            partition,
            table,
            buckets: HashMap::new(),
            tables_start_full: true,
        }
    }

    /// The limit bucket `id` follows.
    pub fn limit(&self, id: &BucketId) -> Limit {
        match id {
            BucketId::Table(_) => self.table,
            BucketId::Partition { .. } => self.partition,
        }
    }

    /// Empties every bucket, and makes tables' buckets created from now on
    /// start empty too: from here, `units / rate` is exactly the time a
    /// table needs to serve `units`, with no saved burst. (Partition key
    /// values not seen yet still start with their burst.)
    pub fn empty(&mut self) {
        let now = Instant::now();
        for bucket in self.buckets.values_mut() {
            bucket.level = 0.0;
            bucket.updated = now;
        }
        self.tables_start_full = false;
    }

    /// Fills every bucket to its burst, and makes new buckets start full.
    pub fn fill(&mut self) {
        let (partition, table) = (self.partition, self.table);
        for (id, bucket) in &mut self.buckets {
            bucket.level = match id {
                BucketId::Table(_) => table.burst_s,
                BucketId::Partition { .. } => partition.burst_s,
            };
        }
        self.tables_start_full = true;
    }

    /// The bucket's level now, after refilling it for the time since its
    /// last use.
    fn refilled(&mut self, id: &BucketId, now: Instant) -> &mut Bucket {
        let burst = self.limit(id).burst_s;
        let full = match id {
            BucketId::Table(_) => self.tables_start_full,
            BucketId::Partition { .. } => true,
        };
        let start = if full { burst } else { 0.0 };
        let bucket = self.buckets.entry(id.clone()).or_insert(Bucket {
            level: start,
            updated: now,
        });
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        bucket.level = (bucket.level + elapsed).min(burst);
        bucket.updated = now;
        bucket
    }

    /// Whether `id` can take `cost` seconds now: its level covers the cost,
    /// or, for a cost larger than the bucket, the bucket is full.
    pub fn can_take(&mut self, id: &BucketId, cost: f64) -> bool {
        let burst = self.limit(id).burst_s;
        let bucket = self.refilled(id, Instant::now());
        bucket.level >= cost.min(burst) - 1e-9
    }

    /// Takes `cost` seconds from `id` (a negative cost gives them back),
    /// even into debt.
    pub fn take(&mut self, id: &BucketId, cost: f64) {
        let burst = self.limit(id).burst_s;
        let bucket = self.refilled(id, Instant::now());
        bucket.level = (bucket.level - cost).min(burst);
    }

    /// How long until `id` is out of debt (zero if it is not in debt).
    pub fn debt(&mut self, id: &BucketId) -> Duration {
        let bucket = self.refilled(id, Instant::now());
        Duration::from_secs_f64((-bucket.level).max(0.0))
    }

    /// Throttle mode: if every bucket of `costs` can take its cost, takes
    /// them all; otherwise takes nothing and says which kind refused first
    /// (partitions are checked before tables).
    pub fn admit(&mut self, costs: &[(BucketId, f64)]) -> Result<(), Refusal> {
        // Every bucket is looked at (and so created and refilled) each time,
        // so a request's new buckets all start filling at its first attempt.
        let refused: Vec<&BucketId> = costs
            .iter()
            .filter(|(id, cost)| !self.can_take(id, *cost))
            .map(|(id, _)| id)
            .collect();
        if !refused.is_empty() {
            let partition = refused
                .iter()
                .any(|id| matches!(id, BucketId::Partition { .. }));
            return Err(if partition {
                Refusal::Partition
            } else {
                Refusal::Table
            });
        }
        for (id, cost) in costs {
            self.take(id, *cost);
        }
        Ok(())
    }

    /// Wait mode: takes every cost now and returns how long the request must
    /// wait until the deepest of its buckets is out of debt. Requests that
    /// come later find the debt deeper and wait longer, so waiting requests
    /// are served in arrival order at the buckets' rate.
    pub fn reserve(&mut self, costs: &[(BucketId, f64)]) -> Duration {
        for (id, cost) in costs {
            self.take(id, *cost);
        }
        costs
            .iter()
            .map(|(id, _)| self.debt(id))
            .max()
            .unwrap_or_default()
    }
}
