//! Garbage collection of S3 objects (docs/FORMAT.md, "Objects"): deleting
//! the objects under a table's prefix that no parent refers to, once older
//! than the grace period, and aborting multipart uploads as old. Objects
//! become unreferenced as chunks do: a writer crashed or lost before its
//! commit, or could not delete a replaced version's object.
//!
//! A page of ListObjectsV2 at a time: each key is read back into its
//! parent's key and version ([`ObjectStore::parse_key`]; a key that does
//! not parse, under the prefix or not, is never touched), the parents are
//! read with consistent BatchGetItems (keys and manifests only), and an
//! object is deleted only when its parent is gone or names another
//! version, its history keeps no such version, and the object is older
//! than the grace period by S3's own clock: the `Date` of the listing's
//! answer against the object's `LastModified`, both S3's. An answer with
//! no `Date` proves no age, and keeps everything. A parent whose manifest
//! cannot be read keeps every object of its key.

use alloc::string::String;
use alloc::vec::Vec;

use super::clock::StoreClock;
use super::deletes::Deletes;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled, found};
use super::pace::Pace;
use super::policy::{DEFAULT_CONCURRENCY, INITIAL_WRITE_LIMIT};
use super::request::{
    Answer, Listed, ObjectAnswer, ObjectKey, ObjectRequest, Request, RequestId, Response, Upload,
};
use super::{Env, GcOptions, Machine, Step};
use crate::history::History;
use crate::manifest::{MANIFEST_ATTRIBUTE, stored_version};
use crate::object::ObjectStore;
use crate::plan::{BatchGet, MAX_BATCH_GET_KEYS};
use crate::table::Table;
use crate::value::Item;
use crate::version::VersionId;

/// What object `gc` found and did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ObjectGcReport {
    /// Objects listed under the prefix.
    pub objects: usize,
    /// Objects whose parent names them.
    pub referenced: usize,
    /// Objects of versions their parent's history keeps.
    pub kept: usize,
    /// Unreferenced objects kept because they are within the grace period
    /// (or their age is unknown).
    pub young: usize,
    /// Unreferenced objects deleted (or that would be, in a dry run).
    pub deleted: usize,
    /// Objects kept because their parent's manifest cannot be read.
    pub unreadable: usize,
    /// Keys under the prefix that name no parent and version: never touched.
    pub foreign: usize,
    /// Multipart uploads aborted (or that would be): older than the grace.
    pub uploads_aborted: usize,
    /// Multipart uploads kept: within the grace period.
    pub uploads_young: usize,
    /// False when the server does not list multipart uploads.
    pub uploads_listed: bool,
    /// Capacity units DynamoDB reported consuming.
    pub consumed: Consumed,
}

#[derive(Clone, Debug)]
enum Purpose {
    List,
    Parents,
    Uploads,
    Delete,
    Abort,
}

enum Phase {
    /// A page of the listing is out (or the next is due).
    List,
    /// The page's parents are being read.
    Parents,
    /// The multipart uploads are being listed.
    Uploads,
    /// Deletes going out.
    Deleting {
        then_uploads: bool,
    },
    Done(Option<Result<ObjectGcReport, ProtocolError>>),
}

/// The objects of one listing page, by parent.
struct PageObject {
    key: String,
    parent: Item,
    version: VersionId,
    /// Its age by S3's clock, when the answer told the time.
    age_ms: Option<u64>,
}

/// Collects a table's unreferenced S3 objects (see the module's documentation).
pub struct ObjectGcMachine {
    table: Table,
    store: ObjectStore,
    options: GcOptions,
    flights: Flights<Purpose>,
    phase: Phase,
    next: Option<String>,
    upload_marker: Option<(String, String)>,
    page: Vec<PageObject>,
    /// Parents of the page as read, and how many reads are out.
    parents: Vec<Item>,
    reads_out: usize,
    deletes: Deletes<Purpose>,
    report: ObjectGcReport,
}

