//! The error catalogue: every code any part of dynaslice reports (core, the
//! host, its server, the npm package and the web page), defined once, with
//! its meaning and its category (the host's server answers each category
//! with an HTTP status of its choosing); `docs/ERRORS.md` is generated from
//! this list (a test in `host/tests/errors_doc.rs` keeps it current).
//!
//! ```
//! use dynaslice_core::{Category, Code};
//!
//! assert_eq!(Code::ChunkMissing.as_str(), "CHUNK_MISSING");
//! assert_eq!(Code::from_name("CHUNK_MISSING"), Some(Code::ChunkMissing));
//! assert_eq!(Code::ChunkMissing.category(), Category::Stored);
//! ```

use core::fmt;

/// What kind of failure a code is: who can fix it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// What the caller gave is invalid: the item, a key, an option, a request.
    Input,
    /// Something is over a size limit.
    TooLarge,
    /// What is stored cannot be read: damaged, tampered with, or written by
    /// a newer version. Nothing of it is returned.
    Stored,
    /// Another writer changed the item first.
    Conflict,
    /// The item or table does not exist.
    NotFound,
    /// The caller may not do this (table, key scope, origin).
    Forbidden,
    /// The request lacks the server's token, or has a wrong one.
    Unauthenticated,
    /// The request names a host this server does not answer for.
    Misdirected,
    /// The request body has the wrong media type.
    UnsupportedMedia,
    /// The request body stalled.
    Timeout,
    /// The server or the store is busy or unreachable: try again later.
    Unavailable,
    /// The server or the store failed; its log says why.
    Failure,
    /// Raised in the caller's own process (the npm package, the web page),
    /// never answered by a server.
    Client,
}

impl Category {
    /// Every category, in the catalogue's order.
    pub const ALL: &'static [Self] = &[
        Self::Input,
        Self::TooLarge,
        Self::Stored,
        Self::Conflict,
        Self::NotFound,
        Self::Forbidden,
        Self::Unauthenticated,
        Self::Misdirected,
        Self::UnsupportedMedia,
        Self::Timeout,
        Self::Unavailable,
        Self::Failure,
        Self::Client,
    ];

    /// The category's name, as `docs/ERRORS.md` spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::TooLarge => "too large",
            Self::Stored => "stored data",
            Self::Conflict => "conflict",
            Self::NotFound => "not found",
            Self::Forbidden => "forbidden",
            Self::Unauthenticated => "unauthenticated",
            Self::Misdirected => "misdirected",
            Self::UnsupportedMedia => "unsupported media",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::Failure => "failure",
            Self::Client => "client",
        }
    }

    /// One sentence on what the category means.
    pub const fn meaning(self) -> &'static str {
        match self {
            Self::Input => {
                "What the caller gave is invalid: the item, a key, an option, a request."
            }
            Self::TooLarge => "Something is over a size limit; the message names the limit.",
            Self::Stored => {
                "What is stored cannot be read: damaged, tampered with, or written by a newer version. Nothing of it is returned."
            }
            Self::Conflict => "Another writer changed the item first.",
            Self::NotFound => "The item or the table does not exist.",
            Self::Forbidden => "The caller may not do this (table, key scope, origin).",
            Self::Unauthenticated => "The request lacks the server's token, or has a wrong one.",
            Self::Misdirected => "The request names a host this server does not answer for.",
            Self::UnsupportedMedia => "The request body has the wrong media type.",
            Self::Timeout => "The request body stalled.",
            Self::Unavailable => "The server or the store is busy or unreachable: try again later.",
            Self::Failure => "The server or the store failed; the server's log says why.",
            Self::Client => {
                "Raised in the caller's own process (the npm package, the web page), never answered by a server."
            }
        }
    }
}

/// Defines [`Code`] from one table: variant, text, category and meaning
/// (the variant's doc comment) are written once.
macro_rules! catalogue {
    ($( #[doc = $doc:literal] $variant:ident = $text:literal, $category:ident; )*) => {
        /// A stable error code. Its text ([`Code::as_str`]) is what every
        /// error of dynaslice reports, in Rust, in JSON and in JavaScript.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $( #[doc = $doc] $variant, )*
        }

        impl Code {
            /// Every code, in the catalogue's order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The code's text, such as `"CHUNK_MISSING"`.
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text,)* }
            }

            /// The code's category.
            pub const fn category(self) -> Category {
                match self { $(Self::$variant => Category::$category,)* }
            }

            /// One sentence on what the code means.
            pub fn meaning(self) -> &'static str {
                match self { $(Self::$variant => $doc.trim(),)* }
            }
        }
    };
}

