//! A simulated DynamoDB for the protocol machines' tests: tables in
//! memory, the three condition expressions core writes, transactions that
//! are all or nothing, batches, scans in small pages, a clock of its own,
//! and faults injected per request (a throttle, a 500 before or after the
//! write is applied, a lost answer, part of a batch left unprocessed).

use std::collections::BTreeMap;

use dynaslice_core::history::{History, RECORD_SEQ};
use dynaslice_core::layout::Layout;
use dynaslice_core::manifest::{ANCHOR_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::plan::{Condition, TransactAction, WriteRequest};
use dynaslice_core::protocol::{
    Answer, Env, Failure, Machine, ProtocolError, Request, Response, Step, StoreDate,
};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType, Table};

/// One table: its key schema and its items by key.
struct Stored {
    key: KeySchema,
    items: BTreeMap<Item, Item>,
}

/// The store.
pub struct Store {
    pub now_ms: u64,
    tables: BTreeMap<String, Stored>,
    /// Items a Scan page returns at most.
    pub scan_page: usize,
    /// Transaction tokens applied: a resend with one is not applied again
    /// (DynamoDB keeps them ten minutes).
    tokens: Vec<String>,
}

/// What happens to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Carried out, answered.
    None,
    /// Refused for throughput (not applied).
    Throttle,
    /// A 500 before anything was applied.
    ServerError,
    /// Applied, but the answer was lost on the way back.
    LostAnswer,
    /// A batch: all but its first request (or key) left unprocessed.
    Partial,
}

impl Fault {
    pub const ALL: [Fault; 5] = [
        Fault::None,
        Fault::Throttle,
        Fault::ServerError,
        Fault::LostAnswer,
        Fault::Partial,
    ];
}

pub const TABLE: &str = "docs";
pub const CHUNKS: &str = "docs_chunks";

/// The table the tests use: a string partition key `pk`, chunks in
/// `docs_chunks`, which has the anchors index.
pub fn table() -> Table {
    Table {
        table: TABLE.into(),
        key: KeySchema::partition("pk", KeyType::S),
        layout: Layout::default(),
        chunk_table: CHUNKS.into(),
        index_keys: Vec::new(),
        ttl: None,
        anchors: Some(dynaslice_core::layout::ANCHORS_INDEX.into()),
        objects: None,
    }
}

impl Store {
    pub fn new() -> Self {
        let mut store = Self {
            now_ms: 1_763_683_200_000,
            tables: BTreeMap::new(),
            scan_page: 7,
            tokens: Vec::new(),
        };
        let table = table();
        store.tables.insert(
            TABLE.into(),
            Stored {
                key: table.key.clone(),
                items: BTreeMap::new(),
            },
        );
        store.tables.insert(
            CHUNKS.into(),
            Stored {
                key: KeySchema::partition("pk", KeyType::S),
                items: BTreeMap::new(),
            },
        );
        store
    }

    pub fn env(&self, seed: u64) -> Env {
        Env {
            local_ms: self.now_ms,
            seed,
        }
    }

    /// The items of `table`.
    pub fn items(&self, table: &str) -> Vec<Item> {
        self.tables[table].items.values().cloned().collect()
    }

    pub fn get(&self, table: &str, key: &Item) -> Option<&Item> {
        let stored = &self.tables[table];
        stored.items.get(&stored.key.key_of(key))
    }

    pub fn put_raw(&mut self, table: &str, item: Item) {
        let stored = self.tables.get_mut(table).unwrap();
        stored.items.insert(stored.key.key_of(&item), item);
    }

    pub fn remove_raw(&mut self, table: &str, key: &Item) {
        let stored = self.tables.get_mut(table).unwrap();
        let key = stored.key.key_of(key);
        stored.items.remove(&key);
    }

