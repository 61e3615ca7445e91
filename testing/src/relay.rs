//! The plumbing of the host tests' loopback DynamoDB proxies
//! (`fault_proxy.rs`, `capacity_model.rs`): reading and writing HTTP/1.1
//! messages as the AWS SDK frames them, serving a client connection one
//! request at a time, relaying a request to the upstream server, answering
//! in DynamoDB's error shape, and splitting a batch into a
//! part to forward and a part to hand back as `UnprocessedItems` /
//! `UnprocessedKeys`.
//!
//! The SDK talks plain HTTP/1.1 to an `http://127.0.0.1:<port>` endpoint:
//! `POST /`, `X-Amz-Target: DynamoDB_20120810.<Operation>`, a JSON body with
//! `Content-Length`. A proxy built on this module keeps each client
//! connection alive across requests and gives it its own upstream connection
//! ([`Upstream`]), so requests on one connection reach the upstream in order
//! and concurrent connections are independent. Not supported, because the SDK
//! does not use them with DynamoDB: `Expect: 100-continue`, pipelining,
//! upgrades.
//!
//! Rewriting a body invalidates the request's SigV4 signature (it signs the
//! payload's hash); that works because neither dynoxide nor DynamoDB Local
//! checks signatures (`support_selftest.rs` proves it for both). A proxy in
//! front of real AWS could not do this.

#![allow(dead_code)] // each proxy uses its own part of this module

use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// DynamoDB accepts request bodies up to 16 MB and BatchGetItem answers up to
/// 16 MB; S3 bodies are as large as an object, and the benchmark of objects
/// sends 200 MiB in one PutObject the peers' way. This leaves room for that
/// while still refusing a runaway message.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// Far more than any SDK request's header block.
pub const MAX_HEAD: usize = 64 * 1024;

/// Binds 127.0.0.1 on a free port and runs `serve` on a task of its own for
/// every connection accepted, until the returned task is aborted. Must run
/// inside a Tokio runtime.
pub async fn listen<F, Fut>(serve: F) -> (SocketAddr, JoinHandle<()>)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("proxy: bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("proxy: local address");
    let accept = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((client, _)) => {
                    let _ = client.set_nodelay(true);
                    tokio::spawn(serve(client));
                }
                // Out of file descriptors and the like: try again shortly
                // rather than end the proxy under a running test.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            }
        }
    });
    (addr, accept)
}

/// What goes back to one request, once worked out: the raw answer, or
/// `None` to close the connection without one. Boxed so that a proxy's
/// answer can borrow the request and the upstream and still be `Send`.
pub type Answer<'a> = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'a>>;

/// Serves one client connection, one request at a time, until either side
/// closes it: `answer` gives what goes back to each request, asking the
/// upstream through the connection's own [`Upstream`] as it needs.
pub async fn serve_requests(
    client: TcpStream,
    upstream: SocketAddr,
    mut answer: impl for<'a> FnMut(&'a Message, &'a mut Upstream) -> Answer<'a>,
) {
    let mut client = Conn::new(client);
    let mut upstream = Upstream::new(upstream);
    loop {
        let request = match client.read_message(Framing::Request).await {
            Ok(Some(request)) => request,
            // The client closed (or sent garbage): nothing to answer.
            Ok(None) | Err(_) => return,
        };
        let Some(answer) = answer(&request, &mut upstream).await else {
            return;
        };
        if !send_answer(&mut client, &request, &answer).await {
            return;
        }
    }
}

/// Writes `answer` to the client; `false` when the connection is finished:
/// the write failed, or the request or answer promised a close (a relayed
/// `Connection: close`, a 502), which is then kept.
pub async fn send_answer(client: &mut Conn, request: &Message, answer: &[u8]) -> bool {
    if client.stream.write_all(answer).await.is_err() {
        return false;
    }
    if request.wants_close() || closes_connection(answer) {
        let _ = client.stream.shutdown().await;
        return false;
    }
    true
}

/// Which batch operation a [`Partial`] splits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BatchOp {
    /// BatchWriteItem: `RequestItems.<table>` is a list of write requests.
    Write,
    /// BatchGetItem: `RequestItems.<table>.Keys` is a list of keys.
    Get,
}

