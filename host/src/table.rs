//! Tables: where a virtual item's parent and chunks live, discovered from
//! the server or created for either layout.

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType as SdkKeyType, Projection,
    ProjectionType, ScalarAttributeType, TimeToLiveSpecification, TimeToLiveStatus,
};
use dynaslice_core::layout::{ANCHORS_INDEX, Layout};
use dynaslice_core::manifest::ANCHOR_ATTRIBUTE;
use dynaslice_core::plan::Target;
use dynaslice_core::{IndexKey, KeySchema, KeyType};

use crate::error::HostError;
use crate::executor::{admin_error, with_retries};

/// The partition key attribute of a chunk table (core's default).
pub const CHUNK_KEY_NAME: &str = dynaslice_core::layout::DEFAULT_CHUNK_KEY_NAME;

/// The chunk table of `table` under the chunk-table layout: `<table>_chunks`
/// (core's default, the npm package's too).
pub fn chunk_table_name(table: &str) -> String {
    dynaslice_core::layout::default_chunk_table(table)
}

/// A table able to hold virtual items: its key schema and where chunks go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableConfig {
    /// The parent table.
    pub table: String,
    /// Its key schema.
    pub key: KeySchema,
    /// Where chunks live.
    pub layout: Layout,
    /// The chunk table (the parent table for the item-collection layout).
    pub chunk_table: String,
    /// The key attributes of the table's global and local secondary
    /// indexes (from DescribeTable): writes keep them on the parent.
    pub index_keys: Vec<IndexKey>,
    /// The table's TTL attribute, when TTL is on (DescribeTimeToLive): kept
    /// on the parent and copied to every chunk.
    pub ttl: Option<String>,
    /// The chunk table's TTL attribute (the parent table's, in the
    /// item-collection layout).
    pub chunk_table_ttl: Option<String>,
    /// The chunk table's anchors index ([`ANCHORS_INDEX`], docs/FORMAT.md
    /// section 6), which `gc` reads instead of every chunk: made by
    /// [`create_tables`], found by [`TableConfig::discover`] once active.
    pub anchors: Option<String>,
    /// Where payloads at or above a threshold go in S3, and the client
    /// that reaches it (`None`: every payload stays in DynamoDB).
    pub objects: Option<crate::Objects>,
}

/// Which layout to create or use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LayoutKind {
    /// Chunks in `<table>_chunks`, keyed by a string `pk`.
    #[default]
    ChunkTable,
    /// Chunks in the parent's item collection (needs a string sort key).
    ItemCollection,
}