    /// Carries `request` out under `fault`, as the executor would see it.
    pub fn send(&mut self, request: &Request, fault: Fault) -> Response {
        let result = match fault {
            Fault::Throttle => Err(Failure::answered(
                400,
                "ProvisionedThroughputExceededException",
                "slow down",
            )),
            Fault::ServerError => Err(Failure::answered(500, "InternalServerError", "oops")),
            Fault::LostAnswer => {
                let _ = self.apply(request, false);
                Err(Failure::no_answer("DispatchFailure", "connection reset"))
            }
            Fault::None => self.apply(request, false),
            Fault::Partial => self.apply(request, true),
        };
        Response {
            result,
            consumed: 1.0,
            date: Some(StoreDate {
                unix_ms: self.now_ms / 1000 * 1000,
            }),
            local_ms: self.now_ms,
        }
    }

    fn apply(&mut self, request: &Request, partial: bool) -> Result<Answer, Failure> {
        match request {
            // The simulated tables name no S3 store: no machine asks.
            Request::Object(_) => Err(Failure::answered(501, "NotImplemented", "no S3 here")),
            Request::Get(get) => Ok(Answer::Item(self.get(&get.table, &get.key).cloned())),
            Request::Put(put) => {
                let stored = self.get(&put.table, &put.item).cloned();
                check(put.condition.as_ref(), stored.as_ref())?;
                self.put_raw(&put.table, put.item.clone());
                Ok(Answer::Applied {
                    old: if put.return_old { stored } else { None },
                })
            }
            Request::Update(u) => {
                let stored = self.get(&u.table, &u.key).cloned();
                let condition = u.condition.as_ref().map(|expression| Condition {
                    expression: expression.clone(),
                    names: u.names.clone(),
                    values: u.values.clone(),
                });
                check(condition.as_ref(), stored.as_ref())?;
                let mut item = stored.unwrap_or_else(|| u.key.clone());
                update(&mut item, u);
                self.put_raw(&u.table, item);
                Ok(Answer::Applied { old: None })
            }
            Request::Delete(delete) => {
                let stored = self.get(&delete.table, &delete.key).cloned();
                check(delete.condition.as_ref(), stored.as_ref())?;
                self.remove_raw(&delete.table, &delete.key);
                Ok(Answer::Applied { old: None })
            }
            Request::Transact { transaction, token } => {
                if self.tokens.contains(token) {
                    return Ok(Answer::Applied { old: None });
                }
                let reasons: Vec<String> = transaction
                    .actions
                    .iter()
                    .map(|action| {
                        let (table, key, condition) = match action {
                            TransactAction::Put(p) => (&p.table, &p.item, &p.condition),
                            TransactAction::Delete(d) => (&d.table, &d.key, &d.condition),
                        };
                        let stored = self.get(table, key);
                        match check(condition.as_ref(), stored) {
                            Ok(()) => "None".to_string(),
                            Err(_) => "ConditionalCheckFailed".to_string(),
                        }
                    })
                    .collect();
                if reasons.iter().any(|r| r != "None") {
                    let mut failure = Failure::answered(
                        400,
                        "TransactionCanceledException",
                        "transaction cancelled",
                    );
                    failure.reasons = reasons;
                    return Err(failure);
                }
                self.tokens.push(token.clone());
                for action in &transaction.actions {
                    match action {
                        TransactAction::Put(p) => self.put_raw(&p.table, p.item.clone()),
                        TransactAction::Delete(d) => self.remove_raw(&d.table, &d.key),
                    }
                }
                Ok(Answer::Applied { old: None })
            }
            Request::BatchWrite(batch) => {
                let (done, left) = split_at(&batch.requests, partial);
                for (table, request) in done {
                    match request {
                        WriteRequest::Put(item) => self.put_raw(table, item.clone()),
                        WriteRequest::Delete(key) => self.remove_raw(table, key),
                    }
                }
                Ok(Answer::BatchWrite {
                    unprocessed: left.to_vec(),
                })
            }
            Request::BatchGet(get) => {
                let (done, left) = split_at(&get.keys, partial);
                let items = done
                    .iter()
                    .filter_map(|key| self.get(&get.table, key))
                    .map(|item| project(item, &get.attributes))
                    .collect();
                Ok(Answer::BatchGet {
                    items,
                    unprocessed: left.to_vec(),
                })
            }
            // A Scan (no key condition), or a Query of one partition key
            // (`#p = :p`): the two shapes the tests send.
            Request::Query(query) => {
                let stored = &self.tables[&query.table];
                let from = query.start.as_ref().map(|k| stored.key.key_of(k));
                let wanted = match query.key_condition.as_deref() {
                    None => None,
                    Some("#p = :p") => Some((&query.names["#p"], &query.values[":p"])),
                    Some(other) => panic!("a key condition the simulation does not read: {other}"),
                };
                let limit = query.limit.map_or(self.scan_page, |l| l as usize);
                let mut page: Vec<Item> = stored
                    .items
                    .iter()
                    .filter(|(k, _)| from.as_ref().is_none_or(|f| *k > f))
                    .filter(|(k, _)| in_segment(k, query.segment))
                    .filter(|(_, item)| {
                        wanted.is_none_or(|(name, value)| item.get(name.as_str()) == Some(value))
                    })
                    .take(limit + 1)
                    .map(|(_, item)| item.clone())
                    .collect();
                let next = (page.len() > limit).then(|| {
                    page.truncate(limit);
                    stored.key.key_of(page.last().unwrap())
                });
                Ok(Answer::Scan { items: page, next })
            }
            Request::Scan(scan) => {
                let stored = &self.tables[&scan.table];
                let from = scan.start.as_ref().map(|k| stored.key.key_of(k));
                // The anchors index holds the items with `_da` (a sparse
                // index), in table key order here.
                let indexed =
                    |item: &Item| scan.index.is_none() || item.contains_key(ANCHOR_ATTRIBUTE);
                let mut page: Vec<Item> = stored
                    .items
                    .iter()
                    .filter(|(k, _)| from.as_ref().is_none_or(|f| *k > f))
                    .filter(|(_, item)| indexed(item))
                    .take(self.scan_page + 1)
                    .map(|(_, item)| project(item, &scan.attributes))
                    .collect();
                let next = (page.len() > self.scan_page).then(|| {
                    page.truncate(self.scan_page);
                    stored.key.key_of(page.last().unwrap())
                });
                Ok(Answer::Scan { items: page, next })
            }
        }
    }
}