impl ObjectGcMachine {
    /// A collection of `table`'s objects (which must name a store).
    pub fn new(table: Table, options: GcOptions, env: Env) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, DEFAULT_CONCURRENCY);
        let flights = Flights::new(
            super::RetryPolicy::default(),
            pace,
            StoreClock::new(env.local_ms),
            env.seed,
        );
        let store = table.objects.clone();
        let mut machine = Self {
            table,
            store: store.clone().unwrap_or_else(|| ObjectStore::new("", "")),
            options,
            flights,
            phase: Phase::List,
            next: None,
            upload_marker: None,
            page: Vec::new(),
            parents: Vec::new(),
            reads_out: 0,
            deletes: Deletes::default(),
            report: ObjectGcReport {
                uploads_listed: true,
                ..ObjectGcReport::default()
            },
        };
        match store {
            Some(_) => machine.list(),
            None => machine.finish(Ok(ObjectGcReport::default())),
        }
        machine
    }

    fn list(&mut self) {
        let request = ObjectRequest::List {
            bucket: self.store.bucket.clone(),
            prefix: self.store.prefix.clone(),
            after: self.next.take(),
        };
        self.flights
            .send(Request::Object(request), Purpose::List, Resend::Transient);
        self.phase = Phase::List;
    }

    fn list_uploads(&mut self) {
        let request = ObjectRequest::ListUploads {
            bucket: self.store.bucket.clone(),
            prefix: self.store.prefix.clone(),
            after: self.upload_marker.take(),
        };
        self.flights.send(
            Request::Object(request),
            Purpose::Uploads,
            Resend::Transient,
        );
        self.phase = Phase::Uploads;
    }

    fn finish(&mut self, result: Result<ObjectGcReport, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(result));
    }

    fn grace_ms(&self) -> u64 {
        u64::try_from(self.options.grace.as_millis()).unwrap_or(u64::MAX)
    }

    /// A listing page arrived: its objects, their parents to read.
    fn listed(&mut self, objects: Vec<Listed>, next: Option<String>, now_ms: Option<u64>) {
        self.next = next;
        for object in objects {
            self.report.objects += 1;
            let Some((parent, version)) = self.store.parse_key(&self.table.key, &object.key) else {
                self.report.foreign += 1;
                continue;
            };
            let age_ms = now_ms
                .zip(object.modified_ms)
                .map(|(n, m)| n.saturating_sub(m));
            self.page.push(PageObject {
                key: object.key,
                parent,
                version,
                age_ms,
            });
        }
        let mut keys: Vec<Item> = Vec::new();
        for object in &self.page {
            if !keys.contains(&object.parent) {
                keys.push(object.parent.clone());
            }
        }
        let attributes: Vec<String> = self
            .table
            .key
            .attributes()
            .map(|k| k.name.clone())
            .chain([String::from(MANIFEST_ATTRIBUTE)])
            .collect();
        for keys in keys.chunks(MAX_BATCH_GET_KEYS) {
            let get = BatchGet {
                table: self.table.table.clone(),
                keys: keys.to_vec(),
                consistent: true,
                expected_bytes: 0,
                attributes: attributes.clone(),
            };
            self.flights
                .send(Request::BatchGet(get), Purpose::Parents, Resend::Transient);
            self.reads_out += 1;
        }
        self.phase = Phase::Parents;
        if self.reads_out == 0 {
            self.judge();
        }
    }

    /// Every parent of the page is read: the verdicts, and the deletes.
    fn judge(&mut self) {
        let grace = self.grace_ms();
        let parents = core::mem::take(&mut self.parents);
        for object in core::mem::take(&mut self.page) {
            let parent = parents.iter().find(|p| {
                self.table
                    .key
                    .attributes()
                    .all(|k| p.get(&k.name) == object.parent.get(&k.name))
            });
            let verdict = match parent {
                None => Verdict::Unreferenced,
                Some(parent) => match stored_version(parent) {
                    Err(_) => Verdict::Unreadable,
                    Ok(Some(v)) if v == object.version => match self.table.owned_object(parent) {
                        Some(owned) if owned.key == object.key => Verdict::Referenced,
                        _ => Verdict::Unreferenced,
                    },
                    Ok(_) => match History::of_parent(parent) {
                        Err(_) => Verdict::Unreadable,
                        Ok(Some(h)) if h.entries.iter().any(|e| e.version == object.version) => {
                            Verdict::Kept
                        }
                        Ok(_) => Verdict::Unreferenced,
                    },
                },
            };
            match verdict {
                Verdict::Referenced => self.report.referenced += 1,
                Verdict::Kept => self.report.kept += 1,
                Verdict::Unreadable => self.report.unreadable += 1,
                Verdict::Unreferenced if object.age_ms.is_some_and(|age| age >= grace) => {
                    self.report.deleted += 1;
                    if !self.options.dry_run {
                        let object = ObjectKey {
                            bucket: self.store.bucket.clone(),
                            key: object.key,
                        };
                        self.deletes
                            .add_object(ObjectRequest::Delete { object }, Purpose::Delete);
                    }
                }
                Verdict::Unreferenced => self.report.young += 1,
            }
        }
        self.phase = Phase::Deleting {
            then_uploads: self.next.is_none(),
        };
    }

    /// A page of multipart uploads arrived.
    fn uploads_listed(
        &mut self,
        uploads: Vec<Upload>,
        next: Option<(String, String)>,
        now_ms: Option<u64>,
    ) {
        let grace = self.grace_ms();
        for upload in uploads {
            // Only this store's keys: an upload of a key no parent names
            // is not dynaslice's to abort.
            if self.store.parse_key(&self.table.key, &upload.key).is_none() {
                continue;
            }
            let age = now_ms
                .zip(upload.initiated_ms)
                .map(|(n, i)| n.saturating_sub(i));
            if age.is_some_and(|age| age >= grace) {
                self.report.uploads_aborted += 1;
                if !self.options.dry_run {
                    let object = ObjectKey {
                        bucket: self.store.bucket.clone(),
                        key: upload.key,
                    };
                    let abort = ObjectRequest::AbortUpload {
                        object,
                        upload_id: upload.upload_id,
                    };
                    self.deletes.add_object(abort, Purpose::Abort);
                }
            } else {
                self.report.uploads_young += 1;
            }
        }
        self.upload_marker = next;
        self.phase = Phase::Deleting {
            then_uploads: false,
        };
    }

    fn answered(&mut self, purpose: Purpose, answer: Answer) -> Result<(), ProtocolError> {
        match (purpose, answer) {
            (
                Purpose::List,
                Answer::Object(ObjectAnswer::Listed {
                    objects,
                    next,
                    now_ms,
                }),
            ) => {
                self.listed(objects, next, now_ms);
            }
            (Purpose::Parents, answer) => {
                self.parents.extend(found(answer));
                self.reads_out -= 1;
                if self.reads_out == 0 {
                    self.judge();
                }
            }
            (
                Purpose::Uploads,
                Answer::Object(ObjectAnswer::Uploads {
                    uploads,
                    next,
                    now_ms,
                }),
            ) => self.uploads_listed(uploads, next, now_ms),
            (Purpose::Delete | Purpose::Abort, _) => {}
            (_, _) => {
                return Err(ProtocolError::UnexpectedAnswer {
                    operation: crate::protocol::Operation::ListObjectsV2,
                });
            }
        }
        Ok(())
    }
}

