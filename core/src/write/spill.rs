//! Choosing what a split item spills: the checks every split makes, the
//! attributes that stay on the parent (keys, pinned and small ones) and the
//! value stream of the rest, which `split_item` and `split_item_streamed`
//! then compress and cut.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{self, Codec, Compression};
use crate::encoding::{EncodedStream, encode_attributes};
use crate::layout::MAX_CHUNKS;
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, reserved_attribute};
use crate::size::{MAX_ITEM_BYTES, attribute_size};
use crate::validate::{ValidateOptions, validate_item};
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::{CodecChoice, SplitError, SplitOptions, check_options};

/// Where a split starts: the item fits as it is, or some of its
/// attributes spill.
pub(crate) enum Prepared<'a> {
    Fits,
    Spill(Spill<'a>),
}

/// The attributes an item keeps on its parent, and the value stream of
/// those it spills (in name order).
pub(crate) struct Spill<'a> {
    pub(crate) kept: Item,
    pub(crate) names: Vec<String>,
    pub(crate) stream: EncodedStream<'a>,
}

impl Spill<'_> {
    /// The compression `choice` comes to for this stream.
    pub(crate) fn compression(&self, choice: CodecChoice) -> Compression {
        match choice {
            CodecChoice::Fixed(c) => c,
            CodecChoice::Auto => {
                codec::choose_for_sample(self.stream.len(), &codec::sample_of(&self.stream))
            }
        }
    }
}

/// Checks `item` and chooses what it spills.
pub(crate) fn prepare<'a>(
    item: &'a Item,
    options: &SplitOptions,
) -> Result<Prepared<'a>, SplitError> {
    check_options(options)?;
    if let Some(name) = reserved_attribute(item.keys().map(String::as_str)) {
        return Err(SplitError::ReservedAttribute { name });
    }
    // Every rule but the size limit: a virtual item may be any size.
    let validation = ValidateOptions {
        key: Some(&options.key),
        max_item_bytes: usize::MAX,
        index_keys: &options.index_keys,
    };
    let violations = validate_item(item, &validation);
    if !violations.is_empty() {
        return Err(SplitError::Invalid { violations });
    }
    // Each attribute is sized once; the item's size is their sum.
    let sized: Vec<Sized<'_>> = item
        .iter()
        .map(|(name, value)| (name, value, attribute_size(name, value)))
        .collect();
    let total: usize = sized.iter().map(|&(_, _, size)| size).sum();
    if total <= options.item_limit && !options.always_split {
        return Ok(Prepared::Fits);
    }

    let (kept, spilled) = choose_spill(&sized, total, options);
    if spilled.is_empty() && options.always_split {
        return Err(SplitError::BadOptions {
            reason: "history keeps only items with an attribute besides their key",
        });
    }
    if spilled.is_empty() {
        // Everything left is a key, an index key, the TTL or kept: nothing
        // can move.
        return Err(SplitError::ParentTooLarge {
            size: total,
            limit: options.item_limit,
        });
    }
    let stream = encode_attributes(spilled.iter().map(|(n, v)| (n.as_str(), *v)));
    if stream.len() > options.max_raw_bytes {
        return Err(SplitError::TooLarge {
            size: stream.len(),
            limit: options.max_raw_bytes,
        });
    }
    Ok(Prepared::Spill(Spill {
        kept,
        names: spilled.iter().map(|(n, _)| (*n).clone()).collect(),
        stream,
    }))
}

/// An attribute with its exact size.
type Sized<'a> = (&'a String, &'a AttributeValue, usize);

/// Sorts attributes into kept and spilled: keys and pinned attributes
/// always stay; the largest others (by exact size, ties by name) are spilled
/// until the parent, with a manifest naming them, fits the budget.
fn choose_spill<'a>(
    sized: &[Sized<'a>],
    total: usize,
    options: &SplitOptions,
) -> (Item, Vec<(&'a String, &'a AttributeValue)>) {
    // Both sorts below sort `&Sized` with a `fn` pointer: one instantiation
    // of the sort in the WebAssembly module instead of two.
    type Order = fn(&&Sized<'_>, &&Sized<'_>) -> core::cmp::Ordering;
    let mut candidates: Vec<&Sized<'a>> = sized
        .iter()
        .filter(|(name, _, _)| !options.kept(name))
        .collect();
    let largest_first: Order = |a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0));
    candidates.sort_unstable_by(largest_first);
    let budget = options.parent_budget.min(options.item_limit);
    let mut kept_size = total;
    let mut manifest_size = worst_case_manifest_size(&[]);
    let mut spilled = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for &candidate in &candidates {
        if kept_size + manifest_size <= budget && !spilled.is_empty() {
            break;
        }
        kept_size -= candidate.2;
        spilled.push(candidate);
        names.push(candidate.0.clone());
        manifest_size = worst_case_manifest_size(&names);
    }
    // Names are unique: an unstable sort is exact, and (like inserting rather
    // than collecting into a map) keeps the WebAssembly build small.
    let by_name: Order = |a, b| a.0.cmp(b.0);
    spilled.sort_unstable_by(by_name);
    let mut kept = Item::new();
    for &(name, value, _) in sized {
        if spilled
            .binary_search_by(|(n, _, _)| (*n).cmp(name))
            .is_err()
        {
            kept.insert(name.clone(), value.clone());
        }
    }
    (kept, spilled.iter().map(|&&(n, v, _)| (n, v)).collect())
}

/// The largest the manifest attribute can be with these spilled names.
pub(crate) fn worst_case_manifest_size(spilled: &[String]) -> usize {
    attribute_size(MANIFEST_ATTRIBUTE, &worst_case_manifest(spilled).to_value())
}

/// A manifest of one frame naming `spilled` whose every figure takes the
/// most digits it can: no real manifest naming them is larger.
pub(crate) fn worst_case_manifest(spilled: &[String]) -> Manifest {
    Manifest {
        version: VersionId::new(0, 0),
        layout: "collection".into(),
        codec: Codec::Deflate,
        chunk_count: MAX_CHUNKS,
        chunk_bytes: MAX_ITEM_BYTES as u32,
        stored_len: u64::MAX,
        raw_len: u64::MAX,
        digest: 0,
        spilled: spilled.to_vec(),
        inline: None,
        updated: None,
        groups: Vec::new(),
        object: None,
    }
}
