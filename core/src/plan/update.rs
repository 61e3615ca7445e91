//! Updates: DynamoDB's `SET` and `REMOVE` of top-level attributes, planned
//! to cost what they change (docs/FORMAT.md, "Updating"). Changes to
//! attributes the parent holds are one UpdateItem of the parent,
//! conditional on the version stored and its last update, with no chunk
//! touched. Changes to the payload (a spilled attribute), to the TTL of an
//! item whose chunks carry it, or that no longer fit the parent rewrite the
//! item as a new version.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use super::cost::replace_write_units_sparing;
use super::{Expect, PlanError, Update};
use crate::capacity::write_units;
use crate::code::Code;
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, UPDATED_FIELD, reserved_attribute};
use crate::size::item_size;
use crate::table::Table;
use crate::validate::{ValidateOptions, Violation, validate_item};
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;

/// Longest update or condition expression DynamoDB accepts, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 4096;

/// What an update changes, as UpdateItem's `SET` and `REMOVE` of top-level
/// attributes: set attributes are added or replaced, removed ones go (a
/// name the item lacks is no error).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// Attributes set to these values.
    pub set: Item,
    /// Attributes removed.
    pub remove: Vec<String>,
}

/// Why changes cannot be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangesError {
    /// Nothing is set or removed.
    Empty,
    /// A key attribute is set or removed: DynamoDB never changes one in
    /// place (write the item under its new key, and delete the old one).
    KeyAttribute {
        /// The attribute.
        name: String,
    },
    /// A name the stored format reserves.
    Reserved {
        /// The attribute.
        name: String,
    },
    /// An attribute is both set and removed.
    SetAndRemoved {
        /// The attribute.
        name: String,
    },
    /// A value set is not valid DynamoDB data (or not a valid index key).
    Invalid(Vec<Violation>),
}

impl ChangesError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Invalid(violations) => violations
                .first()
                .map_or(Code::ItemInvalid, Violation::code),
            Self::Reserved { .. } => Code::AttributeReserved,
            _ => Code::UpdateInvalid,
        }
    }
}

impl fmt::Display for ChangesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the update sets and removes nothing"),
            Self::KeyAttribute { name } => write!(
                f,
                "{name} is a key attribute, which an update cannot change: put the item under its new key"
            ),
            Self::Reserved { name } => {
                write!(f, "{name} is reserved for dynaslice's stored format")
            }
            Self::SetAndRemoved { name } => write!(f, "{name} is both set and removed"),
            Self::Invalid(violations) => {
                for (i, v) in violations.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    v.fmt(f)?;
                }
                Ok(())
            }
        }
    }
}

impl Changes {
    /// Every attribute set or removed.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.set
            .keys()
            .map(String::as_str)
            .chain(self.remove.iter().map(String::as_str))
    }

    /// True when the changes set or remove `name`.
    pub fn touches(&self, name: &str) -> bool {
        self.names().any(|n| n == name)
    }

    /// Checks the changes can be made to an item of `table`: no key
    /// attribute, no reserved name, nothing both set and removed, and every
    /// value set valid (an index key of the index's type, not empty, not
    /// too large).
    pub fn check(&self, table: &Table) -> Result<(), ChangesError> {
        if self.set.is_empty() && self.remove.is_empty() {
            return Err(ChangesError::Empty);
        }
        if let Some(name) = self.names().find(|n| table.key.is_key(n)) {
            return Err(ChangesError::KeyAttribute { name: name.into() });
        }
        if let Some(name) = reserved_attribute(self.names()) {
            return Err(ChangesError::Reserved { name: name.into() });
        }
        if let Some(name) = self.remove.iter().find(|n| self.set.contains_key(*n)) {
            return Err(ChangesError::SetAndRemoved { name: name.clone() });
        }
        let options = ValidateOptions {
            key: None,
            max_item_bytes: usize::MAX,
            index_keys: &table.index_keys,
        };
        let mut removed = Item::new();
        for name in &self.remove {
            removed.insert(name.clone(), AttributeValue::Null);
        }
        let found: Vec<Violation> = validate_item(&self.set, &options)
            .into_iter()
            .chain(
                // Only names are checked: a removed name is never a value.
                validate_item(&removed, &ValidateOptions::default()),
            )
            .collect();
        match found.is_empty() {
            true => Ok(()),
            false => Err(ChangesError::Invalid(found)),
        }
    }

    /// Applies the changes to `item`.
    pub fn apply(&self, item: &mut Item) {
        for (name, value) in &self.set {
            item.insert(name.clone(), value.clone());
        }
        for name in &self.remove {
            item.remove(name);
        }
    }
}