enum Verdict {
    Referenced,
    Kept,
    Unreadable,
    Unreferenced,
}

impl Machine for ObjectGcMachine {
    type Output = ObjectGcReport;

    fn poll(&mut self) -> Step<ObjectGcReport> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            match &mut self.phase {
                Phase::List | Phase::Parents | Phase::Uploads => return self.flights.idle(),
                Phase::Deleting { then_uploads } => {
                    let then_uploads = *then_uploads;
                    if self.deletes.send(&mut self.flights) {
                        continue;
                    }
                    if self.flights.open() > 0 {
                        return self.flights.idle();
                    }
                    if self.next.is_some() {
                        self.list();
                    } else if then_uploads || self.upload_marker.is_some() {
                        self.list_uploads();
                    } else {
                        self.report.consumed = self.flights.consumed;
                        let report = self.report.clone();
                        self.finish(Ok(report));
                    }
                }
                Phase::Done(result) => {
                    return match result.take() {
                        Some(result) => Step::Done(result),
                        None => Step::Wait,
                    };
                }
            }
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        let result = match self.flights.land(id, response) {
            Some(Settled::Answer(purpose, answer)) => self.answered(purpose, answer),
            // A server that lists no uploads (the embedded store): said so.
            Some(Settled::Failed(Purpose::Uploads, failed))
                if failed
                    .failure
                    .as_ref()
                    .is_some_and(|f| f.code == "NotImplemented") =>
            {
                self.report.uploads_listed = false;
                self.phase = Phase::Deleting {
                    then_uploads: false,
                };
                Ok(())
            }
            // Left for the next run.
            Some(Settled::Failed(Purpose::Delete, _)) => {
                self.report.deleted -= 1;
                Ok(())
            }
            Some(Settled::Failed(Purpose::Abort, _)) => {
                self.report.uploads_aborted -= 1;
                Ok(())
            }
            Some(Settled::Failed(_, failed)) => Err(failed.error),
            None => Ok(()),
        };
        if let Err(error) = result {
            self.finish(Err(error));
        }
    }

    fn wake(&mut self, local_ms: u64) {
        self.flights.wake(local_ms);
    }

    fn cancel(&mut self) {
        if !matches!(self.phase, Phase::Done(_)) {
            self.finish(Err(ProtocolError::Cancelled));
        }
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}
