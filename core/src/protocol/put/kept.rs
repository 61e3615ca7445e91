//! A write that keeps history ([`crate::history`]): its commit pins the
//! parent it replaces (the record and the list describe exactly that
//! parent), carries the new list, and releases what retention lets go.

use crate::history::{Kept, plan_kept, set_note};
use crate::manifest::MANIFEST_ATTRIBUTE;
use crate::plan::Commit as CommitPolicy;
use crate::protocol::error::ProtocolError;
use crate::size::{MAX_ITEM_BYTES, item_size};
use crate::value::Item;
use crate::version::VersionId;
use crate::write::split::{SplitError, SplitOptions};

use super::{PutMachine, PutSource};

impl PutMachine<'_> {
    /// How the commit treats a concurrent writer: a write that keeps
    /// history commits on the parent it read (under last writer wins it
    /// then starts again over the newer parent), others as their options
    /// say.
    pub(super) fn commit_as(&self) -> CommitPolicy {
        match self.keeps {
            true => CommitPolicy::IfExpected,
            false => self.options.commit(),
        }
    }

    /// The split options of this write: an item that keeps history always
    /// has a manifest.
    pub(super) fn split_options_now(&self) -> SplitOptions {
        let mut options = self.options.split_options(&self.table, self.version);
        options.always_split = self.keeps;
        options
    }

    /// An upload stored whole cannot carry a history list: it is split here
    /// instead, as an item.
    pub(super) fn split_uploads_whole(&mut self) {
        if let PutSource::Upload(split) = &mut self.source
            && self.keeps
            && split.manifest.is_none()
        {
            self.source = PutSource::Owned(core::mem::take(&mut split.parent));
        }
    }

    /// Puts the note and, when the write keeps history, the new list on
    /// the parent about to be committed: what to write before the commit
    /// and delete after it.
    pub(super) fn keep_history(
        &mut self,
        parent: &mut Item,
    ) -> Result<Option<Kept>, ProtocolError> {
        if let Some(note) = &self.options.note {
            set_note(parent, note)?;
        }
        if !self.keeps {
            return Ok(None);
        }
        if !parent.contains_key(MANIFEST_ATTRIBUTE) {
            return Err(SplitError::BadOptions {
                reason: "history keeps only items with a manifest",
            }
            .into());
        }
        let now = self.flights.clock.now_ms()?;
        let fresh = VersionId::new(now, self.flights.random());
        let kept = plan_kept(
            &self.table,
            self.stored_parent.as_ref(),
            self.options.history,
            now,
            fresh,
            parent,
        )?;
        let size = item_size(parent);
        if size > MAX_ITEM_BYTES {
            return Err(SplitError::ParentTooLarge {
                size,
                limit: MAX_ITEM_BYTES,
            }
            .into());
        }
        Ok(kept)
    }
}