/// Whether a key falls in a parallel Scan's segment: by a hash of the
/// key, as DynamoDB divides a table by partition.
fn in_segment(key: &Item, segment: Option<(u32, u32)>) -> bool {
    let Some((segment, total)) = segment else {
        return true;
    };
    let hash = format!("{key:?}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    hash % u64::from(total) == u64::from(segment)
}

fn split_at<T>(all: &[T], partial: bool) -> (&[T], &[T]) {
    if partial && !all.is_empty() {
        all.split_at(1)
    } else {
        (all, &[])
    }
}

fn project(item: &Item, attributes: &[String]) -> Item {
    if attributes.is_empty() {
        return item.clone();
    }
    item.iter()
        .filter(|(name, _)| attributes.contains(name))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

/// An UpdateItem's `SET #a = :a, #m.#u = :n REMOVE #b` (what core
/// writes), applied to `item`.
fn update(item: &mut Item, update: &dynaslice_core::plan::Update) {
    let (set, remove) = match update.expression.split_once(" REMOVE ") {
        Some((set, remove)) => (set, remove),
        None if update.expression.starts_with("REMOVE ") => ("", &update.expression[7..]),
        None => (update.expression.as_str(), ""),
    };
    let name = |placeholder: &str| update.names[placeholder].clone();
    for action in set
        .trim_start_matches("SET ")
        .split(", ")
        .filter(|a| !a.is_empty())
    {
        let (path, value) = action.split_once(" = ").expect("SET path = :value");
        let value = update.values[value].clone();
        match path.split_once('.') {
            Some((map, field)) => match item.get_mut(&name(map)) {
                Some(AttributeValue::M(fields)) => {
                    fields.insert(name(field), value);
                }
                _ => panic!("SET of a field in no map"),
            },
            None => {
                item.insert(name(path), value);
            }
        }
    }
    for path in remove.split(", ").filter(|p| !p.is_empty()) {
        item.remove(&name(path));
    }
}

/// The conditions core writes, evaluated on the stored item.
fn check(condition: Option<&Condition>, stored: Option<&Item>) -> Result<(), Failure> {
    let Some(condition) = condition else {
        return Ok(());
    };
    let holds = match condition.expression.as_str() {
        "attribute_not_exists(#k)" => stored.is_none(),
        "attribute_exists(#k) AND attribute_not_exists(#m)" => {
            stored.is_some_and(|s| !s.contains_key(MANIFEST_ATTRIBUTE))
        }
        "#m.#v = :v AND #m.#u = :u" | "#m.#v = :v AND attribute_not_exists(#m.#u)" => {
            let wanted = &condition.values[":v"];
            let update = condition.values.get(":u");
            match stored.and_then(|s| s.get(MANIFEST_ATTRIBUTE)) {
                Some(AttributeValue::M(m)) => m.get("v") == Some(wanted) && m.get("u") == update,
                _ => false,
            }
        }
        other => panic!("a condition core does not write: {other}"),
    };
    if holds {
        Ok(())
    } else {
        Err(Failure::answered(
            400,
            "ConditionalCheckFailedException",
            "the conditional request failed",
        ))
    }
}

/// The requests a machine handed out and no answer was fed back for yet,
/// and how many it sent in all.
#[derive(Default)]
pub struct Out {
    pub pending: Vec<dynaslice_core::protocol::Send>,
    pub sent: usize,
}

/// Where a machine stopped, short of its end.
pub enum Halt<T> {
    Done(Result<T, ProtocolError>),
    Input(usize),
    Output,
    Restart,
}

/// Runs `machine` against `store` until it finishes or asks for bytes;
/// `fault(n, request)` decides what happens to the n-th request sent.
pub fn run<M: Machine>(
    machine: &mut M,
    store: &mut Store,
    out: &mut Out,
    fault: &mut dyn FnMut(usize, &Request) -> Fault,
) -> Halt<M::Output> {
    let Out { pending, sent } = out;
    // Sleeps in a row with nothing out: a machine that keeps sleeping
    // without ever sending would spin here for ever.
    let mut sleeps = 0;
    loop {
        let step = machine.poll();
        sleeps = match step {
            Step::Sleep(_) if pending.is_empty() => sleeps + 1,
            _ => 0,
        };
        assert!(
            sleeps < 100,
            "a machine sleeps again and again with nothing out"
        );
        match step {
            Step::Send(send) => pending.push(send),
            Step::Work => machine.work(),
            Step::Input(max) => return Halt::Input(max),
            Step::Output => return Halt::Output,
            Step::Restart => return Halt::Restart,
            Step::Done(result) => return Halt::Done(result),
            // Nothing out: the pause passes.
            Step::Sleep(pause) if pending.is_empty() => {
                store.now_ms += pause.as_millis() as u64;
                machine.wake(store.now_ms);
            }
            Step::Wait | Step::Sleep(_) => {
                // Answers in the order the requests went out.
                assert!(!pending.is_empty(), "a machine waits with nothing out");
                let send = pending.remove(0);
                store.now_ms += 1 + send.delay.as_millis() as u64;
                let f = fault(*sent, &send.request);
                *sent += 1;
                let response = store.send(&send.request, f);
                machine.handle(send.id, response);
            }
        }
    }
}

/// Runs a machine that needs no bytes moved to its end.
pub fn finish<M: Machine>(
    machine: &mut M,
    store: &mut Store,
    fault: &mut dyn FnMut(usize, &Request) -> Fault,
) -> Result<M::Output, ProtocolError> {
    let mut out = Out::default();
    loop {
        match run(machine, store, &mut out, fault) {
            Halt::Done(result) => return result,
            // A machine between pages (gc): it goes on when polled.
            Halt::Output => {}
            _ => panic!("the machine asked to move bytes"),
        }
    }
}

/// No faults.
pub fn clean(_: usize, _: &Request) -> Fault {
    Fault::None
}

/// Every stored parent's version has all its chunks.
pub fn committed_versions_whole(store: &Store) -> Result<(), String> {
    let table = table();
    for parent in store.items(TABLE) {
        let Some(value) = parent.get(MANIFEST_ATTRIBUTE) else {
            continue;
        };
        // A damaged manifest names no version to check.
        let Ok(manifest) = dynaslice_core::manifest::Manifest::from_value(value) else {
            continue;
        };
        // Every frame: its own and its groups'.
        let mut versions: Vec<_> = manifest
            .frames()
            .map(|f| (f.version, f.chunk_count, false))
            .collect();
        // Every version the parent's history keeps: its chunks, its
        // groups' and its record.
        let history = History::of_parent(&parent).map_err(|e| e.to_string())?;
        for entry in history.iter().flat_map(|h| h.kept(store.now_ms)) {
            versions.push((entry.version, entry.chunk_count, true));
            versions.extend(entry.groups.iter().map(|&(id, n)| (id, n, false)));
        }
        for (version, count, kept) in versions {
            let record = kept.then_some(RECORD_SEQ);
            for seq in (0..count).chain(record) {
                let key = dynaslice_core::layout::chunk_key(
                    &table.key,
                    &table.layout,
                    &parent,
                    version,
                    seq,
                )
                .unwrap();
                if store.get(CHUNKS, &key).is_none() {
                    return Err(format!(
                        "chunk {seq} of committed version {version} is gone"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every stored chunk's anchor is stored (docs/FORMAT.md section 6,
/// "Anchors"): a `gc` reading the anchors index alone finds every chunk.
pub fn anchors_cover_every_chunk(store: &Store) -> Result<(), String> {
    let table = table();
    for chunk in store.items(CHUNKS) {
        let parsed =
            dynaslice_core::layout::parse_chunk_key(&table.key, &table.layout, &chunk).unwrap();
        let anchor_seq = match parsed.seq {
            RECORD_SEQ => RECORD_SEQ,
            seq => seq - seq % dynaslice_core::layout::ANCHOR_SPAN,
        };
        let anchor = dynaslice_core::layout::chunk_key(
            &table.key,
            &table.layout,
            &parsed.parent_key,
            parsed.version,
            anchor_seq,
        )
        .unwrap();
        let marked = store
            .get(CHUNKS, &anchor)
            .is_some_and(|a| a.get(ANCHOR_ATTRIBUTE) == a.get("_h"));
        if !marked {
            return Err(format!(
                "chunk {} of {} is stored without its anchor {anchor_seq}",
                parsed.seq, parsed.version
            ));
        }
    }
    Ok(())
}

/// Chunks no stored parent refers to.
pub fn orphans(store: &Store) -> usize {
    let table = table();
    store
        .items(CHUNKS)
        .iter()
        .filter(|chunk| {
            let parsed =
                dynaslice_core::layout::parse_chunk_key(&table.key, &table.layout, chunk).unwrap();
            let Some(parent) = store.get(TABLE, &parsed.parent_key) else {
                return true;
            };
            let kept = History::of_parent(parent)
                .ok()
                .flatten()
                .is_some_and(|h| h.kept(store.now_ms).any(|e| e.holds(parsed.version)));
            let current = parent
                .get(MANIFEST_ATTRIBUTE)
                .and_then(|v| dynaslice_core::manifest::Manifest::from_value(v).ok())
                .is_some_and(|m| m.frames().any(|f| f.version == parsed.version));
            !current && !kept
        })
        .count()
}
