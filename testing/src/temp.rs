//! Test folders under the system's temporary folder, named after the
//! process that made them. A folder a test keeps in a `static` (a server
//! started once per test binary) is never dropped, so each run sweeps away
//! those of processes that are gone.

use std::path::Path;

/// Removes the folders in the temporary folder named `prefix` then text
/// from which `pid_of` reads the pid of the process that made them, when
/// that process no longer runs.
pub fn sweep(prefix: &str, pid_of: fn(&str) -> Option<u32>) {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(pid_of)
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
