//! `ChunkReader`: core's streaming read of one stored attribute (a file) as
//! a JavaScript class, for a driver that fetches the chunks a few at a time
//! and hands each over as it arrives.

use dynaslice_core::Code;
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::convert::{self, TableOptions};
use crate::error::Failure;

/// Reads one string or binary attribute of a stored item from its parent
/// and its chunks, pushed in order; gives its bytes as they are decoded.
#[wasm_bindgen]
pub struct ChunkReader {
    inner: Option<dynaslice_core::ChunkReader>,
    chunk_table: String,
}

#[wasm_bindgen]
impl ChunkReader {
    /// `parent` (a value stream) is the parent as read; `options` adds the
    /// table and `attribute`, the name of the attribute to read.
    #[wasm_bindgen(constructor)]
    pub fn new(parent: &[u8], options: JsValue) -> Result<ChunkReader, JsValue> {
        let table = TableOptions::from_js(&options)?;
        let parent = convert::stream::item(parent)?;
        let attribute = convert::attribute(&options, "the attribute to read")?;
        let inner = dynaslice_core::ChunkReader::new(&parent, &attribute, &table.reassemble())
            .map_err(crate::error::read_failure)?;
        Ok(ChunkReader {
            inner: Some(inner),
            chunk_table: table.chunk_table,
        })
    }

    /// How many chunks to push (0: the bytes come from `read()` alone).
    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> Result<u32, JsValue> {
        Ok(self.live()?.chunk_count())
    }

    /// The table the chunks are read from.
    #[wasm_bindgen(getter, js_name = chunkTable)]
    pub fn chunk_table(&self) -> String {
        self.chunk_table.clone()
    }

    /// The attribute's length in bytes, once known.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> Result<Option<f64>, JsValue> {
        Ok(self.live()?.size().map(|s| s as f64))
    }

    /// The keys (DynamoDB JSON) of chunks `start` up to `end`, not included
    /// (`end` past the count stops at the count).
    #[wasm_bindgen(js_name = chunkKeys)]
    pub fn chunk_keys(&self, start: u32, end: u32) -> Result<Array, JsValue> {
        let reader = self.live()?;
        (start..end.min(reader.chunk_count()))
            .map(|seq| {
                let key = reader.chunk_key(seq).map_err(Failure::from)?;
                Ok(convert::dynamodb_item(&key))
            })
            .collect()
    }

    /// Takes the next chunk item (a value stream), checked whole before any
    /// of its bytes are given; returns the first of them (`read()` the rest).
    pub fn push(&mut self, chunk: &[u8]) -> Result<Uint8Array, JsValue> {
        let chunk = convert::stream::item(chunk)?;
        self.live_mut()?
            .push(&chunk)
            .map_err(crate::error::read_failure)?;
        self.read()
    }

    /// The attribute's next bytes; empty when the next chunk is needed, or
    /// at the end.
    pub fn read(&mut self) -> Result<Uint8Array, JsValue> {
        let piece = self.live_mut()?.read().map_err(Failure::from)?;
        Ok(Uint8Array::from(piece))
    }

    /// Ends the read: checks every chunk came, the whole payload's digest
    /// and the value stream's end.
    pub fn finish(&mut self) -> Result<(), JsValue> {
        let inner = self.inner.take().ok_or_else(finished)?;
        Ok(inner.finish().map_err(Failure::from)?)
    }

    fn live(&self) -> Result<&dynaslice_core::ChunkReader, JsValue> {
        self.inner.as_ref().ok_or_else(finished)
    }

    fn live_mut(&mut self) -> Result<&mut dynaslice_core::ChunkReader, JsValue> {
        self.inner.as_mut().ok_or_else(finished)
    }
}

fn finished() -> JsValue {
    Failure::new(Code::ReaderFinished, "this reader has already finished").into()
}