impl BatchOp {
    /// The response field that lists what was not done.
    pub fn unprocessed_field(self) -> &'static str {
        match self {
            BatchOp::Write => "UnprocessedItems",
            BatchOp::Get => "UnprocessedKeys",
        }
    }
}

/// A batch split in two: the body to forward and what is held back, already in
/// the shape of the response's `UnprocessedItems` / `UnprocessedKeys`.
pub struct Partial {
    /// Which batch operation was split.
    pub op: BatchOp,
    /// The request body with the kept requests only.
    pub forwarded_body: Vec<u8>,
    /// The held-back requests, by table.
    pub held_back: Map<String, Value>,
}

/// Every request of a batch body as (table, index within that table's list):
/// the write requests of a BatchWriteItem, the keys of a BatchGetItem.
pub fn batch_entries(op: BatchOp, body: &Value) -> Vec<(String, usize)> {
    let Some(items) = body.get("RequestItems").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut entries = Vec::new();
    for (table, value) in items {
        let list = match op {
            BatchOp::Write => value.as_array(),
            BatchOp::Get => value.get("Keys").and_then(Value::as_array),
        };
        let count = list.map_or(0, Vec::len);
        entries.extend((0..count).map(|i| (table.clone(), i)));
    }
    entries
}

/// Splits a batch into the requests `keep` lists, to forward, and the rest,
/// to hold back. Tables left with nothing are omitted from either side, as
/// DynamoDB rejects empty request lists and never reports empty ones.
pub fn split_batch(op: BatchOp, mut body: Value, keep: &HashSet<(String, usize)>) -> Partial {
    let items = body
        .get_mut("RequestItems")
        .and_then(Value::as_object_mut)
        .expect("a batch body has RequestItems");
    let mut forwarded = Map::new();
    let mut held_back = Map::new();
    for (table, value) in std::mem::take(items) {
        // Each side gets the table's request with its own part of the list;
        // for BatchGetItem that copies ConsistentRead, ProjectionExpression and
        // ExpressionAttributeNames to both, as DynamoDB's UnprocessedKeys does.
        let list = match op {
            BatchOp::Write => value.as_array(),
            BatchOp::Get => value.get("Keys").and_then(Value::as_array),
        }
        .cloned()
        .unwrap_or_default();
        let (mut kept, mut held) = (Vec::new(), Vec::new());
        for (i, entry) in list.into_iter().enumerate() {
            if keep.contains(&(table.clone(), i)) {
                kept.push(entry);
            } else {
                held.push(entry);
            }
        }
        let with_list = |list: Vec<Value>| match op {
            BatchOp::Write => Value::Array(list),
            BatchOp::Get => {
                let mut request = value.clone();
                request["Keys"] = Value::Array(list);
                request
            }
        };
        if !kept.is_empty() {
            forwarded.insert(table.clone(), with_list(kept));
        }
        if !held.is_empty() {
            held_back.insert(table, with_list(held));
        }
    }
    *items = forwarded;
    Partial {
        op,
        forwarded_body: serde_json::to_vec(&body).expect("JSON serialises"),
        held_back,
    }
}

/// Adds the held-back requests to the upstream's answer to the forwarded part.
/// `Ok(None)` if the upstream refused it (not a 200), so the client gets that
/// answer as it is.
pub fn merge_unprocessed(partial: &Partial, response: &Message) -> Result<Option<Vec<u8>>, String> {
    if response.status() != Some(200) {
        return Ok(None);
    }
    let mut answer: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("upstream's batch answer is not JSON: {e}"))?;
    let object = answer
        .as_object_mut()
        .ok_or("upstream's batch answer is not a JSON object")?;
    let unprocessed = object
        .entry(partial.op.unprocessed_field())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("upstream's unprocessed field is not an object")?;
    for (table, held) in &partial.held_back {
        match (partial.op, unprocessed.get_mut(table)) {
            (BatchOp::Write, Some(Value::Array(existing))) => {
                existing.extend(held.as_array().into_iter().flatten().cloned());
            }
            (BatchOp::Get, Some(existing)) => match existing.get_mut("Keys") {
                Some(Value::Array(keys)) => {
                    keys.extend(held["Keys"].as_array().into_iter().flatten().cloned());
                }
                _ => return Err(format!("upstream's UnprocessedKeys.{table} has no Keys")),
            },
            (BatchOp::Write, Some(_)) => {
                return Err(format!("upstream's UnprocessedItems.{table} is not a list"));
            }
            (_, None) => {
                unprocessed.insert(table.clone(), held.clone());
            }
        }
    }
    let body = serde_json::to_vec(&answer).expect("JSON serialises");
    Ok(Some(response.rebuild(&body)))
}

