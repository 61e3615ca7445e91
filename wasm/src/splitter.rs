//! `Splitter`: the streaming splitter as a JavaScript class, for payloads
//! too large to hold (a `Blob`, a `ReadableStream`, a Node stream).

use dynaslice_core::Code;
use dynaslice_core::codec::Compression;
use dynaslice_core::plan::Expect;
use dynaslice_core::{StreamSplit, item_size, plan, write_units};
use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::convert::{self, TableOptions, set};
use crate::error::Failure;

/// Splits an item whose one large binary attribute arrives in pieces.
/// `push` returns each chunk item as soon as it is complete; `finish`
/// returns the parent and the requests that commit it.
#[wasm_bindgen]
pub struct Splitter {
    inner: Option<StreamSplit>,
    table: TableOptions,
    expect: Expect,
    commit: plan::Commit,
    /// Write capacity of the chunks returned so far.
    write_units: u64,
}

#[wasm_bindgen]
impl Splitter {
    /// `item` (a value stream) holds the key and small attributes, `stored`
    /// is the stream of the parent `options.expect` holds; `options` adds the table,
    /// `attribute` (the binary attribute's name), `size` (its exact length,
    /// or none when it is learned at the end),
    /// and optionally `codec` (`none`, `deflate`, `zlib`, `gzip`), `level`,
    /// `chunkItemBytes`, `maxRawBytes`, `version`, `expect` and `commit`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        item: &[u8],
        stored: Option<Box<[u8]>>,
        options: JsValue,
    ) -> Result<Splitter, JsValue> {
        let table = TableOptions::from_js(&options)?;
        let parent = convert::stream::item(item)?;
        let mut split_options = convert::split_options(&table, &options)?;
        // A stream is never held whole: no limit unless one is given.
        if convert::get(&options, "maxRawBytes").is_undefined() {
            split_options.max_raw_bytes = usize::MAX;
        }
        let attribute = convert::attribute(&options, "the streamed binary attribute")?;
        let size = convert::stream_size(&options)?;
        let compression = if convert::get(&options, "codec").is_undefined() {
            Compression::NONE
        } else {
            convert::compression(&options)?
        };
        let expect = crate::expectation(&options, stored.as_deref(), &table)?;
        let commit = convert::commit(&options)?;
        let inner = StreamSplit::new(parent, attribute, size, compression, &split_options)
            .map_err(crate::error::write_failure)?;
        Ok(Splitter {
            inner: Some(inner),
            table,
            expect,
            commit,
            write_units: 0,
        })
    }

    /// Payload bytes received so far.
    #[wasm_bindgen(getter)]
    pub fn received(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |s| s.received() as f64)
    }

    /// Takes the next bytes; returns the chunk items they completed
    /// (DynamoDB JSON), ready to write.
    pub fn push(&mut self, bytes: JsValue) -> Result<Array, JsValue> {
        let bytes = convert::js::bytes(&bytes, "push's input")?;
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        let chunks = inner.push(&bytes).map_err(crate::error::write_failure)?;
        self.write_units += chunks
            .iter()
            .map(|c| write_units(item_size(c), false))
            .sum::<u64>();
        Ok(chunks.iter().map(convert::dynamodb_item).collect())
    }

    /// Ends the payload: `{ parent, chunks, manifest, requests, writeUnits }`,
    /// where `chunks` are the last ones and `requests` holds the `commit`,
    /// the `abort` and the `cleanup`, as `split` returns them.
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let inner = self.inner.take().ok_or_else(finished)?;
        let split = inner.finish().map_err(crate::error::write_failure)?;
        let target = self.table.target().keys_only();
        let plan = plan::plan_streamed_commit_as(&split, &target, &self.expect, self.commit)
            .map_err(Failure::from)?;
        let result = convert::split_result(&split, &plan);
        let last: u64 = split
            .chunks
            .iter()
            .map(|c| write_units(item_size(c), false))
            .sum();
        let total = self.write_units + last + plan.write_units();
        set(result.unchecked_ref(), "writeUnits", &(total as f64).into());
        Ok(result)
    }
}

fn finished() -> JsValue {
    Failure::new(Code::SplitterFinished, "this splitter has already finished").into()
}