impl TableConfig {
    /// The rules an upload to this table is checked by, for payloads of
    /// at most `max_raw_bytes`.
    pub fn upload_rules(&self, max_raw_bytes: u64) -> dynaslice_core::upload::UploadRules<'_> {
        dynaslice_core::upload::UploadRules {
            key: &self.key,
            layout: &self.layout,
            max_raw_bytes,
            index_keys: &self.index_keys,
            ttl: self.ttl.as_deref(),
        }
    }

    /// A table whose chunks live in `<table>_chunks`, with the anchors
    /// index [`create_tables`] makes (for a table made otherwise, use
    /// [`TableConfig::discover`], or set `anchors` to `None`).
    pub fn chunk_table(table: &str, key: KeySchema) -> Self {
        Self {
            table: table.to_string(),
            key,
            layout: Layout::ChunkTable {
                key_name: CHUNK_KEY_NAME.to_string(),
            },
            chunk_table: chunk_table_name(table),
            index_keys: Vec::new(),
            ttl: None,
            chunk_table_ttl: None,
            anchors: Some(ANCHORS_INDEX.to_string()),
            objects: None,
        }
    }

    /// A table whose chunks live beside the parent (string sort key needed),
    /// with the anchors index [`create_tables`] makes (see
    /// [`TableConfig::chunk_table`]).
    pub fn item_collection(table: &str, key: KeySchema) -> Self {
        Self {
            table: table.to_string(),
            key,
            layout: Layout::ItemCollection,
            chunk_table: table.to_string(),
            index_keys: Vec::new(),
            ttl: None,
            chunk_table_ttl: None,
            anchors: Some(ANCHORS_INDEX.to_string()),
            objects: None,
        }
    }

    /// The table for `kind`.
    pub fn new(table: &str, key: KeySchema, kind: LayoutKind) -> Self {
        match kind {
            LayoutKind::ChunkTable => Self::chunk_table(table, key),
            LayoutKind::ItemCollection => Self::item_collection(table, key),
        }
    }

    /// The table as core's protocol machines take it.
    pub fn core(&self) -> dynaslice_core::Table {
        dynaslice_core::Table {
            table: self.table.clone(),
            key: self.key.clone(),
            layout: self.layout.clone(),
            chunk_table: self.chunk_table.clone(),
            index_keys: self.index_keys.clone(),
            ttl: self.ttl.clone(),
            anchors: self.anchors.clone(),
            objects: self.objects.as_ref().map(|o| o.store.clone()),
        }
    }

    /// The plan target, refusing stored items over the default limit.
    pub fn target(&self) -> Target<'_> {
        Target {
            anchors_indexed: self.anchors.is_some(),
            ..Target::new(&self.table, &self.chunk_table, &self.key, &self.layout)
        }
    }

    /// The plan target, refusing stored items over `max_raw_bytes` before
    /// building a key for any of their chunks.
    pub fn target_within(&self, max_raw_bytes: usize) -> Target<'_> {
        Target {
            max_raw_bytes: max_raw_bytes as u64,
            ..self.target()
        }
    }

    /// Reads `table`'s key schema from the server and picks its layout:
    /// the chunk table when `<table>_chunks` exists, else the item
    /// collection when the sort key is a string.
    pub async fn discover(client: &Client, table: &str) -> Result<Self, HostError> {
        let described = describe(client, table)
            .await?
            .ok_or_else(|| HostError::TableNotFound {
                table: table.to_string(),
            })?;
        let mut config = Self::discover_layout(client, table, described).await?;
        config.ttl = describe_ttl(client, table).await?;
        config.chunk_table_ttl = match &config.layout {
            Layout::ChunkTable { .. } if config.ttl.is_some() => {
                describe_ttl(client, &config.chunk_table).await?
            }
            _ => config.ttl.clone(),
        };
        Ok(config)
    }

    /// A warning when the table has TTL and its chunk table does not (or on
    /// another attribute): expired items' chunks then stay until `gc`.
    pub fn ttl_warning(&self) -> Option<String> {
        let ttl = self.ttl.as_ref()?;
        (self.chunk_table_ttl.as_ref() != Some(ttl)).then(|| {
            format!(
                "{} deletes items by TTL on {ttl}, but its chunk table {} does not: chunks of \
                 expired items stay until `dynaslice gc` (turn TTL on for {} on the same attribute)",
                self.table, self.chunk_table, self.chunk_table
            )
        })
    }

    /// The layout of `table`, described as `described`, with its index keys
    /// and the anchors index of the table its chunks live in.
    async fn discover_layout(
        client: &Client,
        table: &str,
        described: Described,
    ) -> Result<Self, HostError> {
        let Described {
            key,
            index_keys,
            anchors,
            ..
        } = described;
        let chunks = chunk_table_name(table);
        let config = match describe(client, &chunks).await? {
            Some(chunk_table) => {
                let chunk_key = chunk_table.key;
                let simple_string =
                    chunk_key.sort.is_none() && chunk_key.partition.key_type == KeyType::S;
                if !simple_string {
                    return Err(HostError::TableUnsupported {
                        table: table.to_string(),
                        reason: format!(
                            "its chunk table {chunks} needs a string partition key and no sort key"
                        ),
                    });
                }
                let mut config = Self::chunk_table(table, key);
                config.layout = Layout::ChunkTable {
                    key_name: chunk_key.partition.name,
                };
                config.anchors = chunk_table.anchors;
                config
            }
            None if key.sort.as_ref().is_some_and(|s| s.key_type == KeyType::S) => {
                let mut config = Self::item_collection(table, key);
                config.anchors = anchors;
                config
            }
            None => {
                return Err(HostError::TableUnsupported {
                    table: table.to_string(),
                    reason: format!(
                        "no chunk table {chunks} and no string sort key to keep chunks beside the item"
                    ),
                });
            }
        };
        Ok(Self {
            index_keys,
            ..config
        })
    }
}

