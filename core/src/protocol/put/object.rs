//! A stream's payload written as one S3 object (docs/FORMAT.md, "Objects"):
//! the frame is cut into parts while it is compressed, a few parts fly at
//! once, and the object is stored under its version's own key with
//! `If-None-Match: *` (one PutObject when the frame is one part, else a
//! multipart upload completed with that condition). Only then is the
//! parent committed, naming the object and its ETag; a write that fails
//! before its commit aborts its upload and deletes its object.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{Cutter, Phase, Purpose, PutMachine, PutOutcome, PutSource};
use crate::capacity::write_units;
use crate::codec::crc32;
use crate::object::ObjectRef;
use crate::plan::{
    WriteKind, WriteRequest, WriteSteps, pack_batch_writes, plan_streamed_commit_as,
};
use crate::protocol::error::ProtocolError;
use crate::protocol::flights::{Failed, Resend};
use crate::protocol::policy::{INPUT_BYTES, PARTS_IN_FLIGHT};
use crate::protocol::request::{ObjectAnswer, ObjectKey, ObjectRequest, PartDone, Request};
use crate::protocol::{Progress, Step};
use crate::size::item_size;
use crate::write::split::SplitItem;
use crate::write::stream_split::{ObjectFrame, Part, StreamSplit};

/// The upload of one version's object.
pub(super) struct ObjectUpload {
    pub(super) object: ObjectKey,
    pub(super) part_bytes: usize,
    /// The multipart upload, once started.
    upload_id: Option<String>,
    /// True while the start is out.
    starting: bool,
    /// Parts cut, not yet sent.
    waiting: Vec<Part>,
    /// Parts out.
    out: usize,
    /// Parts stored.
    done: Vec<PartDone>,
    /// The frame, once the stream ended.
    frame: Option<ObjectFrame>,
    /// True once a PutObject or CompleteMultipartUpload went out: the
    /// object may exist.
    writing: bool,
    /// Frame bytes S3 stored in parts (or whole).
    pub(super) bytes: u64,
}

impl ObjectUpload {
    pub(super) fn new(object: ObjectKey, part_bytes: usize) -> Self {
        Self {
            object,
            part_bytes,
            upload_id: None,
            starting: false,
            waiting: Vec::new(),
            out: 0,
            done: Vec::new(),
            frame: None,
            writing: false,
            bytes: 0,
        }
    }

    /// What a write that fails must undo: its upload aborted, its object
    /// deleted (the key is this version's alone, so no one else's is).
    pub(super) fn undo(&self) -> Vec<ObjectRequest> {
        let mut undo = Vec::new();
        if let Some(upload_id) = &self.upload_id {
            undo.push(ObjectRequest::AbortUpload {
                object: self.object.clone(),
                upload_id: upload_id.clone(),
            });
        }
        if self.writing {
            undo.push(ObjectRequest::Delete {
                object: self.object.clone(),
            });
        }
        undo
    }

    /// True once anything of it may be in S3.
    pub(super) fn started(&self) -> bool {
        self.upload_id.is_some() || self.starting || self.writing
    }
}