/// The upstream server as one client connection sees it: its address and
/// the connection opened for that client on its first forwarded request,
/// kept alive with the client's.
pub struct Upstream {
    addr: SocketAddr,
    conn: Option<Conn>,
}

impl Upstream {
    /// Not connected until the first [`Upstream::exchange`].
    pub fn new(addr: SocketAddr) -> Self {
        Upstream { addr, conn: None }
    }

    /// Sends `request` (raw bytes) upstream, opening the connection if
    /// needed, and reads the answer.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        head_request: bool,
    ) -> Result<Message, String> {
        for attempt in 0..2 {
            let reused = self.conn.is_some();
            if self.conn.is_none() {
                let stream = TcpStream::connect(self.addr)
                    .await
                    .map_err(|e| format!("cannot connect to upstream {}: {e}", self.addr))?;
                let _ = stream.set_nodelay(true);
                self.conn = Some(Conn::new(stream));
            }
            let conn = self.conn.as_mut().expect("connected above");
            // A kept-alive connection the upstream closed while it was idle fails
            // on the write, or ends before a single byte of answer: the request was
            // never read, so it is safe to send it once more on a new connection.
            let retry = reused && attempt == 0;
            if let Err(error) = conn.stream.write_all(request).await {
                self.conn = None;
                if retry {
                    continue;
                }
                return Err(format!("cannot send to upstream: {error}"));
            }
            match conn.read_message(Framing::Response { head_request }).await {
                Ok(Some(response)) => {
                    if response.wants_close() || response.read_to_eof {
                        self.conn = None;
                    }
                    return Ok(response);
                }
                Ok(None) if retry => self.conn = None,
                Ok(None) => {
                    self.conn = None;
                    return Err("upstream closed the connection without an answer".into());
                }
                Err(error) => {
                    self.conn = None;
                    return Err(format!("upstream's answer is unreadable: {error}"));
                }
            }
        }
        unreachable!("the second attempt always returns")
    }
}

