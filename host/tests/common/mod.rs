//! What every host test shares: the server under test, clients, fresh
//! tables, and items to write.
//!
//! The server is chosen by `DYNASLICE_TEST_SERVER`: `embedded` (default:
//! dynoxide, the engine the CLI embeds, behind its own HTTP server in this
//! test process) or `dynamodb-local`
//! (Amazon's DynamoDB Local, started by the tests, bound to 127.0.0.1).
//! `npm test` runs the suite once with each. Each test binary starts its
//! server once and shares it between its tests.

#![allow(dead_code)]

pub use dynaslice_testing::dynamodb_local;

pub mod s3;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use aws_sdk_dynamodb::Client;
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
use dynaslice_host::{LayoutKind, TableConfig, create_tables, local_client};

/// Which server the suite runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// dynoxide, in process.
    Embedded,
    /// Amazon's DynamoDB Local (Java).
    DynamoDbLocal,
}

/// The server named by `DYNASLICE_TEST_SERVER`.
pub fn server_kind() -> ServerKind {
    match std::env::var("DYNASLICE_TEST_SERVER").as_deref() {
        Ok("dynamodb-local") => ServerKind::DynamoDbLocal,
        Ok("embedded") | Err(_) => ServerKind::Embedded,
        Ok(other) => panic!("DYNASLICE_TEST_SERVER={other}: expected embedded or dynamodb-local"),
    }
}

/// Starts dynoxide's HTTP server on 127.0.0.1 on its own thread and
/// runtime, so it outlives every test's runtime; returns its endpoint. (The
/// host itself never opens this socket: its embedded store answers in
/// process. Tests talk HTTP to a real server.)
pub fn start_embedded_thread() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .expect("a free port on 127.0.0.1");
            let addr = listener.local_addr().expect("bound address");
            let db = dynoxide::Database::memory().expect("in-memory store");
            tx.send(format!("http://{addr}")).expect("endpoint sent");
            dynoxide::server::serve_on(listener, db).await;
        });
    });
    rx.recv().expect("embedded store reported its endpoint")
}

/// The shared server's endpoint, started on first use.
pub fn endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    static LOCAL: OnceLock<dynamodb_local::DynamoDbLocal> = OnceLock::new();
    ENDPOINT.get_or_init(|| match server_kind() {
        ServerKind::Embedded => start_embedded_thread(),
        ServerKind::DynamoDbLocal => {
            let server =
                LOCAL.get_or_init(|| dynamodb_local::start().expect("DynamoDB Local starts"));
            server.endpoint.clone()
        }
    })
}

/// A client for the shared server.
pub fn client() -> Client {
    local_client(endpoint())
}

/// A table name no other test uses.
pub fn table_name(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The key schema tests use for each layout: `pk` (S) and, for the item
/// collection, `sk` (S).
pub fn schema(layout: LayoutKind) -> KeySchema {
    match layout {
        LayoutKind::ChunkTable => KeySchema::partition("pk", KeyType::S),
        LayoutKind::ItemCollection => {
            KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
        }
    }
}

/// Creates fresh tables for `layout`.
pub async fn fresh_table(client: &Client, prefix: &str, layout: LayoutKind) -> TableConfig {
    let table = TableConfig::new(&table_name(prefix), schema(layout), layout);
    create_tables(client, &table).await.expect("tables created");
    table
}

/// A key for `layout`'s schema.
pub fn key(layout: LayoutKind, id: &str) -> Item {
    let mut key = Item::new();
    key.insert("pk".into(), AttributeValue::S(id.into()));
    if layout == LayoutKind::ItemCollection {
        key.insert("sk".into(), AttributeValue::S(format!("doc#{id}")));
    }
    key
}

/// `len` bytes from a seeded generator: incompressible, and reproducible
/// from the seed alone (readers check what they read against it).
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut bytes = vec![0; len];
    rng.fill(&mut bytes);
    bytes
}

/// An empty directory of this test process's own under the system's
/// temporary directory, named after `what`.
pub fn fresh_temp_dir(what: &str) -> std::path::PathBuf {
    // Those of test binaries that ended (a run keeps its own for a look).
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        dynaslice_testing::temp::sweep("dynaslice-test-", |rest| {
            rest.rsplit('-').next()?.parse().ok()
        })
    });
    let dir = std::env::temp_dir().join(format!("dynaslice-test-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts `command` (a `dynaslice` run that saves a checkpoint or cursor
/// to `file` as it goes), waits until `file` exists, and kills the run
/// (SIGKILL): what it printed until then. Fails when it ends first, or
/// saves nothing within two minutes.
pub fn kill_once_saved(
    mut command: std::process::Command,
    file: &std::path::Path,
) -> std::process::Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{} never saved",
            file.display()
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait_with_output().unwrap()
}

/// Stores `len` bytes of [`noise`] from `seed`, uncompressed, as the `data`
/// attribute of `key`, streamed with `put_reader` from a file in `dir`
/// (removed again): unlike `put`, no freed copy of the item is left in
/// this process's memory, so a memory test's baseline does not hold one.
/// Returns the bytes' digest.
pub async fn put_noise_from_file(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    dir: &std::path::Path,
    seed: u64,
    len: usize,
) -> u64 {
    let source = dir.join("source.bin");
    let digest = {
        let bytes = noise(seed, len);
        std::fs::write(&source, &bytes).unwrap();
        dynaslice_core::digest::digest(&bytes)
    };
    let file = tokio::fs::File::open(&source).await.unwrap();
    let options = dynaslice_host::PutOptions {
        compression: dynaslice_core::CodecChoice::Fixed(dynaslice_core::codec::Compression::NONE),
        max_item_bytes: 2 * len,
        ..dynaslice_host::PutOptions::default()
    };
    dynaslice_host::put_reader(
        client,
        table,
        key.clone(),
        "data",
        file,
        Some(len as u64),
        &options,
        &(),
    )
    .await
    .expect("put");
    std::fs::remove_file(&source).unwrap();
    digest
}

/// A realistic compressible JSON document of about `len` bytes: an order
/// history with repeated field names and varied values.
pub fn order_history(seed: u64, len: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = String::from("{\"orders\":[");
    let mut n = 0;
    while out.len() < len {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"id\":\"ord-{n:08}\",\"customer\":\"cust-{}\",\"total\":{}.{:02},\"status\":\"{}\",\"items\":[{{\"sku\":\"SKU-{}\",\"qty\":{}}}],\"note\":\"{}\"}}",
            rng.u32(0..50_000),
            rng.u32(1..5000),
            rng.u32(0..100),
            ["shipped", "pending", "delivered", "returned"][rng.usize(0..4)],
            rng.u32(0..100_000),
            rng.u32(1..9),
            (0..rng.usize(0..40)).map(|_| rng.alphanumeric()).collect::<String>()
        ));
        n += 1;
    }
    out.push_str("]}");
    out
}

