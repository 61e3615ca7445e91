//! `capacity`, what `--rate-limit 25%` is a share of, against the embedded
//! store and DynamoDB Local: a table's provisioned units, the smaller of
//! the items table's and the chunk table's; a missing table is an error.

mod common;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ProvisionedThroughput,
    ScalarAttributeType,
};
use dynaslice_host::{Capacity, LayoutKind, TableConfig};

async fn provisioned(client: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
    client
        .create_table()
        .table_name(name)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(read)
                .write_capacity_units(write)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("a provisioned table");
}

#[tokio::test]
async fn capacity_is_the_smaller_of_both_tables_provisioned_units() {
    let client = common::client();
    let name = common::table_name("capacity");
    let table = TableConfig::new(
        &name,
        common::schema(LayoutKind::ChunkTable),
        LayoutKind::ChunkTable,
    );
    provisioned(&client, &table.table, 40, 20).await;
    provisioned(&client, &table.chunk_table, 30, 50).await;
    let capacity = dynaslice_host::capacity(&client, &table).await.unwrap();
    assert_eq!(
        capacity,
        Capacity {
            read: Some(30),
            write: Some(20)
        }
    );

    // One table of an item collection: its own.
    let single = common::table_name("capacity");
    provisioned(&client, &single, 7, 9).await;
    let collection = TableConfig {
        chunk_table: single.clone(),
        ..TableConfig::new(
            &single,
            common::schema(LayoutKind::ChunkTable),
            LayoutKind::ChunkTable,
        )
    };
    let capacity = dynaslice_host::capacity(&client, &collection)
        .await
        .unwrap();
    assert_eq!((capacity.read, capacity.write), (Some(7), Some(9)));

    // A table that is not there.
    let missing = TableConfig::new(
        "nope-capacity",
        common::schema(LayoutKind::ChunkTable),
        LayoutKind::ChunkTable,
    );
    let error = dynaslice_host::capacity(&client, &missing)
        .await
        .unwrap_err();
    assert_eq!(error.code(), dynaslice_core::Code::TableNotFound);
}