/// A table's key schema, or `None` when it does not exist.
pub async fn describe_key(client: &Client, table: &str) -> Result<Option<KeySchema>, HostError> {
    Ok(describe(client, table).await?.map(|d| d.key))
}

/// The units per second a table serves, as DynamoDB describes it: its
/// provisioned capacity; for an on-demand table its maximum
/// (`OnDemandThroughput`) when one is set, else its warm throughput (what
/// it serves at once); `None` when the description says neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    /// Read units per second.
    pub read: Option<u64>,
    /// Write units per second.
    pub write: Option<u64>,
}

/// What `config`'s tables serve: the smaller of its two tables' capacities
/// (one table in an item collection), so maintenance held to a share of it
/// leaves the rest of either to the application.
pub async fn capacity(client: &Client, config: &TableConfig) -> Result<Capacity, HostError> {
    let mut names = vec![config.table.as_str()];
    if config.chunk_table != config.table {
        names.push(config.chunk_table.as_str());
    }
    let mut least = Capacity::default();
    for (at, name) in names.into_iter().enumerate() {
        let output = with_retries(|| client.describe_table().table_name(name).send())
            .await
            .map_err(|failed| admin_error("DescribeTable", failed))?;
        let Some(table) = output.table() else {
            return Err(HostError::TableNotFound {
                table: name.to_string(),
            });
        };
        let positive = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok()).filter(|&n| n > 0);
        let provisioned = table.provisioned_throughput();
        let on_demand = table.on_demand_throughput();
        let warm = table.warm_throughput();
        let read = positive(provisioned.and_then(|p| p.read_capacity_units()))
            .or_else(|| positive(on_demand.and_then(|o| o.max_read_request_units())))
            .or_else(|| positive(warm.and_then(|w| w.read_units_per_second())));
        let write = positive(provisioned.and_then(|p| p.write_capacity_units()))
            .or_else(|| positive(on_demand.and_then(|o| o.max_write_request_units())))
            .or_else(|| positive(warm.and_then(|w| w.write_units_per_second())));
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
        least = match at {
            0 => Capacity { read, write },
            _ => Capacity {
                read: min(least.read, read),
                write: min(least.write, write),
            },
        };
    }
    Ok(least)
}

/// What DescribeTable tells of a table's keys.
struct Described {
    key: KeySchema,
    index_keys: Vec<IndexKey>,
    /// Its anchors index, when active.
    anchors: Option<String>,
    /// Its anchors index is being built (backfilled): not read yet.
    anchors_building: bool,
}

/// The attribute TTL deletes items by, when TTL is on (or being turned on).
async fn describe_ttl(client: &Client, table: &str) -> Result<Option<String>, HostError> {
    let output = with_retries(|| client.describe_time_to_live().table_name(table).send())
        .await
        .map_err(|failed| admin_error("DescribeTimeToLive", failed))?;
    Ok(output.time_to_live_description().and_then(|d| {
        let on = matches!(
            d.time_to_live_status(),
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
        );
        d.attribute_name().filter(|_| on).map(str::to_string)
    }))
}