/// `item` as a DynamoDB server returns it: set members in a fixed order and
/// numbers in canonical form (servers keep neither the order of set members
/// nor the spelling of numbers of attributes stored on the item itself;
/// dynaslice keeps both exactly for the attributes it spills).
pub fn normalized(item: &Item) -> Item {
    item.iter()
        .map(|(k, v)| (k.clone(), normalized_value(v)))
        .collect()
}

fn canonical(number: &str) -> String {
    dynaslice_core::number::Decimal::parse(number)
        .map_or_else(|_| number.to_string(), |d| d.canonical())
}

fn normalized_value(value: &AttributeValue) -> AttributeValue {
    match value {
        AttributeValue::N(n) => AttributeValue::N(canonical(n)),
        AttributeValue::Ns(set) => {
            let mut set: Vec<String> = set.iter().map(|n| canonical(n)).collect();
            set.sort();
            AttributeValue::Ns(set)
        }
        AttributeValue::Ss(set) => {
            let mut set = set.clone();
            set.sort();
            AttributeValue::Ss(set)
        }
        AttributeValue::Bs(set) => {
            let mut set = set.clone();
            set.sort();
            AttributeValue::Bs(set)
        }
        AttributeValue::L(list) => AttributeValue::L(list.iter().map(normalized_value).collect()),
        AttributeValue::M(map) => AttributeValue::M(
            map.iter()
                .map(|(k, v)| (k.clone(), normalized_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// True when `read` is `written` as a server may return it, and every
/// attribute dynaslice spilled (named in `spilled`) is exactly as written.
pub fn same_item(read: &Item, written: &Item, spilled: &[String]) -> bool {
    normalized(read) == normalized(written)
        && spilled
            .iter()
            .all(|name| read.get(name) == written.get(name))
}

/// Runs `gc` with no grace period over the anchors index alone, then a dry
/// run over every chunk, and checks that only chunks their parents
/// reference remain: whatever a crash or a lost race left, its anchors
/// led gc to it. Returns the first run's report and the live chunk count.
pub async fn collect_all_orphans(
    client: &Client,
    table: &TableConfig,
) -> (dynaslice_host::GcReport, usize) {
    use dynaslice_host::GcOptions;
    let now = |dry_run, every_chunk| GcOptions {
        grace: std::time::Duration::ZERO,
        dry_run,
        every_chunk,
        ..GcOptions::default()
    };
    assert!(table.anchors.is_some(), "tables are made with anchors");
    let report = dynaslice_host::gc(client, table, &now(false, false))
        .await
        .expect("gc");
    let after = dynaslice_host::gc(client, table, &now(true, true))
        .await
        .expect("gc dry run");
    assert_eq!(
        (after.chunks, after.deleted),
        (after.referenced + after.kept, 0),
        "unreferenced chunks remain after gc removed {report:?}"
    );
    (report, after.referenced)
}

/// Every item of `table`, read raw through all its Scan pages (consistent).
pub async fn scan_all(client: &Client, table: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = client
            .scan()
            .table_name(table)
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan");
        items.extend(
            page.items()
                .iter()
                .map(|item| dynaslice_host::item_from_sdk(item.clone()).expect("an item")),
        );
        match page.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => return items,
        }
    }
}

/// Writes `item` as it is, bypassing dynaslice (as another program could).
pub async fn plant(client: &Client, table: &str, item: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(dynaslice_host::item_to_sdk(item)))
        .send()
        .await
        .expect("planted");
}

/// Chunk `seq` of the stored item with `key`, read directly from the chunk
/// table (as a tampering test needs it).
pub async fn stored_chunk(client: &Client, table: &TableConfig, key: &Item, seq: usize) -> Item {
    let inspection = dynaslice_host::inspect(client, table, key)
        .await
        .expect("inspect")
        .expect("found");
    let chunk_key = inspection.chunks[seq].key.clone();
    let got = client
        .get_item()
        .table_name(&table.chunk_table)
        .set_key(Some(dynaslice_host::item_to_sdk(chunk_key)))
        .consistent_read(true)
        .send()
        .await
        .expect("get chunk");
    dynaslice_host::item_from_sdk(got.item.expect("chunk exists")).expect("known types")
}