/// A 502 for a request a proxy (`who`) could not get answered.
pub fn bad_gateway(who: &str, error: &str) -> Vec<u8> {
    let body = format!("{who}: {error}\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// An answer in DynamoDB's error shape: a JSON body naming the error type,
/// with the headers the SDK reads (`x-amzn-RequestId`, `x-amz-crc32`).
pub fn error_answer(status: u16, error_type: &str, message: &str) -> Vec<u8> {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let reason = match status {
        400 => "Bad Request",
        500 => "Internal Server Error",
        _ => "Error",
    };
    let body = json!({
        "__type": format!("com.amazonaws.dynamodb.v20120810#{error_type}"),
        "message": message,
    })
    .to_string();
    format!(
        "HTTP/1.1 {status} {reason}\r\n\
         Content-Type: application/x-amz-json-1.0\r\n\
         x-amzn-RequestId: loopback-proxy-{}\r\n\
         x-amz-crc32: {}\r\n\
         Content-Length: {}\r\n\
         \r\n\
         {body}",
        NEXT_ID.fetch_add(1, Ordering::Relaxed),
        crc32(body.as_bytes()),
        body.len()
    )
    .into_bytes()
}

/// An answer in S3's error shape: an XML `Error` with its `Code` and `Message`.
pub fn s3_error_answer(status: u16, code: &str, message: &str) -> Vec<u8> {
    let reason = match status {
        500 => "Internal Server Error",
        503 => "Slow Down",
        _ => "Error",
    };
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <Error><Code>{code}</Code><Message>{message}</Message>\
         <RequestId>loopback-proxy</RequestId></Error>"
    );
    format!(
        "HTTP/1.1 {status} {reason}\r\n\
         Content-Type: application/xml\r\n\
         Content-Length: {}\r\n\
         \r\n\
         {body}",
        body.len()
    )
    .into_bytes()
}

/// Whether a raw answer's head says `Connection: close`.
pub fn closes_connection(answer: &[u8]) -> bool {
    let head_end = find(answer, b"\r\n\r\n", 0).unwrap_or(answer.len());
    String::from_utf8_lossy(&answer[..head_end])
        .split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .any(|(name, value)| {
            name.trim().eq_ignore_ascii_case("connection") && has_token(value, "close")
        })
}

/// Whether a comma-separated header value lists `token` (case-insensitive).
pub fn has_token(value: &str, token: &str) -> bool {
    value
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// The CRC-32 (IEEE) DynamoDB sends in `x-amz-crc32`, as a decimal number, over
/// the body. Kept right on every answer we build or rewrite, since some SDKs
/// check it.
pub fn crc32(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut bit = 0;
            while bit < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                bit += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &byte in data {
        crc = TABLE[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// The position of `needle` in `haystack` at or after `from`.
pub fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|i| i + from)
}

/// One HTTP/1.1 message as read from a connection.
pub struct Message {
    /// The request line or status line, without its CRLF.
    pub start: String,
    /// The header fields in order, names and values trimmed.
    pub headers: Vec<(String, String)>,
    /// Exactly the bytes read: head and body, with the body's framing.
    pub raw: Vec<u8>,
    /// The body with any chunked framing removed.
    pub body: Vec<u8>,
    /// The body ran to the end of the stream (no length, not chunked), so the
    /// connection is finished.
    pub read_to_eof: bool,
}

impl Message {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A request's method.
    pub fn method(&self) -> &str {
        self.start.split(' ').next().unwrap_or("")
    }

    /// A response's status code.
    pub fn status(&self) -> Option<u16> {
        self.start.split(' ').nth(1)?.parse().ok()
    }

    /// The DynamoDB operation a request names in `X-Amz-Target`.
    pub fn operation(&self) -> Option<&str> {
        self.header("x-amz-target")?.rsplit('.').next()
    }

    /// Whether the sender will close the connection after this message:
    /// `Connection: close`, or HTTP/1.0 without `Connection: keep-alive`.
    pub fn wants_close(&self) -> bool {
        let connection = self.header("connection").unwrap_or("");
        let http10 = self.start.starts_with("HTTP/1.0") || self.start.ends_with("HTTP/1.0");
        has_token(connection, "close") || (http10 && !has_token(connection, "keep-alive"))
    }

    /// The same message with another body: framed by `Content-Length` (never
    /// chunked), with `x-amz-crc32` recomputed if it had one. Every other
    /// header, the signature included, stays as it was.
    pub fn rebuild(&self, body: &[u8]) -> Vec<u8> {
        self.rebuild_with(None, body)
    }

    /// A request of the same client for another operation: [`Message::rebuild`]
    /// with `X-Amz-Target` naming `operation`. For a proxy's own requests
    /// (a DescribeTable, a read of an item's new size), which then carry the
    /// client's credentials and headers as a request of its own would.
    pub fn rebuild_for(&self, operation: &str, body: &[u8]) -> Vec<u8> {
        self.rebuild_with(Some(operation), body)
    }

    fn rebuild_with(&self, operation: Option<&str>, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len() + 1024);
        out.extend_from_slice(self.start.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            let value = if name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
            {
                continue;
            } else if name.eq_ignore_ascii_case("x-amz-crc32") {
                crc32(body).to_string()
            } else if let (Some(operation), true) =
                (operation, name.eq_ignore_ascii_case("x-amz-target"))
            {
                format!("DynamoDB_20120810.{operation}")
            } else {
                value.clone()
            };
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(body);
        out
    }
}

/// How a message's body is delimited depends on whether it is a request or a
/// response (and for a response, on the request's method).
#[derive(Clone, Copy)]
pub enum Framing {
    /// A request: a body only with `Content-Length` or chunked.
    Request,
    /// A response to a request with the given method (`HEAD` has no body).
    Response {
        /// The request was a `HEAD`.
        head_request: bool,
    },
}

/// A TCP stream with the bytes read from it but not yet consumed.
pub struct Conn {
    /// The connection.
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// A connection with nothing read yet.
    pub fn new(stream: TcpStream) -> Self {
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Reads more bytes into the buffer; `false` at the end of the stream.
    async fn fill(&mut self) -> io::Result<bool> {
        self.buf.reserve(64 * 1024);
        Ok(self.stream.read_buf(&mut self.buf).await? > 0)
    }

    /// Fills the buffer to at least `len` bytes; the stream ending first is an error.
    async fn fill_to(&mut self, len: usize) -> io::Result<()> {
        if len > self.buf.len() {
            self.buf.reserve(len - self.buf.len());
        }
        while self.buf.len() < len {
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }

    /// The position of the next CRLF at or after `from`, reading as needed.
    async fn line_end(&mut self, from: usize) -> io::Result<usize> {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n", from) {
                return Ok(end);
            }
            if self.buf.len() - from > MAX_HEAD {
                return Err(invalid("line too long"));
            }
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// Reads one whole message. `Ok(None)` if the stream ends cleanly before
    /// its first byte (the peer closed an idle connection).
    pub async fn read_message(&mut self, framing: Framing) -> io::Result<Option<Message>> {
        // The head ends at the first empty line.
        let mut searched = 0;
        let head_end = loop {
            if let Some(at) = find(&self.buf, b"\r\n\r\n", searched) {
                break at + 4;
            }
            searched = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("header block too long"));
            }
            if !self.fill().await? {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        };
        let head = std::str::from_utf8(&self.buf[..head_end - 4])
            .map_err(|_| invalid("header block is not UTF-8"))?;
        let mut lines = head.split("\r\n");
        let start = lines.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        for line in lines {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| invalid("header line without a colon"))?;
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let mut message = Message {
            start,
            headers,
            raw: Vec::new(),
            body: Vec::new(),
            read_to_eof: false,
        };

        let chunked = message
            .header("transfer-encoding")
            .is_some_and(|te| has_token(te, "chunked"));
        let length = match message.header("content-length") {
            Some(value) => Some(
                value
                    .parse::<usize>()
                    .map_err(|_| invalid("bad Content-Length"))?,
            ),
            None => None,
        };
        let no_body = match framing {
            Framing::Request => !chunked && length.is_none(),
            // RFC 9112 section 6.3: these answers never have a body.
            Framing::Response { head_request } => {
                head_request || matches!(message.status(), Some(100..=199 | 204 | 304))
            }
        };

        let mut pos = head_end;
        if no_body {
        } else if chunked {
            // Chunks: `<hex size>[;ext]\r\n<data>\r\n` ..., `0\r\n`, trailers, `\r\n`.
            loop {
                let end = self.line_end(pos).await?;
                let size_text = std::str::from_utf8(&self.buf[pos..end])
                    .map_err(|_| invalid("bad chunk size"))?;
                let size_text = size_text.split(';').next().unwrap_or("").trim();
                let size =
                    usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
                pos = end + 2;
                if size == 0 {
                    // Trailer fields up to an empty line.
                    loop {
                        let end = self.line_end(pos).await?;
                        let empty = end == pos;
                        pos = end + 2;
                        if empty {
                            break;
                        }
                    }
                    break;
                }
                if message.body.len() + size > MAX_BODY {
                    return Err(invalid("body too large"));
                }
                self.fill_to(pos + size + 2).await?;
                message.body.extend_from_slice(&self.buf[pos..pos + size]);
                if &self.buf[pos + size..pos + size + 2] != b"\r\n" {
                    return Err(invalid("chunk not followed by CRLF"));
                }
                pos += size + 2;
            }
        } else if let Some(length) = length {
            if length > MAX_BODY {
                return Err(invalid("body too large"));
            }
            self.fill_to(pos + length).await?;
            message.body = self.buf[pos..pos + length].to_vec();
            pos += length;
        } else {
            // A response with neither: its body is everything until the close.
            while self.fill().await? {
                if self.buf.len() - pos > MAX_BODY {
                    return Err(invalid("body too large"));
                }
            }
            message.body = self.buf[pos..].to_vec();
            pos = self.buf.len();
            message.read_to_eof = true;
        }
        message.raw = self.buf.drain(..pos).collect();
        Ok(Some(message))
    }
}

/// An `InvalidData` error: the peer sent something that is not HTTP/1.1.
pub fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}
