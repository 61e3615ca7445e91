//! Spilled attributes in groups: a large spilled attribute is a frame of
//! its own, stored in its own chunks under its own id, so a later update
//! that changes another attribute reuses its chunks instead of rewriting
//! them (the seeds' attribute-versioning pattern). Specified in
//! `docs/FORMAT.md`, §7 "Groups".

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::Compression;
use crate::encoding::encode_attributes;
use crate::manifest::{MANIFEST_ATTRIBUTE, MAX_GROUPS, Manifest};
use crate::size::{attribute_size, item_size};
use crate::value::Item;
use crate::version::VersionId;
use crate::write::spill::{
    Prepared, Spill, prepare, worst_case_manifest, worst_case_manifest_size,
};
use crate::write::split::{
    SplitError, SplitItem, SplitOptions, put_manifest, split_prepared, split_spill,
};

/// Spilled attributes at least this large (name and value, as DynamoDB
/// sizes them) are each a group of their own, when the item is chunked:
/// a group costs at most one more chunk item (its last, short one), under
/// a quarter of a percent of an attribute this size.
pub const DEFAULT_GROUP_BYTES: usize = 409_600;

/// The groups `names` (the spilled attributes of `item`, in name order)
/// fall into, the frame of the manifest's own first: the attributes under
/// `options.group_bytes` together (when there are any), then each larger
/// one alone, largest first while the parent `kept` stays within its
/// budget with the longer manifest. `None` when that is one group.
pub(crate) fn grouping(
    item: &Item,
    kept: &Item,
    names: &[String],
    options: &SplitOptions,
) -> Option<Vec<Vec<String>>> {
    let size = |name: &String| item.get(name).map_or(0, |v| attribute_size(name, v));
    let mut large: Vec<(&String, usize)> = names
        .iter()
        .map(|n| (n, size(n)))
        .filter(|&(_, s)| s >= options.group_bytes)
        .collect();
    if large.is_empty() {
        return None;
    }
    large.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    // The parent may grow to the budget, or to what one frame's manifest
    // already made it, never past the item limit.
    let kept_size = item_size(kept);
    let limit = options
        .parent_budget
        .max(kept_size + worst_case_manifest_size(names))
        .min(options.item_limit);
    let mut alone: Vec<String> = Vec::new();
    for (name, _) in large {
        alone.push(name.clone());
        let fits = kept_size + worst_case_grouped_size(names, &alone) <= limit;
        if alone.len() > MAX_GROUPS || !fits {
            alone.pop();
            break;
        }
    }
    let groups = frames_of(names, alone);
    (groups.len() > 1).then_some(groups)
}

/// The frames `names` fall into with the attributes `alone` each a group:
/// the others together first (when there are any), then each of `alone`.
fn frames_of(names: &[String], alone: Vec<String>) -> Vec<Vec<String>> {
    let rest: Vec<String> = names
        .iter()
        .filter(|n| !alone.contains(n))
        .cloned()
        .collect();
    let mut frames = Vec::with_capacity(alone.len() + 1);
    if !rest.is_empty() {
        frames.push(rest);
    }
    frames.extend(alone.into_iter().map(|n| Vec::from([n])));
    frames
}

/// The largest `_ds` naming `names` with the attributes `alone` each a
/// group: every frame's figures at their most digits, as
/// [`worst_case_manifest`] makes them, so no real one is larger.
fn worst_case_grouped_size(names: &[String], alone: &[String]) -> usize {
    let mut frames = frames_of(names, alone.to_vec()).into_iter();
    let mut manifest = worst_case_manifest(&frames.next().unwrap_or_default());
    manifest.groups = frames
        .enumerate()
        .map(|(n, frame)| Manifest {
            version: VersionId::new(0, n as u128 + 1),
            ..worst_case_manifest(&frame)
        })
        .collect();
    attribute_size(MANIFEST_ATTRIBUTE, &manifest.to_value())
}

/// The id of group `index` (1, 2, …) of a write of version `version`: the
/// same time, the random part counted on, so ids stay unique and gc's
/// grace period judges a group with its write.
pub(crate) fn group_id(version: VersionId, index: u32) -> VersionId {
    version.offset(index)
}

/// Splits `item` whose spilled attributes fall into `groups` (from
/// [`grouping`]): each group its own frame, chunked under its own id,
/// the first the manifest's own.
pub(crate) fn split_groups(
    item: &Item,
    kept: &Item,
    groups: &[Vec<String>],
    options: &SplitOptions,
) -> Result<SplitItem, SplitError> {
    let key = options.key.key_of(item);
    let mut frames: Vec<Manifest> = Vec::with_capacity(groups.len());
    let mut chunks = Vec::new();
    for (index, names) in groups.iter().enumerate() {
        let values: Vec<_> = names
            .iter()
            .filter_map(|n| item.get(n).map(|v| (n.as_str(), v)))
            .collect();
        let stream = encode_attributes(values.into_iter());
        let spill = Spill {
            kept: key.clone(),
            names: names.clone(),
            stream,
        };
        let compression = spill.compression(options.compression);
        let group_options = SplitOptions {
            version: group_id(options.version, index as u32),
            inline: false,
            ..options.clone()
        };
        let split = split_spill(item, spill, compression, &group_options)?;
        chunks.extend(split.chunks);
        frames.extend(split.manifest);
    }
    let mut frames = frames.into_iter();
    let mut manifest = frames.next().ok_or(SplitError::BadOptions {
        reason: "a grouped split has at least two groups",
    })?;
    manifest.groups = frames.collect();
    let mut parent = kept.clone();
    put_manifest(&mut parent, &manifest, options)?;
    Ok(SplitItem {
        parent,
        chunks,
        manifest: Some(manifest),
    })
}

/// Splits `item` as a new version carrying `options.carried` (groups of
/// the version it replaces, whose attributes `item` lacks): the item's own
/// attributes split as any item's, never inline, an item that fits whole
/// with an empty frame of its own; then the carried groups listed after
/// its frames.
pub(crate) fn split_carrying(item: &Item, options: &SplitOptions) -> Result<SplitItem, SplitError> {
    let carried = &options.carried;
    let bad = |reason| Err(SplitError::BadOptions { reason });
    if carried
        .iter()
        .any(|g| g.spilled.iter().any(|n| item.contains_key(n)))
    {
        return bad("an item holds an attribute of a group it carries");
    }
    let own = SplitOptions {
        inline: false,
        carried: Vec::new(),
        ..options.clone()
    };
    let mut split = match prepare(item, &own)? {
        Prepared::Spill(spill) => split_prepared(item, spill, &own)?,
        Prepared::Fits => {
            // Everything stays on the parent: a frame holding nothing.
            let spill = Spill {
                kept: item.clone(),
                names: Vec::new(),
                stream: encode_attributes(core::iter::empty()),
            };
            split_spill(item, spill, Compression::NONE, &own)?
        }
    };
    let Some(manifest) = split.manifest.as_mut() else {
        return bad("a split carrying groups has a manifest");
    };
    for group in carried {
        if manifest.frames().any(|f| f.version == group.version) {
            return bad("a carried group's id is one of the new version's");
        }
        manifest.groups.push(Manifest {
            layout: manifest.layout.clone(),
            inline: None,
            updated: None,
            groups: Vec::new(),
            object: None,
            ..group.clone()
        });
    }
    if manifest.groups.len() > MAX_GROUPS {
        return bad("more groups than a manifest lists");
    }
    put_manifest(&mut split.parent, manifest, options)?;
    Ok(split)
}