/// Why an update rewrites its item instead of updating the parent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rewrite {
    /// An attribute set or removed lives in the payload.
    Spilled {
        /// The attribute.
        name: String,
    },
    /// The TTL attribute changes on an item whose chunks carry it.
    Ttl {
        /// The TTL attribute.
        name: String,
    },
    /// The item (or its parent) would be over the item size limit.
    TooLarge {
        /// The updated item's (or parent's) exact size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// More changes than one update expression holds.
    TooManyChanges,
    /// Asked for: the item is written again as it is (to move attributes
    /// a table now indexes, or its TTL, back onto the parent).
    Requested,
}

impl fmt::Display for Rewrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spilled { name } => write!(f, "{name} is in the payload"),
            Self::Ttl { name } => write!(f, "the TTL attribute {name} is on every chunk"),
            Self::TooLarge { size, limit } => {
                write!(f, "the parent would be {size} bytes, limit {limit}")
            }
            Self::TooManyChanges => f.write_str("the changes are too many for one UpdateItem"),
            Self::Requested => f.write_str("a rewrite was asked for"),
        }
    }
}

/// The requests of an update.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateSteps {
    /// One conditional UpdateItem of the parent; no chunk is touched.
    Parent(Update),
    /// The item is read whole, changed, and written as a new version with
    /// a commit conditional on the parent as read; the replaced version's
    /// chunks are deleted after it.
    Rewrite(Rewrite),
}

/// An update's plan, decided from the stored parent.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdatePlan {
    /// The requests.
    pub steps: UpdateSteps,
    /// What the update expects stored: its condition.
    pub expect: Expect,
    /// Write capacity units it costs. An UpdateItem's exactly (billed by
    /// the larger of the item before and after); a rewrite's as estimated
    /// from the stored sizes (as many chunks again, and the replaced
    /// ones' deletes), known exactly once the new version is split.
    pub write_units: u64,
    /// The frames a rewrite reuses: the stored version's chunked frames
    /// (its own and its groups') holding no attribute the update changes,
    /// each as a group. Their chunks are neither read, written nor
    /// deleted; the new version's manifest lists them as its groups.
    pub carried: Vec<Manifest>,
}

impl UpdatePlan {
    /// The attributes of the frames a rewrite reuses ([`UpdatePlan::carried`]).
    pub fn reused(&self) -> Vec<String> {
        self.carried
            .iter()
            .flat_map(|g| g.spilled.clone())
            .collect()
    }

    /// `parent` or `rewrite`: how results name the path.
    pub fn path(&self) -> &'static str {
        match self.steps {
            UpdateSteps::Parent(_) => "parent",
            UpdateSteps::Rewrite(_) => "rewrite",
        }
    }
}

