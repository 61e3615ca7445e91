//! `docs/ERRORS.md` is generated from the catalogue (`dynaslice_core::code`);
//! this test fails when the two differ. To regenerate after changing the
//! catalogue:
//!
//! ```sh
//! UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-core --test errors_doc
//! ```

use std::fmt::Write as _;
use std::path::Path;

use dynaslice_core::{Category, Code};

fn render() -> String {
    let mut doc = String::from(
        "# Error codes\n\n\
         <!-- Generated from core/src/code.rs by core/tests/errors_doc.rs: \
         edit the catalogue there, then run\n     \
         UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-core --test errors_doc -->\n\n\
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
        let status = category
            .http_status()
            .map_or_else(|| "none".to_string(), |s| s.to_string());
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
        "docs/ERRORS.md is not the catalogue's; run UPDATE_ERRORS_DOC=1 cargo test -p dynaslice-core --test errors_doc"
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
