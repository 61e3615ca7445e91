#![cfg(target_arch = "wasm32")]
//! The binding's tests in headless Chromium.
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
include!("shared.rs");