/// Plans the update of the item with `key` whose parent is `stored` (as
/// read, strongly consistent; `None` when no item has the key: the update
/// creates one, as UpdateItem does). `changes` must have passed
/// [`Changes::check`]; `item_limit` is the largest item or parent written
/// (409,600 at most). A parent update records `update` as its id
/// ([`crate::manifest::Manifest::updated`]). With `rewrite` the item is
/// rewritten whatever the changes (none, or any).
pub fn plan_update(
    key: &Item,
    stored: Option<&Item>,
    changes: &Changes,
    table: &Table,
    item_limit: usize,
    update: VersionId,
    rewrite: bool,
) -> Result<UpdatePlan, PlanError> {
    let target = table.keys_target();
    let expect = Expect::from_stored_at(stored, &target)?;
    let manifest = stored
        .map(|p| target.read_manifest(p))
        .transpose()?
        .flatten();
    let before = stored.map_or(0, item_size);
    let mut after = stored.cloned().unwrap_or_else(|| table.key.key_of(key));
    changes.apply(&mut after);
    if let Some(AttributeValue::M(fields)) = after.get_mut(MANIFEST_ATTRIBUTE) {
        fields.insert(UPDATED_FIELD.into(), AttributeValue::S(update.to_text()));
    }
    let size = item_size(&after);
    let rewrite_as = |why: Rewrite| {
        // A rewrite that re-spills the item (asked for, or a TTL every
        // chunk carries) writes every frame again; any other reuses the
        // groups it does not change.
        let ttl_changes = table.ttl.as_ref().is_some_and(|ttl| changes.touches(ttl));
        let carried: Vec<Manifest> = match (&why, &manifest) {
            (Rewrite::Requested | Rewrite::Ttl { .. }, _) | (_, None) => Vec::new(),
            // Chunks carry the TTL: a new value reaches only new chunks.
            _ if ttl_changes => Vec::new(),
            (_, Some(m)) => m
                .frames()
                // A frame in chunks: an object's (§5a) is never reused, as
                // the commit deletes the replaced version's object.
                .filter(|f| f.inline.is_none() && f.object.is_none() && f.chunk_count > 0)
                .filter(|f| !f.spilled.is_empty())
                .filter(|f| !changes.names().any(|n| f.spilled.iter().any(|s| s == n)))
                .map(|f| Manifest {
                    inline: None,
                    updated: None,
                    groups: Vec::new(),
                    object: None,
                    ..f.clone()
                })
                .collect(),
        };
        let spared: Vec<VersionId> = carried.iter().map(|g| g.version).collect();
        let cleanup = replace_write_units_sparing(
            stored,
            before,
            &target,
            table.ttl.as_deref(),
            false,
            &spared,
        )?;
        Ok(UpdatePlan {
            steps: UpdateSteps::Rewrite(why),
            expect: expect.clone(),
            write_units: write_units(size.max(before), false) + 2 * cleanup,
            carried,
        })
    };
    if rewrite {
        return rewrite_as(Rewrite::Requested);
    }
    if let Some(manifest) = &manifest {
        if let Some(name) = changes.names().find(|n| manifest.spills(n)) {
            return rewrite_as(Rewrite::Spilled { name: name.into() });
        }
        if let Some(ttl) = &table.ttl
            && manifest.chunk_count > 0
            && changes.touches(ttl)
        {
            return rewrite_as(Rewrite::Ttl { name: ttl.clone() });
        }
    }
    if size > item_limit {
        return rewrite_as(Rewrite::TooLarge {
            size,
            limit: item_limit,
        });
    }
    let Some(update) = parent_update(key, changes, &expect, table, update) else {
        return rewrite_as(Rewrite::TooManyChanges);
    };
    Ok(UpdatePlan {
        steps: UpdateSteps::Parent(update),
        expect,
        write_units: write_units(size.max(before), false),
        carried: Vec::new(),
    })
}

/// The UpdateItem making `changes` on a parent as `expect` says it is
/// (`None` when an expression would be too long).
fn parent_update(
    key: &Item,
    changes: &Changes,
    expect: &Expect,
    table: &Table,
    update: VersionId,
) -> Option<Update> {
    let condition = expect.condition(&table.key).unwrap_or_default();
    let mut names = condition.names;
    let mut values = condition.values;
    let mut set = Vec::new();
    let mut remove = Vec::new();
    for (i, name) in changes.names().enumerate() {
        names.insert(format!("#a{i}"), name.to_string());
        match changes.set.get(name) {
            Some(value) => {
                values.insert(format!(":a{i}"), value.clone());
                set.push(format!("#a{i} = :a{i}"));
            }
            None => remove.push(format!("#a{i}")),
        }
    }
    if let Expect::Version { .. } = expect {
        names.insert("#m".into(), MANIFEST_ATTRIBUTE.into());
        names.insert("#u".into(), UPDATED_FIELD.into());
        values.insert(":n".into(), AttributeValue::S(update.to_text()));
        set.push("#m.#u = :n".into());
    }
    let mut expression = String::new();
    if !set.is_empty() {
        expression = format!("SET {}", set.join(", "));
    }
    if !remove.is_empty() {
        let space = if expression.is_empty() { "" } else { " " };
        expression = format!("{expression}{space}REMOVE {}", remove.join(", "));
    }
    let condition = (!condition.expression.is_empty()).then_some(condition.expression);
    if expression.len() > MAX_EXPRESSION_BYTES {
        return None;
    }
    Some(Update {
        table: table.table.clone(),
        key: table.key.key_of(key),
        expression,
        condition,
        names,
        values,
    })
}
