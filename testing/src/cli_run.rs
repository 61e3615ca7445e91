//! Running the `dynaslice` binary in a test: its exit code and output,
//! never a panic or a backtrace, and the two outcomes the tests expect (a
//! success, or one clear line naming an error code). Each test file builds
//! its own `Command` (which server, which environment).

#![allow(dead_code)] // each test file uses its own part of this module

use std::process::{Command, Output};

use serde_json::Value;

/// What a run of the binary gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command`; whatever happened, never a panic or a backtrace.
pub fn run(mut command: Command) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("the binary runs");
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(stderr).expect("utf-8 stderr"),
    };
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("backtrace"),
        "{}",
        run.stderr
    );
    run
}

/// Runs `command` as [`run`] does, and reads its peak resident set
/// (`VmHWM`, Linux) every few milliseconds until it exits: the last
/// reading, in bytes (0 where it cannot be read). The peak only grows, so
/// the reading misses at most what the last milliseconds added.
pub fn run_measured(mut command: Command) -> (Run, u64) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).expect("reads the pipe");
            String::from_utf8(bytes).expect("utf-8 output")
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|status| crate::memory::field_kb(&status, "VmHWM"))
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(3));
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    };
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("backtrace"),
        "{}",
        run.stderr
    );
    (run, peak)
}

/// Runs `command` (given `args`), which must succeed.
pub fn ok(command: Command, args: &[&str]) -> Run {
    let run = run(command);
    assert_eq!(run.code, 0, "dynaslice {args:?} failed: {}", run.stderr);
    run
}

/// Runs `command` (given `args`), which must fail with exactly one line on
/// stderr naming `code`.
pub fn fails(command: Command, args: &[&str], code: &str) -> Run {
    let run = run(command);
    assert_ne!(run.code, 0, "dynaslice {args:?} succeeded");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {:?}", run.stderr);
    assert!(
        run.stderr.contains(&format!("[{code}]")),
        "expected {code}: {}",
        run.stderr
    );
    run
}

/// The run's stdout as JSON.
pub fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout))
}
