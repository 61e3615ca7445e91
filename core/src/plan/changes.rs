//! The changes between a stored item and a new one, found without reading
//! the stored payload: what an update would have to set and remove instead
//! of overwriting (`estimate` prices both).

use alloc::string::String;
use alloc::vec::Vec;

use super::update::Changes;
use crate::digest::digest;
use crate::encoding::encode_attributes;
use crate::key::KeySchema;
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, ManifestError};
use crate::value::Item;

/// The changes that make the stored item whose parent is `stored` into
/// `item` (both of the table keyed by `key`), found without reading the
/// payload: attributes on the parent compared by value, each frame's
/// compared by the digest its manifest records (XXH3-64 of the value
/// stream of exactly its attributes, in name order): a frame whose
/// attributes `item` encodes to the same stream is unchanged; of any other,
/// what `item` holds is set and what it lacks removed. Values are compared
/// as spelled (a number spelled another way counts as changed), so the
/// changes may be more than needed, never fewer. `Ok(None)` when a frame
/// does not name its attributes (a writer before names were recorded):
/// only reading it could tell.
pub fn changes_to(
    stored: &Item,
    item: &Item,
    key: &KeySchema,
) -> Result<Option<Changes>, ManifestError> {
    let manifest = stored
        .get(MANIFEST_ATTRIBUTE)
        .map(Manifest::from_value)
        .transpose()?;
    let mut changes = Changes::default();
    let mut seen: Vec<&str> = Vec::new();
    let set = |name: &String, changes: &mut Changes| {
        if let Some(value) = item.get(name) {
            changes.set.insert(name.clone(), value.clone());
        } else {
            changes.remove.push(name.clone());
        }
    };
    for (name, value) in stored {
        if name == MANIFEST_ATTRIBUTE || key.is_key(name) {
            continue;
        }
        seen.push(name.as_str());
        if item.get(name) != Some(value) {
            set(name, &mut changes);
        }
    }
    for frame in manifest.iter().flat_map(Manifest::frames) {
        let mut names: Vec<&String> = frame.spilled.iter().collect();
        names.sort_unstable();
        let values: Option<Vec<_>> = names
            .iter()
            .map(|n| item.get(*n).map(|v| (n.as_str(), v)))
            .collect();
        let same = values.is_some_and(|values| {
            digest(&encode_attributes(values.into_iter()).to_vec()) == frame.digest
        });
        // Nothing named and not the stream of nothing: its names are unknown.
        if names.is_empty() && !same {
            return Ok(None);
        }
        seen.extend(names.iter().map(|n| n.as_str()));
        if !same {
            names.into_iter().for_each(|n| set(n, &mut changes));
        }
    }
    for (name, value) in item {
        if !key.is_key(name) && !seen.contains(&name.as_str()) {
            changes.set.insert(name.clone(), value.clone());
        }
    }
    Ok(Some(changes))
}
