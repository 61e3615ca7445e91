//! `docs/ERRORS.md` is generated from the catalogue (core's `Code`) and the
//! HTTP status the host's server answers each category with
//! (`serve::status_of`); this test fails when the doc differs. To
//! regenerate after changing either:
//!
//! ```sh
//! UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-host --test errors_doc
//! ```

use std::fmt::Write as _;
use std::path::Path;

use dynaslice_core::{Category, Code};
use dynaslice_host::serve::status_of;

fn render() -> String {
    let mut doc = String::from(
        "# Error codes\n\n\
         <!-- Generated from core/src/code.rs and host/src/serve/status.rs by \
         host/tests/errors_doc.rs: edit them there, then run\n     \
         UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-host --test errors_doc -->\n\n\
         Every error dynaslice reports carries one of these codes: `code()` in Rust \
         (a `dynaslice_core::Code`), `error.code` in JavaScript, `\"code\"` in the JSON \
         of the CLI and of the host's server, and `[CODE]` at the end of a CLI message. \
         Codes are stable; messages are for people and may change.\n\n\
         ## Categories\n\n\
         A code's category says who can fix it and which HTTP status the host's \
         server answers with. One exception: an upload to the server (`POST /api/upload`) \
         that fails the checks of stored data is the uploader's fault and answers 400 \
         (413 for a size limit).\n\n\
         | category | HTTP status | meaning |\n|---|---|---|\n",
    );
    for category in Category::ALL {
        let status =
            status_of(*category).map_or_else(|| "none".to_string(), |s| s.as_u16().to_string());
        writeln!(
            doc,
            "| {} | {status} | {} |",
            category.name(),
            category.meaning()
        )
        .unwrap();
    }
    for category in Category::ALL {
        write!(
            doc,
            "\n## {}\n\n| code | meaning |\n|---|---|\n",
            category.name()
        )
        .unwrap();
        for code in Code::ALL.iter().filter(|c| c.category() == *category) {
            writeln!(doc, "| `{code}` | {} |", code.meaning()).unwrap();
        }
    }
    doc
}

#[test]
fn errors_doc_is_generated_from_the_catalogue() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ERRORS.md");
    let want = render();
    if std::env::var_os("UPDATE_ERRORS_DOC").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/ERRORS.md is not the catalogue's; run UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-host --test errors_doc"
    );
}

#[test]
fn every_category_has_a_code() {
    for category in Category::ALL {
        assert!(
            Code::ALL.iter().any(|c| c.category() == *category),
            "{}",
            category.name()
        );
    }
}