impl PutMachine<'_> {
    /// The upload a stream's payload gets, when the table sends payloads
    /// of its length to S3 and its key makes an object key.
    pub(super) fn object_for_stream(&self) -> Option<ObjectUpload> {
        let store = self.table.objects.as_ref()?;
        let PutSource::Stream { parent, len, .. } = &self.source else {
            return None;
        };
        if len.is_some_and(|len| !store.takes_stream(len, self.options.mode)) {
            return None;
        }
        let key = store.key_for(&self.table.key, parent, self.version).ok()?;
        let object = ObjectKey {
            bucket: store.bucket.clone(),
            key,
        };
        Some(ObjectUpload::new(object, store.part_bytes))
    }

    /// An item split whole goes to S3 instead of chunks when the table
    /// sends payloads of its length there (its value stream's raw length
    /// at least the threshold, as a stream's: even when it would compress
    /// to fit inline) and it is not written in one transaction: its frame
    /// is cut into parts, the upload starts, and the commit follows as a
    /// stream's does. The split comes back when it stays in chunks (or
    /// whole, or in groups).
    #[must_use]
    pub(super) fn offload(&mut self, split: SplitItem) -> Option<SplitItem> {
        let eligible = self.may_offload();
        let Some(store) = self.table.objects.as_ref().filter(|_| eligible) else {
            return Some(split);
        };
        let key = match &split.manifest {
            Some(m) if store.takes_payload(m.raw_len) => {
                store.key_for(&self.table.key, &split.parent, m.version)
            }
            _ => return Some(split),
        };
        let Ok(key) = key else { return Some(split) };
        let object = ObjectKey {
            bucket: store.bucket.clone(),
            key,
        };
        let mut upload = ObjectUpload::new(object, store.part_bytes);
        let options = self.split_options_now();
        let (frame, mut parts) = match ObjectFrame::from_split(split, &options, upload.part_bytes) {
            Ok(cut) => cut,
            Err(split) => return Some(*split),
        };
        // Progress counts the frame's bytes as S3 stores them.
        let stored_len = frame.manifest().stored_len;
        // Sent from the first: `poll_object` takes from the end.
        parts.reverse();
        upload.waiting = parts;
        upload.frame = Some(frame);
        self.object = Some(upload);
        self.progress = Progress {
            bytes_total: stored_len,
            ..Progress::default()
        };
        self.cutter = Cutter::Ended;
        self.phase = Phase::Chunks;
        None
    }

    /// True when the item written may go to S3: the table sends payloads
    /// there and [`ObjectStore::takes_item`](crate::object::ObjectStore::takes_item)
    /// says so.
    pub(super) fn may_offload(&self) -> bool {
        let item = match &self.source {
            PutSource::Item(item) => *item,
            PutSource::Owned(item) => item,
            _ => return false,
        };
        self.table
            .objects
            .as_ref()
            .is_some_and(|s| s.takes_item(item, self.options.mode))
    }

    /// Parts cut from the payload.
    pub(super) fn queue_parts(&mut self, parts: Vec<Part>) {
        if let Some(upload) = &mut self.object {
            upload.waiting.extend(parts);
        }
    }

    /// The stream ended: its last parts, and the frame to commit once the
    /// object is stored.
    pub(super) fn object_ended(&mut self, stream: Box<StreamSplit>) -> Result<(), ProtocolError> {
        let (frame, parts) = stream.finish_parts()?;
        self.queue_parts(parts);
        if let Some(upload) = &mut self.object {
            upload.frame = Some(frame);
        }
        self.progress.bytes_total = self.progress.bytes_total.max(self.payload_bytes);
        Ok(())
    }

    /// The next step while an object is written; `None` when the phase
    /// moved on.
    pub(super) fn poll_object(&mut self) -> Option<Step<PutOutcome>> {
        let ended = matches!(self.cutter, Cutter::Ended);
        let upload = self.object.as_mut()?;
        if upload.writing {
            return Some(self.flights.idle());
        }
        if upload.upload_id.is_none() && !upload.starting {
            // One part in all: one PutObject.
            if ended && upload.done.is_empty() && upload.out == 0 && upload.waiting.len() <= 1 {
                let part = upload.waiting.pop().unwrap_or(Part {
                    number: 1,
                    data: Vec::new(),
                });
                upload.writing = true;
                upload.bytes += part.data.len() as u64;
                let crc32 = crc32(&part.data);
                let request = ObjectRequest::Put {
                    object: upload.object.clone(),
                    body: Arc::from(part.data),
                    crc32,
                };
                self.flights.send(
                    Request::Object(request),
                    Purpose::ObjectWrite,
                    Resend::Transient,
                );
                return None;
            }
            if !upload.waiting.is_empty() {
                upload.starting = true;
                let request = ObjectRequest::StartUpload {
                    object: upload.object.clone(),
                };
                self.flights.send(
                    Request::Object(request),
                    Purpose::ObjectStart,
                    Resend::Transient,
                );
                return None;
            }
        }
        if let Some(upload_id) = &upload.upload_id
            && upload.out < PARTS_IN_FLIGHT
            && let Some(part) = upload.waiting.pop()
        {
            upload.out += 1;
            let crc32 = crc32(&part.data);
            let bytes = part.data.len() as u64;
            let request = ObjectRequest::UploadPart {
                object: upload.object.clone(),
                upload_id: upload_id.clone(),
                number: part.number,
                body: Arc::from(part.data),
                crc32,
            };
            let purpose = Purpose::ObjectPart {
                number: part.number,
                crc32,
                bytes,
            };
            self.flights
                .send(Request::Object(request), purpose, Resend::Transient);
            return None;
        }
        if ended
            && upload.waiting.is_empty()
            && upload.out == 0
            && let Some(upload_id) = &upload.upload_id
        {
            upload.writing = true;
            let mut parts = upload.done.clone();
            parts.sort_by_key(|p| p.number);
            let request = ObjectRequest::CompleteUpload {
                object: upload.object.clone(),
                upload_id: upload_id.clone(),
                parts,
            };
            self.flights.send(
                Request::Object(request),
                Purpose::ObjectWrite,
                Resend::Transient,
            );
            return None;
        }
        let hungry = upload.waiting.len() + upload.out < PARTS_IN_FLIGHT;
        match &self.cutter {
            Cutter::Idle | Cutter::Object(_) if hungry => Some(Step::Input(INPUT_BYTES)),
            _ => Some(self.flights.idle()),
        }
    }

    /// An S3 request of the upload was answered.
    pub(super) fn object_answered(
        &mut self,
        purpose: Purpose,
        answer: ObjectAnswer,
    ) -> Result<(), ProtocolError> {
        let Some(upload) = &mut self.object else {
            return Ok(());
        };
        match (purpose, answer) {
            (Purpose::ObjectStart, ObjectAnswer::Started { upload_id }) => {
                upload.starting = false;
                upload.upload_id = Some(upload_id);
            }
            (
                Purpose::ObjectPart {
                    number,
                    crc32,
                    bytes,
                },
                ObjectAnswer::Part { etag },
            ) => {
                upload.out -= 1;
                upload.bytes += bytes;
                // An item's frame counts as its parts are stored (a
                // stream's progress is what it took in).
                if !matches!(self.source, PutSource::Stream { .. }) {
                    self.progress.bytes_done += bytes;
                }
                upload.done.push(PartDone {
                    number,
                    etag,
                    crc32,
                });
            }
            (
                Purpose::ObjectWrite | Purpose::ObjectHead,
                ObjectAnswer::Written { etag } | ObjectAnswer::Head { etag, .. },
            ) => return self.object_stored(etag),
            _ => return Err(unexpected()),
        }
        Ok(())
    }

    /// An S3 request of the upload failed for good.
    pub(super) fn object_failed(&mut self, purpose: Purpose, failed: Failed) {
        let Some(upload) = &self.object else { return };
        // The write's condition failed, or its upload is gone: an earlier
        // attempt whose answer was lost stored the object (no one else
        // writes this version's key). Its ETag comes from S3.
        let own_earlier = failed.condition_failed()
            || failed
                .failure
                .as_ref()
                .is_some_and(|f| f.code == "NoSuchUpload");
        if matches!(purpose, Purpose::ObjectWrite) && own_earlier {
            let request = ObjectRequest::Head {
                object: upload.object.clone(),
            };
            self.flights.send(
                Request::Object(request),
                Purpose::ObjectHead,
                Resend::Transient,
            );
            return;
        }
        self.fail(failed.error);
    }

    /// S3 stored the object: the parent naming it is committed.
    fn object_stored(&mut self, etag: String) -> Result<(), ProtocolError> {
        let Some(upload) = &mut self.object else {
            return Ok(());
        };
        let frame = upload.frame.take().ok_or_else(unexpected)?;
        let object = ObjectRef {
            bucket: upload.object.bucket.clone(),
            key: upload.object.key.clone(),
            etag,
        };
        let mut split = frame.stored(object)?;
        // The note, and with history the new list, the record of the
        // version replaced and what retention releases (its objects are
        // left to gc, which keeps those a kept version names).
        let kept = self.keep_history(&mut split.parent)?;
        self.progress = Progress {
            bytes_done: self.progress.bytes_total,
            ..self.progress
        };
        let target = self.table.keys_target();
        let plan = plan_streamed_commit_as(&split, &target, &self.expect, self.commit_as())?;
        self.planned_units = write_units(item_size(&split.parent), false);
        self.mode = WriteKind::Batch;
        if let WriteSteps::Batch {
            overwrite, commit, ..
        } = plan.steps
        {
            self.commit = Some(super::Commit::Batch {
                overwrite,
                pinned: commit,
                pinned_out: false,
            });
        }
        self.split = Some(split);
        let (cleanup, record) = match kept {
            Some(kept) => (kept.releases, kept.record),
            None => (plan.cleanup, None),
        };
        self.cleanup = cleanup;
        // The record goes before the commit, as a chunked write's does.
        if let Some(record) = record {
            self.planned_units += write_units(item_size(&record), false);
            let put = (self.table.chunk_table.clone(), WriteRequest::Put(record));
            for batch in pack_batch_writes(alloc::vec![put]) {
                let request = Request::BatchWrite(batch);
                self.flights
                    .send(request, Purpose::ObjectRecord, Resend::Transient);
            }
            return Ok(());
        }
        self.send_commit();
        Ok(())
    }

    /// True while the write's object may hold bytes in S3.
    pub(super) fn object_started(&self) -> bool {
        self.object.as_ref().is_some_and(ObjectUpload::started)
    }
}

fn unexpected() -> ProtocolError {
    ProtocolError::UnexpectedAnswer {
        operation: crate::protocol::Operation::PutObject,
    }
}
