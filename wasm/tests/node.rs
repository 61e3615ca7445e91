#![cfg(target_arch = "wasm32")]
//! The binding's tests in Node.
include!("shared.rs");
