//! Printing: progress bars, sizes people read, JSON for scripts, errors.

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use dynaslice_core::Code;
use dynaslice_core::manifest::Manifest;
use dynaslice_host::{HostError, Progress};

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub struct Bar(ProgressBar);

impl Bar {
    /// A bar labelled `what` (hidden for JSON output).
    pub fn new(what: &'static str, json: bool) -> Self {
        let bar = ProgressBar::with_draw_target(
            None,
            if json {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(style(BAR));
        bar.set_message(what);
        Self(bar)
    }

    /// Prints `text` on stderr above the bar.
    pub fn say(&self, text: &str) {
        self.0.suspend(|| eprintln!("{text}"));
    }

    /// Prints a line on standard output without garbling the bar.
    pub fn print(&self, text: &str) {
        self.0.suspend(|| println!("{text}"));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Bar {
    /// A bar of `total` things (an estimate; 0: unknown) labelled `what`.
    pub fn counting(what: &'static str, unit: &'static str, total: u64, json: bool) -> Self {
        let bar = Self::new(what, json);
        let template =
            format!("{{msg:>9}} [{{bar:30}}] {{pos}}/~{{len}} {unit} {{per_sec}} {{eta}}");
        match total {
            0 => bar
                .0
                .set_style(style(&format!("{{msg:>9}} {{pos}} {unit} {{per_sec}}"))),
            n => {
                bar.0.set_length(n);
                bar.0.set_style(style(&template));
            }
        }
        bar
    }

    /// Sets the count done.
    pub fn set(&self, done: u64) {
        if self.0.length().is_some_and(|len| done > len) {
            self.0.set_length(done);
        }
        self.0.set_position(done);
    }
}

/// Writes `text` to `path` whole or not at all (beside it, then renamed):
/// a checkpoint a crash cannot leave half written.
pub fn save(path: &std::path::Path, text: &str) -> Result<(), HostError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, text).map_err(|e| HostError::io(path.display(), e))?;
    std::fs::rename(&partial, path).map_err(|e| HostError::io(path.display(), e))
}

/// The bar of a known total.
const BAR: &str = "{msg:>9} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}";

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        // 0: not known yet (a stream read to its end).
        if total == 0 {
            self.0.unset_length();
            self.0.set_style(style("{msg:>9} {bytes} {bytes_per_sec}"));
        } else {
            self.0.set_length(total);
            self.0.set_style(style(BAR));
        }
        self.0.set_position(0);
    }
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
}

/// `12.3 MiB` for people.
pub fn size(bytes: u64) -> String {
    HumanBytes(bytes).to_string()
}

/// A manifest in one line for people.
pub fn manifest_text(manifest: &Manifest) -> String {
    let chunks = manifest.total_chunks();
    let mut place = if manifest.inline.is_some() {
        "inline on the parent".to_string()
    } else if let Some(object) = &manifest.object {
        format!("in S3 at {}", object.describe())
    } else {
        format!("{} chunk{}", chunks, if chunks == 1 { "" } else { "s" })
    };
    if !manifest.groups.is_empty() {
        let groups = manifest.groups.len() + 1;
        place = format!("{place} in {groups} groups");
    }
    format!(
        "{} raw, {} stored ({}, {}), version {}",
        size(manifest.total_raw_len()),
        size(manifest.total_stored_len()),
        manifest.codec.name(),
        place,
        manifest.version.to_text()
    )
}

/// Prints an error: one line on stderr, or a JSON document on stdout (on
/// stderr when stdout carries a payload). `limit_flag` is the command's
/// flag that raises the size limit, if it has one: an error naming that
/// limit says how to raise it.
pub fn print_error(error: &HostError, json: bool, limit_flag: Option<&str>, stdout_taken: bool) {
    let mut message = error.to_string();
    if let Some(flag) = limit_flag.filter(|_| names_size_limit(error.code())) {
        message.push_str(&format!(" (raise the limit with {flag} <bytes>)"));
    }
    if json {
        let document = json!({ "error": { "code": error.code().as_str(), "message": message } });
        print_json_to(&document, stdout_taken);
    } else {
        eprintln!("dynaslice: {message} [{}]", error.code());
    }
}

/// The codes of errors that name the caller's size limit (`--max-size`),
/// as opposed to DynamoDB's own limits, which no flag raises.
fn names_size_limit(code: Code) -> bool {
    matches!(code, Code::DecompressLimit | Code::VirtualItemTooLarge)
}

/// Prints `value` as JSON (for --output json).
pub fn print_json(value: &serde_json::Value) {
    println!("{value}");
}

/// Prints `value` as JSON, on stderr when stdout carries a payload.
pub fn print_json_to(value: &serde_json::Value, stderr: bool) {
    if stderr {
        eprintln!("{value}");
    } else {
        println!("{value}");
    }
}