catalogue! {
    // Input: the item and its values.
    /// An item, or a value in it, is not valid DynamoDB data.
    ItemInvalid = "ITEM_INVALID", Input;
    /// A value is not of the form the caller said it is (DynamoDB JSON, plain values, key text).
    InputInvalid = "INPUT_INVALID", Input;
    /// An option has an unknown name, a wrong type or a value out of range.
    OptionsInvalid = "OPTIONS_INVALID", Input;
    /// A number is not a DynamoDB number (bad syntax, NaN, infinity).
    NumberInvalid = "NUMBER_INVALID", Input;
    /// A number has more than the 38 significant digits DynamoDB keeps.
    NumberTooPrecise = "NUMBER_TOO_PRECISE", Input;
    /// A number's magnitude is outside 1e-130 to 1e126.
    NumberOutOfRange = "NUMBER_OUT_OF_RANGE", Input;
    /// A set is empty; DynamoDB stores no empty set.
    SetEmpty = "SET_EMPTY", Input;
    /// A set holds the same value twice.
    SetDuplicate = "SET_DUPLICATE", Input;
    /// Lists and maps are nested deeper than DynamoDB's 32 levels.
    NestingTooDeep = "NESTING_TOO_DEEP", Input;
    /// An attribute name is empty.
    NameEmpty = "NAME_EMPTY", Input;
    /// An attribute name is longer than DynamoDB allows.
    NameTooLong = "NAME_TOO_LONG", Input;
    /// An attribute name is one dynaslice reserves for its own bookkeeping.
    AttributeReserved = "ATTRIBUTE_RESERVED", Input;
    /// An attribute the request names holds no binary or string data.
    AttributeNotBlob = "ATTRIBUTE_NOT_BLOB", Input;
    /// An update asks for what no update can do: change a key attribute or a reserved name, set and remove one attribute, or change nothing.
    UpdateInvalid = "UPDATE_INVALID", Input;
    /// An uploaded item holds an index key or the TTL attribute in its payload: split it with the table's indexKeys and ttl.
    AttributeMisplaced = "ATTRIBUTE_MISPLACED", Input;
    // Input: keys and tables.
    /// A key attribute of the table is missing.
    KeyMissing = "KEY_MISSING", Input;
    /// A key attribute has a type the table's schema does not declare.
    KeyWrongType = "KEY_WRONG_TYPE", Input;
    /// A key attribute is empty.
    KeyEmpty = "KEY_EMPTY", Input;
    /// A key attribute is over DynamoDB's size for keys.
    KeyTooLarge = "KEY_TOO_LARGE", Input;
    /// A key is not usable (not JSON, not name=value, not the table's schema).
    KeyInvalid = "KEY_INVALID", Input;
    /// The parent's key cannot be written into chunk keys.
    ParentKeyInvalid = "PARENT_KEY_INVALID", Input;
    /// A chunk key built from the parent's key would be over DynamoDB's key size.
    ChunkKeyTooLarge = "CHUNK_KEY_TOO_LARGE", Input;
    /// The table's key schema cannot hold chunks in the layout asked for.
    LayoutUnsupported = "LAYOUT_UNSUPPORTED", Input;
    /// The table cannot hold virtual items as configured.
    TableUnsupported = "TABLE_UNSUPPORTED", Input;
    // Input: codecs, modes, versions.
    /// The codec is not compiled into this build.
    CodecDisabled = "CODEC_DISABLED", Input;
    /// The codec name is not one dynaslice knows.
    CodecUnknown = "CODEC_UNKNOWN", Input;
    /// The codec does not offer the compression level asked for.
    CodecLevelUnsupported = "CODEC_LEVEL_UNSUPPORTED", Input;
    /// Mode atomic was asked for, but the item needs more than one transaction holds.
    AtomicTooLarge = "ATOMIC_TOO_LARGE", Input;
    /// The new write would reuse the stored item's version.
    VersionReused = "VERSION_REUSED", Input;
    /// A version id is not the 26-character form dynaslice writes.
    VersionIdInvalid = "VERSION_ID_INVALID", Input;
    /// A streamed write's bytes differ in length from the length it declared.
    StreamLengthMismatch = "STREAM_LENGTH_MISMATCH", Input;
    /// The item's payload is in S3, and no bucket (or another one) is configured.
    ObjectStoreNotConfigured = "OBJECT_STORE_NOT_CONFIGURED", Input;
    // Input: the host's server.
    /// A required query parameter is missing.
    ParameterMissing = "PARAMETER_MISSING", Input;
    /// A query parameter is out of range or not one this server gave.
    ParameterInvalid = "PARAMETER_INVALID", Input;
    /// An upload body does not start with a valid DSU1 header.
    UploadMalformed = "UPLOAD_MALFORMED", Input;
    /// An upload declares a number of chunks other than its manifest's.
    ChunkCountMismatch = "CHUNK_COUNT_MISMATCH", Input;
    /// An uploaded chunk's length differs from what its manifest implies.
    ChunkLengthMismatch = "CHUNK_LENGTH_MISMATCH", Input;
    /// An upload body ended before the bytes its header declared.
    BodyIncomplete = "BODY_INCOMPLETE", Input;
    /// An upload body goes on past the bytes its header declared.
    BodyTrailing = "BODY_TRAILING", Input;
    // Too large.
    /// An item is over DynamoDB's 400 KB (409,600-byte) item limit.
    ItemTooLarge = "ITEM_TOO_LARGE", TooLarge;
    /// A virtual item is over the caller's size limit (the host's --max-size).
    VirtualItemTooLarge = "VIRTUAL_ITEM_TOO_LARGE", TooLarge;
    /// The attributes kept on the parent alone are over the item limit.
    ParentTooLarge = "PARENT_TOO_LARGE", TooLarge;
    /// A payload would decompress to more bytes than the reader's limit.
    DecompressLimit = "DECOMPRESS_LIMIT", TooLarge;
    /// The input is over what one compressed frame can hold.
    CodecInputTooLarge = "CODEC_INPUT_TOO_LARGE", TooLarge;
    /// A request body is over this server's limit.
    BodyTooLarge = "BODY_TOO_LARGE", TooLarge;
    /// The parent a commit replaces is too large to keep in a version record.
    HistoryRecordTooLarge = "HISTORY_RECORD_TOO_LARGE", TooLarge;
    // Stored data.
    /// A parent's manifest (`_ds`) is not a manifest this version writes.
    ManifestInvalid = "MANIFEST_INVALID", Stored;
    /// A parent's manifest was written by a newer format version.
    ManifestUnsupportedVersion = "MANIFEST_UNSUPPORTED_VERSION", Stored;
    /// The stored item's layout differs from the table's configured layout.
    LayoutMismatch = "LAYOUT_MISMATCH", Stored;
    /// Chunks were given for an item whose manifest has none.
    ChunksUnexpected = "CHUNKS_UNEXPECTED", Stored;
    /// A chunk lacks its data or digest, or they have the wrong type.
    ChunkMalformed = "CHUNK_MALFORMED", Stored;
    /// A manifest names an S3 object not its own (outside the bucket or prefix): not read or deleted.
    ObjectForeign = "OBJECT_FOREIGN", Stored;
    /// The S3 object a committed manifest names is gone, or its ETag differs.
    ObjectMissing = "OBJECT_MISSING", Stored;
    /// An S3 object's length differs from its manifest's.
    ObjectLengthMismatch = "OBJECT_LENGTH_MISMATCH", Stored;
    /// A chunk key cannot be parsed.
    ChunkKeyMalformed = "CHUNK_KEY_MALFORMED", Stored;
    /// A chunk belongs to another parent.
    ChunkForeignParent = "CHUNK_FOREIGN_PARENT", Stored;
    /// A chunk belongs to another version of the item.
    ChunkForeignVersion = "CHUNK_FOREIGN_VERSION", Stored;
    /// A chunk's position is past the manifest's chunk count.
    ChunkOutOfRange = "CHUNK_OUT_OF_RANGE", Stored;
    /// Two chunks claim the same position.
    ChunkDuplicate = "CHUNK_DUPLICATE", Stored;
    /// A chunk the manifest lists was not found.
    ChunkMissing = "CHUNK_MISSING", Stored;
    /// A chunk holds fewer bytes than the manifest implies.
    ChunkTruncated = "CHUNK_TRUNCATED", Stored;
    /// A chunk holds more bytes than the manifest implies.
    ChunkOversized = "CHUNK_OVERSIZED", Stored;
    /// A chunk's bytes do not match its digest.
    ChunkDigestMismatch = "CHUNK_DIGEST_MISMATCH", Stored;
    /// The chunks rebuild a frame other than the manifest describes.
    FrameMismatch = "FRAME_MISMATCH", Stored;
    /// A chunked attribute is also present on the parent.
    AttributeConflict = "ATTRIBUTE_CONFLICT", Stored;
    /// A compressed frame ends before its header does.
    FrameTruncated = "FRAME_TRUNCATED", Stored;
    /// Bytes that should be a compressed frame do not start with its magic.
    FrameBadMagic = "FRAME_BAD_MAGIC", Stored;
    /// A compressed frame was written by a newer format version.
    FrameUnsupportedVersion = "FRAME_UNSUPPORTED_VERSION", Stored;
    /// The codec cannot decode the frame's payload.
    CodecCorrupt = "CODEC_CORRUPT", Stored;
    /// A frame decodes to a length other than its header declares.
    LengthMismatch = "LENGTH_MISMATCH", Stored;
    /// A frame decodes to bytes whose digest differs from its trailer's.
    DigestMismatch = "DIGEST_MISMATCH", Stored;
    /// A value stream does not start with `DSV`.
    StreamBadMagic = "STREAM_BAD_MAGIC", Stored;
    /// A value stream was written by a newer format version.
    StreamUnsupportedVersion = "STREAM_UNSUPPORTED_VERSION", Stored;
    /// A value stream ends inside a value, or a length points past its end.
    StreamTruncated = "STREAM_TRUNCATED", Stored;
    /// A value stream's number is not a shortest LEB128 varint of at most 64 bits.
    StreamBadVarint = "STREAM_BAD_VARINT", Stored;
    /// A value stream has a type tag no version assigns.
    StreamUnknownTag = "STREAM_UNKNOWN_TAG", Stored;
    /// A value stream's text is not UTF-8.
    StreamInvalidUtf8 = "STREAM_INVALID_UTF8", Stored;
    /// A value stream nests deeper than DynamoDB allows.
    StreamTooDeep = "STREAM_TOO_DEEP", Stored;
    /// A value stream's map names one attribute twice.
    StreamDuplicateName = "STREAM_DUPLICATE_NAME", Stored;
    /// A value stream goes on after its item ends.
    StreamTrailingBytes = "STREAM_TRAILING_BYTES", Stored;
    /// A version record does not read back as the version it is kept as.
    HistoryRecordInvalid = "HISTORY_RECORD_INVALID", Stored;
    // Conflict, not found, access.
    /// Another writer committed first; nothing of this write was kept.
    Conflict = "CONFLICT", Conflict;
    /// Another writer replaced the item under each read of it: read it again later.
    ChunksVanished = "CHUNKS_VANISHED", Conflict;
    /// No item has this key.
    NotFound = "NOT_FOUND", NotFound;
    /// The item's TTL has passed and DynamoDB is deleting it: some of its chunks are gone already.
    ItemExpired = "ITEM_EXPIRED", NotFound;
    /// The item keeps no version of this id: never kept, or its retention released it.
    VersionNotFound = "VERSION_NOT_FOUND", NotFound;
    /// The table does not exist on the store.
    TableNotFound = "TABLE_NOT_FOUND", NotFound;
    /// The item has no attribute of the name asked for.
    AttributeNotFound = "ATTRIBUTE_NOT_FOUND", NotFound;
    /// The table is not on this server's allow-list.
    TableNotAllowed = "TABLE_NOT_ALLOWED", Forbidden;
    /// The key is outside the scope this caller may use.
    KeyOutOfScope = "KEY_OUT_OF_SCOPE", Forbidden;
    /// The request came from another site (its Origin or Sec-Fetch-Site).
    CrossOriginRefused = "CROSS_ORIGIN_REFUSED", Forbidden;
    /// The request carries no X-Dynaslice-Token.
    TokenRequired = "TOKEN_REQUIRED", Unauthenticated;
    /// The request's X-Dynaslice-Token is not this server's.
    TokenInvalid = "TOKEN_INVALID", Unauthenticated;
    /// The request's Host is not one this server answers for (`--allow-host`).
    HostNotAllowed = "HOST_NOT_ALLOWED", Misdirected;
    /// An upload is not `application/octet-stream`.
    ContentTypeUnsupported = "CONTENT_TYPE_UNSUPPORTED", UnsupportedMedia;
    /// An upload body sent nothing for longer than the server's idle timeout.
    BodyTimeout = "BODY_TIMEOUT", Timeout;
    // Unavailable and failures.
    /// Too many uploads or reads are in flight on this server.
    ServerBusy = "SERVER_BUSY", Unavailable;
    /// The store could not be reached, or did not answer in time.
    ConnectionFailed = "CONNECTION_FAILED", Unavailable;
    /// DynamoDB refused a request, or kept failing it until retries ran out.
    DynamodbError = "DYNAMODB_ERROR", Failure;
    /// S3 refused a request (a missing bucket, no access); the message says why.
    S3Error = "S3_ERROR", Failure;
    /// DynamoDB refused a request as invalid (ValidationException).
    DynamodbValidation = "DYNAMODB_VALIDATION", Failure;
    /// The embedded store could not open or answer.
    EmbeddedStore = "EMBEDDED_STORE", Failure;
    /// A local file could not be read or written.
    IoError = "IO_ERROR", Failure;
    /// This machine's clock and the store's differ by more than can be trusted.
    ClockSkew = "CLOCK_SKEW", Failure;
    /// A mounted upload route was reached without the KeyScope its application must set.
    KeyScopeMissing = "KEY_SCOPE_MISSING", Failure;
    /// An invariant of dynaslice itself failed: a bug, please report it.
    Internal = "INTERNAL", Failure;
    // Client side: the npm package and the web page.
    /// The WebAssembly module could not be loaded.
    WasmLoad = "WASM_LOAD", Client;
    /// A Splitter was used after `free()`.
    SplitterFreed = "SPLITTER_FREED", Client;
    /// A Splitter was used after it finished.
    SplitterFinished = "SPLITTER_FINISHED", Client;
    /// A ChunkReader was finished before every byte of its attribute was read.
    ReaderNotDrained = "READER_NOT_DRAINED", Client;
    /// A ChunkReader was used after `free()`.
    ReaderFreed = "READER_FREED", Client;
    /// A ChunkReader or Reassembler was used after it finished, or after an error.
    ReaderFinished = "READER_FINISHED", Client;
    /// `crypto.getRandomValues` is unavailable or failed.
    RandomUnavailable = "RANDOM_UNAVAILABLE", Client;
    /// A stored number has no exact JavaScript number (ask for `wrapNumbers`).
    NumberImprecise = "NUMBER_IMPRECISE", Client;
    /// An upload was cancelled by the user.
    UploadCancelled = "UPLOAD_CANCELLED", Client;
    /// The page: the pasted text is empty.
    JsonEmpty = "JSON_EMPTY", Client;
    /// The page: the pasted text is not JSON.
    JsonInvalid = "JSON_INVALID", Client;
    /// The page: the pasted JSON is not an object.
    JsonNotObject = "JSON_NOT_OBJECT", Client;
    /// The page: the chosen file is over what the page reads into memory.
    FileTooLarge = "FILE_TOO_LARGE", Client;
    /// The page: the item is over the server's `--max-size`.
    ServerLimit = "SERVER_LIMIT", Client;
    /// The page: the server allows no table.
    NoTables = "NO_TABLES", Client;
    /// The page: the item read back differs from the item written.
    VerifyMismatch = "VERIFY_MISMATCH", Client;
}

impl Code {
    /// The code whose text is `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|code| code.as_str() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Code> for &str {
    fn eq(&self, other: &Code) -> bool {
        *self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_unique_upper_snake_case_and_round_trip() {
        for (i, code) in Code::ALL.iter().enumerate() {
            let text = code.as_str();
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
                "{text}"
            );
            assert_eq!(Code::from_name(text), Some(*code));
            assert!(
                Code::ALL[..i].iter().all(|other| other.as_str() != text),
                "{text} twice"
            );
            assert!(code.meaning().ends_with('.'), "{text}: {}", code.meaning());
        }
        assert_eq!(Code::from_name("NO_SUCH_CODE"), None);
    }
}
