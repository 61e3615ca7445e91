//! The write path: what an item spills (`spill`), how the spilled
//! attributes become a framed payload (`payload`) cut into chunks
//! (`cutter`), whole (`split`) or as they are compressed or arrive
//! (`item_stream`, `stream_split`).

pub(crate) mod cutter;
pub(crate) mod group;
pub(crate) mod item_stream;
pub(crate) mod payload;
pub(crate) mod spill;
pub(crate) mod split;
pub(crate) mod stream_split;