/// A table's keys, or `None` when it does not exist.
async fn describe(client: &Client, table: &str) -> Result<Option<Described>, HostError> {
    let output = match with_retries(|| client.describe_table().table_name(table).send()).await {
        Ok(output) => output,
        Err((e, _))
            if e.as_service_error()
                .is_some_and(|s| s.is_resource_not_found_exception()) =>
        {
            return Ok(None);
        }
        Err(failed) => return Err(admin_error("DescribeTable", failed)),
    };
    let Some(description) = output.table else {
        return Ok(None);
    };
    let type_of = |name: &str| {
        description
            .attribute_definitions()
            .iter()
            .find(|d| d.attribute_name() == name)
            .map(|d| match d.attribute_type() {
                ScalarAttributeType::N => KeyType::N,
                ScalarAttributeType::B => KeyType::B,
                _ => KeyType::S,
            })
            .unwrap_or(KeyType::S)
    };
    let mut partition = None;
    let mut sort = None;
    for element in description.key_schema() {
        let name = element.attribute_name().to_string();
        let kind = type_of(&name);
        match element.key_type() {
            SdkKeyType::Hash => partition = Some((name, kind)),
            _ => sort = Some((name, kind)),
        }
    }
    let Some((name, kind)) = partition else {
        return Err(HostError::TableUnsupported {
            table: table.to_string(),
            reason: "DescribeTable returned no partition key".into(),
        });
    };
    let mut schema = KeySchema::partition(name, kind);
    if let Some((name, kind)) = sort {
        schema = schema.with_sort(name, kind);
    }
    // Every index's key attributes, once each (a sort key of any index
    // takes the sort key's smaller limit); the table's own keys are kept
    // and checked already.
    let is_anchors = |i: &aws_sdk_dynamodb::types::GlobalSecondaryIndexDescription| {
        i.index_name() == Some(ANCHORS_INDEX)
            && i.key_schema().first().map(|k| k.attribute_name()) == Some(ANCHOR_ATTRIBUTE)
    };
    // An index still being built (backfilled) lacks entries: scan instead.
    let index = description
        .global_secondary_indexes()
        .iter()
        .find(|i| is_anchors(i));
    let active = index
        .is_some_and(|i| i.index_status() == Some(&aws_sdk_dynamodb::types::IndexStatus::Active));
    let anchors = active.then(|| ANCHORS_INDEX.to_string());
    let anchors_building = index.is_some() && !active;
    let index_schemas = description
        .global_secondary_indexes()
        .iter()
        .filter(|i| !is_anchors(i))
        .map(|i| i.key_schema())
        .chain(
            description
                .local_secondary_indexes()
                .iter()
                .map(|i| i.key_schema()),
        );
    let mut index_keys: Vec<IndexKey> = Vec::new();
    for element in index_schemas.flatten() {
        let name = element.attribute_name();
        if schema.is_key(name) {
            continue;
        }
        let sort = element.key_type() != &SdkKeyType::Hash;
        match index_keys.iter_mut().find(|k| k.name == name) {
            Some(known) => known.sort |= sort,
            None => index_keys.push(IndexKey {
                name: name.to_string(),
                key_type: type_of(name),
                sort,
            }),
        }
    }
    Ok(Some(Described {
        key: schema,
        index_keys,
        anchors,
        anchors_building,
    }))
}

fn scalar(kind: KeyType) -> ScalarAttributeType {
    match kind {
        KeyType::S => ScalarAttributeType::S,
        KeyType::N => ScalarAttributeType::N,
        KeyType::B => ScalarAttributeType::B,
    }
}

/// Creates the tables a layout needs (on-demand billing) and waits until
/// they are active. The item-collection layout needs a string sort key.
pub async fn create_tables(client: &Client, config: &TableConfig) -> Result<(), HostError> {
    if config.layout == Layout::ItemCollection
        && !config
            .key
            .sort
            .as_ref()
            .is_some_and(|s| s.key_type == KeyType::S)
    {
        return Err(HostError::TableUnsupported {
            table: config.table.clone(),
            reason: "the item-collection layout needs a string sort key".into(),
        });
    }
    let anchors = config.anchors.as_deref();
    let (parent_anchors, chunk_anchors) = match config.layout {
        Layout::ItemCollection => (anchors, None),
        Layout::ChunkTable { .. } => (None, anchors),
    };
    create_table(client, &config.table, &config.key, parent_anchors).await?;
    if let Layout::ChunkTable { key_name } = &config.layout {
        create_table(
            client,
            &config.chunk_table,
            &KeySchema::partition(key_name.clone(), KeyType::S),
            chunk_anchors,
        )
        .await?;
    }
    if let Some(attribute) = &config.ttl {
        // The chunk table too: chunks carry their parent's TTL value.
        enable_ttl(client, &config.table, attribute).await?;
        if config.chunk_table != config.table {
            enable_ttl(client, &config.chunk_table, attribute).await?;
        }
    }
    Ok(())
}

/// Adds the anchors index to the table `config`'s chunks live in, when it
/// lacks one, and waits until the index is built (DynamoDB backfills it
/// from the items already stored; a run stopped while it was being built
/// waits for it again). True when it added it.
pub async fn add_anchors(client: &Client, config: &TableConfig) -> Result<bool, HostError> {
    if config.anchors.is_some() {
        return Ok(false);
    }
    let building = describe(client, &config.chunk_table)
        .await?
        .is_some_and(|d| d.anchors_building);
    if !building {
        create_anchors(client, config).await?;
    }
    // Backfilling a large table takes a while: an hour at most here.
    for _ in 0..36_000 {
        if describe(client, &config.chunk_table)
            .await?
            .is_some_and(|d| d.anchors.is_some())
        {
            return Ok(!building);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(HostError::TableUnsupported {
        table: config.chunk_table.clone(),
        reason: "its anchors index was not built within an hour; see DescribeTable".into(),
    })
}

/// The UpdateTable creating the anchors index of `config`'s chunk table.
async fn create_anchors(client: &Client, config: &TableConfig) -> Result<(), HostError> {
    let invalid = |e: aws_sdk_dynamodb::error::BuildError| HostError::Internal(e.to_string());
    let create = CreateGlobalSecondaryIndexAction::builder()
        .index_name(ANCHORS_INDEX)
        .key_schema(anchor_key().map_err(invalid)?)
        .projection(keys_only())
        .build()
        .map_err(invalid)?;
    let definition = anchor_definition().map_err(invalid)?;
    with_retries(|| {
        client
            .update_table()
            .table_name(&config.chunk_table)
            .attribute_definitions(definition.clone())
            .global_secondary_index_updates(
                GlobalSecondaryIndexUpdate::builder()
                    .create(create.clone())
                    .build(),
            )
            .send()
    })
    .await
    .map_err(|failed| admin_error("UpdateTable", failed))?;
    Ok(())
}

fn anchor_key() -> Result<KeySchemaElement, aws_sdk_dynamodb::error::BuildError> {
    KeySchemaElement::builder()
        .attribute_name(ANCHOR_ATTRIBUTE)
        .key_type(SdkKeyType::Hash)
        .build()
}

fn anchor_definition() -> Result<AttributeDefinition, aws_sdk_dynamodb::error::BuildError> {
    AttributeDefinition::builder()
        .attribute_name(ANCHOR_ATTRIBUTE)
        .attribute_type(ScalarAttributeType::B)
        .build()
}

fn keys_only() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::KeysOnly)
        .build()
}

/// Turns TTL on for `table`, deleting items once `attribute` (seconds
/// since the epoch) has passed.
async fn enable_ttl(client: &Client, table: &str, attribute: &str) -> Result<(), HostError> {
    let specification = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name(attribute)
        .build()
        .map_err(|e| HostError::Internal(e.to_string()))?;
    with_retries(|| {
        client
            .update_time_to_live()
            .table_name(table)
            .time_to_live_specification(specification.clone())
            .send()
    })
    .await
    .map_err(|failed| admin_error("UpdateTimeToLive", failed))?;
    Ok(())
}

/// Creates `table` keyed by `key`, with the anchors index `anchors` (keyed
/// by `_da`, keys only) when named.
async fn create_table(
    client: &Client,
    table: &str,
    key: &KeySchema,
    anchors: Option<&str>,
) -> Result<(), HostError> {
    let invalid = |e: aws_sdk_dynamodb::error::BuildError| HostError::Internal(e.to_string());
    let mut request = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest);
    if let Some(index) = anchors {
        request = request
            .attribute_definitions(anchor_definition().map_err(invalid)?)
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(index)
                    .key_schema(anchor_key().map_err(invalid)?)
                    .projection(keys_only())
                    .build()
                    .map_err(invalid)?,
            );
    }
    for (attribute, role) in key.attributes().zip([SdkKeyType::Hash, SdkKeyType::Range]) {
        request = request
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(&attribute.name)
                    .key_type(role)
                    .build()
                    .map_err(invalid)?,
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(&attribute.name)
                    .attribute_type(scalar(attribute.key_type))
                    .build()
                    .map_err(invalid)?,
            );
    }
    with_retries(|| request.clone().send())
        .await
        .map_err(|failed| admin_error("CreateTable", failed))?;
    for _ in 0..600 {
        let output = client.describe_table().table_name(table).send().await;
        let active = output
            .ok()
            .and_then(|o| o.table)
            .and_then(|t| t.table_status)
            .is_some_and(|s| s == aws_sdk_dynamodb::types::TableStatus::Active);
        if active {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(HostError::TableUnsupported {
        table: table.to_string(),
        reason: "did not become ACTIVE within 60 s".into(),
    })
}
