#!/usr/bin/env python3
"""An independent implementation of the dynaslice stored format, version 1.

Written from docs/FORMAT.md (and tests/vectors/README.md) only, without reading dynaslice-core's
sources, so that vectors generated here check the Rust and JavaScript implementations against the
specification rather than against themselves.

Python 3.11, standard library plus `xxhash` (the C reference XXH3 implementation).

    python3 tests/vectors/tools/reference.py selftest
    python3 tests/vectors/tools/reference.py generate [--out tests/vectors/chunks.v2.json]

Values are kept as (type, payload) pairs:
    ("S", str) ("N", str: the text as written) ("B", bytes) ("BOOL", bool) ("NULL", True)
    ("L", [value]) ("M", {name: value}) ("SS", [str]) ("NS", [str]) ("BS", [bytes])
An item is a dict {name: value}.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import io
import json
import os
import re
import sys
import zlib

import xxhash

ITEM_LIMIT = 409_600
MAX_CHUNKS = 999_999
U64_MAX = 2**64 - 1
DEFAULT_MAX_RAW = 64 * 1024 * 1024


class FormatError(Exception):
    """An error carrying one of the spec's error codes (docs/FORMAT.md section 10)."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


def utf8(s: str) -> bytes:
    return s.encode("utf-8")


def name_key(name: str) -> bytes:
    """Sort key for names: ascending order of their UTF-8 bytes (section 3)."""
    return utf8(name)


# ---------------------------------------------------------------------------------------------
# Numbers (section 2, "Number size" and "Number text"; section 6, canonical N key parts)

NUMBER_RE = re.compile(r"^([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([+-]?[0-9]+))?$")


class Num:
    """A parsed number: sign, significant digits (no leading/trailing zeros) and the power of ten
    of the last significant digit. Zero has digits ''."""

    __slots__ = ("negative", "digits", "last")

    def __init__(self, text: str):
        m = NUMBER_RE.fullmatch(text)
        if m is None or not text.isascii():
            raise FormatError("NUMBER_INVALID", repr(text))
        sign, int_part, frac_part, only_frac, exp = m.groups()
        if only_frac is not None:
            int_part, frac_part = "", only_frac
        frac_part = frac_part or ""
        exponent = int(exp) if exp is not None else 0
        all_digits = int_part + frac_part
        # value = int(all_digits) * 10^(exponent - len(frac_part))
        power_of_last = exponent - len(frac_part)
        stripped = all_digits.lstrip("0")
        trailing = len(stripped) - len(stripped.rstrip("0"))
        stripped = stripped.rstrip("0")
        self.negative = sign == "-" and stripped != ""
        self.digits = stripped
        self.last = power_of_last + trailing if stripped else 0

    @property
    def is_zero(self) -> bool:
        return self.digits == ""

    @property
    def first(self) -> int:
        """Power of ten of the first significant digit."""
        return self.last + len(self.digits) - 1

    def validate(self) -> None:
        if self.is_zero:
            return
        if len(self.digits) > 38:
            raise FormatError("NUMBER_TOO_PRECISE")
        if self.first > 125 or self.first < -130:
            raise FormatError("NUMBER_OUT_OF_RANGE")

    def size(self) -> int:
        """Aligned base-100 pair count, + 1, + 1 if negative; zero is 1 (section 2)."""
        if self.is_zero:
            return 1
        return self.first // 2 - self.last // 2 + 2 + (1 if self.negative else 0)

    def canonical(self) -> str:
        """Section 6: no exponent, no '+', no superfluous zeros, '-' only when nonzero."""
        if self.is_zero:
            return "0"
        d, last, first = self.digits, self.last, self.first
        if last >= 0:
            text = d + "0" * last
        elif first >= 0:
            cut = first + 1
            text = d[:cut] + "." + d[cut:]
        else:
            text = "0." + "0" * (-first - 1) + d
        return ("-" if self.negative else "") + text

    def value_key(self):
        """A key equal for numerically equal numbers (set duplicate check)."""
        return (self.negative, self.digits, self.last)


def number_size(text: str) -> int:
    return Num(text).size()


# ---------------------------------------------------------------------------------------------
# DynamoDB JSON <-> values


def from_ddb(v: dict):
    if not isinstance(v, dict) or len(v) != 1:
        raise ValueError(f"not a DynamoDB JSON value: {v!r}")
    (t, p), = v.items()
    if t in ("S", "B") and isinstance(p, dict):  # the {"fill","count"} extension of README.md
        if t == "S":
            return ("S", p["fill"] * p["count"])
        return ("B", bytes.fromhex(p["fill"]) * p["count"])
    if t == "S":
        return ("S", p)
    if t == "N":
        return ("N", p)
    if t == "B":
        return ("B", base64.b64decode(p, validate=True))
    if t == "BOOL":
        return ("BOOL", bool(p))
    if t == "NULL":
        return ("NULL", True)
    if t == "L":
        return ("L", [from_ddb(x) for x in p])
    if t == "M":
        return ("M", {k: from_ddb(x) for k, x in p.items()})
    if t == "SS":
        return ("SS", list(p))
    if t == "NS":
        return ("NS", list(p))
    if t == "BS":
        return ("BS", [base64.b64decode(x, validate=True) for x in p])
    raise ValueError(f"unknown type {t}")


def to_ddb(v):
    t, p = v
    if t == "B":
        return {"B": base64.b64encode(p).decode("ascii")}
    if t == "BS":
        return {"BS": [base64.b64encode(x).decode("ascii") for x in p]}
    if t == "L":
        return {"L": [to_ddb(x) for x in p]}
    if t == "M":
        return {"M": {k: to_ddb(x) for k, x in sorted(p.items(), key=lambda kv: name_key(kv[0]))}}
    if t == "SS" or t == "NS":
        return {t: list(p)}
    return {t: p}


def item_from_ddb(item: dict) -> dict:
    return {k: from_ddb(v) for k, v in item.items()}


def item_to_ddb(item: dict) -> dict:
    return {k: to_ddb(v) for k, v in sorted(item.items(), key=lambda kv: name_key(kv[0]))}


# ---------------------------------------------------------------------------------------------
# Sizes (section 2)


def value_size(v) -> int:
    t, p = v
    if t == "S":
        return len(utf8(p))
    if t == "B":
        return len(p)
    if t in ("BOOL", "NULL"):
        return 1
    if t == "N":
        return number_size(p)
    if t == "L":
        return 3 + sum(1 + value_size(x) for x in p)
    if t == "M":
        return 3 + sum(1 + len(utf8(k)) + value_size(x) for k, x in p.items())
    if t == "SS":
        return sum(len(utf8(x)) for x in p)
    if t == "NS":
        return sum(number_size(x) for x in p)
    if t == "BS":
        return sum(len(x) for x in p)
    raise ValueError(t)


def attribute_size(name: str, v) -> int:
    return len(utf8(name)) + value_size(v)


def item_size(item: dict) -> int:
    return sum(attribute_size(k, v) for k, v in item.items())


# ---------------------------------------------------------------------------------------------
# Validation (section 2, every rule but the size limit; section 7 step 2)


def validate_value(v, depth: int) -> None:
    if depth > 32:
        raise FormatError("NESTING_TOO_DEEP")
    t, p = v
    if t == "N":
        Num(p).validate()
    elif t == "L":
        for x in p:
            validate_value(x, depth + 1)
    elif t == "M":
        for k, x in p.items():
            validate_name(k)
            validate_value(x, depth + 1)
    elif t in ("SS", "BS"):
        if not p:
            raise FormatError("SET_EMPTY")
        if len(set(p)) != len(p):
            raise FormatError("SET_DUPLICATE")
    elif t == "NS":
        if not p:
            raise FormatError("SET_EMPTY")
        nums = [Num(x) for x in p]
        for n in nums:
            n.validate()
        if len({n.value_key() for n in nums}) != len(nums):
            raise FormatError("SET_DUPLICATE")


def validate_name(name: str) -> None:
    if name == "":
        raise FormatError("NAME_EMPTY")
    if len(utf8(name)) > 65_535:
        raise FormatError("NAME_TOO_LONG")


def validate_item(item: dict, key_schema: list[tuple[str, str]]) -> None:
    for i, (kname, ktype) in enumerate(key_schema):
        if kname not in item:
            raise FormatError("KEY_MISSING", kname)
        t, p = item[kname]
        if t != ktype:
            raise FormatError("KEY_WRONG_TYPE", kname)
        if t in ("S", "B"):
            length = len(utf8(p)) if t == "S" else len(p)
            if length == 0:
                raise FormatError("KEY_EMPTY", kname)
            if length > (2048 if i == 0 else 1024):
                raise FormatError("KEY_TOO_LARGE", kname)
    for name, v in item.items():
        validate_name(name)
        validate_value(v, 1)


# ---------------------------------------------------------------------------------------------
# Value stream (section 3)


def varint(n: int) -> bytes:
    assert 0 <= n <= U64_MAX
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_bytes(b: bytes) -> bytes:
    return varint(len(b)) + b


def encode_value(v) -> bytes:
    t, p = v
    if t == "S":
        return b"\x01" + enc_bytes(utf8(p))
    if t == "N":
        return b"\x02" + enc_bytes(utf8(p))
    if t == "B":
        return b"\x03" + enc_bytes(p)
    if t == "BOOL":
        return b"\x05" if p else b"\x04"
    if t == "NULL":
        return b"\x06"
    if t == "L":
        return b"\x07" + varint(len(p)) + b"".join(encode_value(x) for x in p)
    if t == "M":
        return b"\x08" + encode_entries(p)
    if t == "SS":
        return b"\x09" + varint(len(p)) + b"".join(enc_bytes(utf8(x)) for x in p)
    if t == "NS":
        return b"\x0a" + varint(len(p)) + b"".join(enc_bytes(utf8(x)) for x in p)
    if t == "BS":
        return b"\x0b" + varint(len(p)) + b"".join(enc_bytes(x) for x in p)
    raise ValueError(t)


def encode_entries(m: dict) -> bytes:
    names = sorted(m, key=name_key)
    return varint(len(names)) + b"".join(enc_bytes(utf8(k)) + encode_value(m[k]) for k in names)


def encode_stream(item: dict) -> bytes:
    return b"DSV\x01" + encode_entries(item)


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise FormatError("STREAM_TRUNCATED")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        value = 0
        for i in range(10):
            b = self.byte()
            if i == 9 and b > 1:
                raise FormatError("STREAM_BAD_VARINT")
            value |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                if b == 0 and i > 0:
                    raise FormatError("STREAM_BAD_VARINT")
                return value
        raise FormatError("STREAM_BAD_VARINT")

    def count(self) -> int:
        n = self.varint()
        if n > self.remaining():
            raise FormatError("STREAM_TRUNCATED")
        return n

    def bytes(self) -> bytes:
        n = self.count()
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def text(self) -> str:
        try:
            return self.bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError("STREAM_INVALID_UTF8") from None


def _decode_value(r: _Reader, depth: int):
    tag = r.byte()
    if not 1 <= tag <= 0x0B:
        raise FormatError("STREAM_UNKNOWN_TAG")
    if depth > 32:
        raise FormatError("STREAM_TOO_DEEP")
    if tag == 1:
        return ("S", r.text())
    if tag == 2:
        return ("N", r.text())
    if tag == 3:
        return ("B", r.bytes())
    if tag == 4:
        return ("BOOL", False)
    if tag == 5:
        return ("BOOL", True)
    if tag == 6:
        return ("NULL", True)
    if tag == 7:
        return ("L", [_decode_value(r, depth + 1) for _ in range(r.count())])
    if tag == 8:
        return ("M", _decode_entries(r, depth + 1))
    if tag == 9:
        return ("SS", [r.text() for _ in range(r.count())])
    if tag == 10:
        return ("NS", [r.text() for _ in range(r.count())])
    return ("BS", [r.bytes() for _ in range(r.count())])


def _decode_entries(r: _Reader, depth: int) -> dict:
    out = {}
    for _ in range(r.count()):
        name = r.text()
        if name in out:
            raise FormatError("STREAM_DUPLICATE_NAME")
        out[name] = _decode_value(r, depth)
    return out


def decode_stream(data: bytes) -> dict:
    if len(data) < 3 or data[:3] != b"DSV":
        raise FormatError("STREAM_BAD_MAGIC")
    if len(data) < 4:
        raise FormatError("STREAM_TRUNCATED")
    if data[3] != 1:
        raise FormatError("STREAM_UNSUPPORTED_VERSION")
    r = _Reader(data)
    r.pos = 4
    item = _decode_entries(r, 1)
    if r.remaining():
        raise FormatError("STREAM_TRAILING_BYTES")
    return item


# ---------------------------------------------------------------------------------------------
# Frame (section 4)

CODEC_IDS = {"none": 0, "deflate": 1, "zlib": 2, "gzip": 3, "snappy": 4, "zstd": 5}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}


def xxh3(data: bytes, seed: int = 0) -> int:
    return xxhash.xxh3_64_intdigest(data, seed=seed)


def compress_body(codec: str, raw: bytes) -> bytes:
    """Bodies for the reading-side vectors. Python's zlib, not miniz: only codec `none` produces
    bytes comparable with dynaslice's writer."""
    if codec == "none":
        return raw
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(raw) + c.flush()
    if codec == "zlib":
        return zlib.compress(raw, 6)
    if codec == "gzip":
        # FNAME and MTIME set, so readers must skip an optional header field.
        buf = io.BytesIO()
        with gzip.GzipFile(filename="item.dsv", mode="wb", fileobj=buf, mtime=1763683200) as f:
            f.write(raw)
        return buf.getvalue()
    raise FormatError("CODEC_DISABLED", codec)


def make_frame(codec: str, raw: bytes) -> bytes:
    body = compress_body(codec, raw)
    return (
        b"DSZ\x01"
        + bytes([CODEC_IDS[codec]])
        + len(raw).to_bytes(8, "little")
        + body
        + xxh3(raw).to_bytes(8, "little")
    )


def decompress_frame(frame: bytes, limit: int = DEFAULT_MAX_RAW) -> bytes:
    if len(frame) < 21:
        raise FormatError("FRAME_TRUNCATED")
    if frame[:3] != b"DSZ":
        raise FormatError("FRAME_BAD_MAGIC")
    if frame[3] != 1:
        raise FormatError("FRAME_UNSUPPORTED_VERSION")
    if frame[4] not in CODEC_NAMES:
        raise FormatError("CODEC_UNKNOWN")
    codec = CODEC_NAMES[frame[4]]
    raw_len = int.from_bytes(frame[5:13], "little")
    if raw_len > limit:
        raise FormatError("DECOMPRESS_LIMIT")
    body = frame[13:-8]
    if codec == "none":
        raw = body
    elif codec in ("deflate", "zlib", "gzip"):
        wbits = {"deflate": -15, "zlib": 15, "gzip": 31}[codec]
        d = zlib.decompressobj(wbits)
        try:
            raw = d.decompress(body, raw_len + 1)
        except zlib.error as e:
            raise FormatError("CODEC_CORRUPT", str(e)) from None
        if len(raw) != raw_len:
            raise FormatError("LENGTH_MISMATCH")
        if not d.eof or d.unused_data or d.unconsumed_tail:
            raise FormatError("CODEC_CORRUPT")
    else:
        raise FormatError("CODEC_DISABLED", codec)
    if len(raw) != raw_len:
        raise FormatError("LENGTH_MISMATCH")
    if xxh3(raw) != int.from_bytes(frame[-8:], "little"):
        raise FormatError("DIGEST_MISMATCH")
    return raw


# ---------------------------------------------------------------------------------------------
# Version ids (section 6, "Version ids")

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid_text(unix_ms: int, random: int) -> str:
    if not 0 <= unix_ms < 2**48 or not 0 <= random < 2**80:
        raise FormatError("VERSION_ID_INVALID")
    value = (unix_ms << 80) | random
    return "".join(CROCKFORD[(value >> (5 * (25 - i))) & 31] for i in range(26))


def parse_ulid(text: str) -> int:
    if len(text) != 26 or any(c not in CROCKFORD for c in text) or text[0] > "7":
        raise FormatError("VERSION_ID_INVALID", text)
    value = 0
    for c in text:
        value = value * 32 + CROCKFORD.index(c)
    return value


# ---------------------------------------------------------------------------------------------
# Layouts and chunk keys (section 6)


class Layout:
    def __init__(self, kind: str, key_name: str = "pk"):
        assert kind in ("table", "collection")
        self.kind = kind
        self.key_name = key_name

    @classmethod
    def from_json(cls, j: dict) -> "Layout":
        return cls(j["kind"], j.get("key_name", "pk"))


def escape_s(s: str) -> str:
    return s.replace("\\", "\\\\").replace("#", "\\#")


def key_part(v) -> str:
    t, p = v
    if t == "S":
        return escape_s(p)
    if t == "N":
        n = Num(p)
        n.validate()
        return n.canonical()
    if t == "B":
        return base64.b64encode(p).decode("ascii")
    raise FormatError("PARENT_KEY_INVALID", t)


def chunk_key(parent: dict, key_schema, layout: Layout, version: str, seq: int) -> dict:
    """The key attributes of chunk `seq` (a dict of values)."""
    suffix = f"#{version}#{seq:06d}"
    for kname, ktype in key_schema:
        if kname not in parent or parent[kname][0] != ktype:
            raise FormatError("PARENT_KEY_INVALID", kname)
    if layout.kind == "table":
        text = "#".join(key_part(parent[k]) for k, _ in key_schema) + suffix
        if len(utf8(text)) > 2048:
            raise FormatError("CHUNK_KEY_TOO_LARGE")
        return {layout.key_name: ("S", text)}
    if len(key_schema) != 2 or key_schema[1][1] != "S":
        raise FormatError("LAYOUT_UNSUPPORTED")
    (pk, _), (sk, _) = key_schema
    text = key_part(parent[sk]) + suffix
    if len(utf8(text)) > 1024:
        raise FormatError("CHUNK_KEY_TOO_LARGE")
    return {pk: parent[pk], sk: ("S", text)}


def chunk_seed(version: str, seq: int) -> int:
    return xxh3(version.encode("ascii"), 0) ^ seq


def chunk_digest(data: bytes, version: str, seq: int) -> bytes:
    return xxh3(data, chunk_seed(version, seq)).to_bytes(8, "big")


ANCHOR_SPAN = 64


def is_anchor(seq: int) -> bool:
    """Section 6, "Anchors": every 64th chunk, and a version record (position 999,999)."""
    return seq % ANCHOR_SPAN == 0 or seq == MAX_CHUNKS


def chunk_data_bytes(parent: dict, key_schema, layout: Layout, version: str, chunk_item_bytes: int) -> int:
    """k = chunk_item_bytes - size(chunk 0, an anchor, with an empty _d)."""
    empty = dict(chunk_key(parent, key_schema, layout, version, 0))
    empty["_h"] = ("B", b"\0" * 8)
    empty["_da"] = ("B", b"\0" * 8)
    empty["_d"] = ("B", b"")
    return chunk_item_bytes - item_size(empty)


# ---------------------------------------------------------------------------------------------
# Manifest (section 5)


def manifest_value(*, version, layout, codec, n, k, s, r, h, names, inline_frame=None):
    m = {
        "f": ("N", "1"),
        "v": ("S", version),
        "l": ("S", layout),
        "c": ("S", codec),
        "n": ("N", str(n)),
        "k": ("N", str(k)),
        "s": ("N", str(s)),
        "r": ("N", str(r)),
        "h": ("B", h.to_bytes(8, "big")),
    }
    if names:
        # `a` is informative and its order not significant (section 5); this writer lists the
        # names in ascending order of their UTF-8 bytes, the order of the value stream.
        m["a"] = ("SS", sorted(names, key=name_key))
    if inline_frame is not None:
        m["p"] = ("B", inline_frame)
    return ("M", m)


def worst_case_manifest_size(names) -> int:
    """Size of the attribute `_ds` (name included) listing `names`, with n 999,999, k 409,600,
    s = r = 2^64 - 1, c = deflate, l = collection, no p (section 7, step 4)."""
    m = manifest_value(
        version="0" * 26,
        layout="collection",
        codec="deflate",
        n=MAX_CHUNKS,
        k=ITEM_LIMIT,
        s=U64_MAX,
        r=U64_MAX,
        h=0,
        names=list(names),
    )
    return attribute_size("_ds", m)


def read_manifest(parent: dict) -> dict:
    ds = parent.get("_ds")
    if ds is None or ds[0] != "M":
        raise FormatError("MANIFEST_INVALID")
    m = ds[1]
    f = m.get("f")
    if f is None:
        raise FormatError("MANIFEST_INVALID", "f")
    if f[0] != "N":
        raise FormatError("MANIFEST_INVALID", "f")
    if f[1] != "1":
        raise FormatError("MANIFEST_UNSUPPORTED_VERSION")
    types = {"v": "S", "l": "S", "c": "S", "n": "N", "k": "N", "s": "N", "r": "N", "h": "B"}
    out = {}
    for field, t in types.items():
        if field not in m or m[field][0] != t:
            raise FormatError("MANIFEST_INVALID", field)
        out[field] = m[field][1]
    for field in "nksr":
        text = out[field]
        if not (text.isascii() and text.isdigit()):
            raise FormatError("MANIFEST_INVALID", field)
        out[field] = int(text)
        if out[field] > (2**32 - 1 if field in "nk" else U64_MAX):
            raise FormatError("MANIFEST_INVALID", field)
    parse_ulid(out["v"])
    if out["l"] not in ("table", "collection") or out["c"] not in CODEC_IDS or len(out["h"]) != 8:
        raise FormatError("MANIFEST_INVALID")
    if "a" in m and m["a"][0] != "SS":
        raise FormatError("MANIFEST_INVALID", "a")
    out["p"] = None
    if "p" in m:
        if m["p"][0] != "B":
            raise FormatError("MANIFEST_INVALID", "p")
        out["p"] = m["p"][1]
    n, k, s, r = out["n"], out["k"], out["s"], out["r"]
    if out["p"] is not None:
        if n != 0 or len(out["p"]) != s:
            raise FormatError("MANIFEST_INVALID", "shape")
    else:
        if not (n > 0 and 1024 <= k <= ITEM_LIMIT and n <= MAX_CHUNKS and (n - 1) * k < s <= n * k):
            raise FormatError("MANIFEST_INVALID", "shape")
    if out["c"] == "none":
        if s != r + 21:
            raise FormatError("MANIFEST_INVALID", "bounds")
    elif s > r + r // 6 + 85:
        raise FormatError("MANIFEST_INVALID", "bounds")
    out["h"] = int.from_bytes(out["h"], "big")
    return out


# ---------------------------------------------------------------------------------------------
# split (section 7)


class Options:
    def __init__(
        self,
        version: str,
        codec: str = "none",
        chunk_item_bytes: int = ITEM_LIMIT,
        item_limit: int = ITEM_LIMIT,
        parent_budget: int = 4096,
        inline: bool = True,
        keep=(),
        max_raw_bytes: int = DEFAULT_MAX_RAW,
    ):
        self.version = version
        self.codec = codec
        self.chunk_item_bytes = chunk_item_bytes
        self.item_limit = item_limit
        self.parent_budget = parent_budget
        self.inline = inline
        self.keep = set(keep)
        self.max_raw_bytes = max_raw_bytes


def spill_order(item: dict, key_names, keep) -> list[str]:
    """Candidates: every attribute but the keys and `keep`, by size descending, ties by name."""
    cands = [k for k in item if k not in key_names and k not in keep]
    return sorted(cands, key=lambda k: (-attribute_size(k, item[k]), name_key(k)))


def choose_spilled(item: dict, key_names, opts: Options) -> list[str]:
    candidates = spill_order(item, key_names, opts.keep)
    if not candidates:
        raise FormatError("PARENT_TOO_LARGE", "no attribute can be spilled")
    budget = min(opts.parent_budget, opts.item_limit)
    kept = dict(item)
    spilled: list[str] = []
    for name in candidates:
        if spilled and item_size(kept) + worst_case_manifest_size(spilled) <= budget:
            break
        spilled.append(name)
        del kept[name]
    return spilled


def split_item(item: dict, key_schema, layout: Layout, opts: Options):
    """Returns (parent, [chunk items]) as dicts of values."""
    if not (2048 <= opts.chunk_item_bytes <= ITEM_LIMIT) or opts.item_limit > ITEM_LIMIT:
        raise FormatError("OPTIONS_INVALID")
    if opts.codec not in CODEC_IDS:
        raise FormatError("CODEC_DISABLED")
    if "_ds" in item:
        raise FormatError("ATTRIBUTE_RESERVED")
    validate_item(item, key_schema)
    if item_size(item) <= opts.item_limit:
        return dict(item), []
    key_names = [k for k, _ in key_schema]
    spilled = choose_spilled(item, key_names, opts)
    raw = encode_stream({k: item[k] for k in spilled})
    if len(raw) > opts.max_raw_bytes:
        raise FormatError("VIRTUAL_ITEM_TOO_LARGE")
    frame = make_frame(opts.codec, raw)
    digest = xxh3(raw)
    kept = {k: v for k, v in item.items() if k not in spilled}
    common = dict(version=opts.version, layout=layout.kind, codec=opts.codec, s=len(frame), r=len(raw), h=digest, names=spilled)
    if opts.inline and len(frame) < opts.item_limit:
        parent = dict(kept)
        parent["_ds"] = manifest_value(n=0, k=0, inline_frame=frame, **common)
        if item_size(parent) <= opts.item_limit:
            return parent, []
    k = chunk_data_bytes(item, key_schema, layout, opts.version, opts.chunk_item_bytes)
    if k < 1024:
        raise FormatError("OPTIONS_INVALID", f"k = {k}")
    n = -(-len(frame) // k)
    if n > MAX_CHUNKS:
        raise FormatError("VIRTUAL_ITEM_TOO_LARGE")
    parent = dict(kept)
    parent["_ds"] = manifest_value(n=n, k=k, **common)
    if item_size(parent) > opts.item_limit:
        raise FormatError("PARENT_TOO_LARGE")
    chunks = []
    for seq in range(n):
        data = frame[seq * k : (seq + 1) * k]
        c = dict(chunk_key(item, key_schema, layout, opts.version, seq))
        c["_h"] = ("B", chunk_digest(data, opts.version, seq))
        if is_anchor(seq):
            c["_da"] = c["_h"]
        c["_d"] = ("B", data)
        chunks.append(c)
    return parent, chunks


# ---------------------------------------------------------------------------------------------
# reassemble (section 8), used to check the generated vectors round-trip


def reassemble(parent: dict, chunks: list, key_schema, layout: Layout, limit: int = DEFAULT_MAX_RAW) -> dict:
    if "_ds" not in parent:
        if chunks:
            raise FormatError("CHUNKS_UNEXPECTED")
        return dict(parent)
    m = read_manifest(parent)
    if m["r"] > limit:
        raise FormatError("DECOMPRESS_LIMIT")

    def check_header(frame: bytes):
        if len(frame) < 13:
            raise FormatError("FRAME_MISMATCH")
        if frame[:3] != b"DSZ":
            raise FormatError("FRAME_BAD_MAGIC")
        if frame[3] != 1:
            raise FormatError("FRAME_UNSUPPORTED_VERSION")
        if frame[4] not in CODEC_NAMES:
            raise FormatError("CODEC_UNKNOWN")
        if CODEC_NAMES[frame[4]] != m["c"] or int.from_bytes(frame[5:13], "little") != m["r"]:
            raise FormatError("FRAME_MISMATCH")

    if m["p"] is not None:
        if chunks:
            raise FormatError("CHUNKS_UNEXPECTED")
        frame = m["p"]
        if len(frame) < 21:
            raise FormatError("FRAME_TRUNCATED")
        check_header(frame)
        if int.from_bytes(frame[-8:], "little") != m["h"]:
            raise FormatError("FRAME_MISMATCH")
        raw = decompress_frame(frame, limit)
    else:
        if m["l"] != layout.kind:
            raise FormatError("LAYOUT_MISMATCH")
        n, k, s = m["n"], m["k"], m["s"]
        seen: dict[int, bytes] = {}
        for c in chunks:
            seq = parse_chunk_seq(c, key_schema, layout, m["v"])
            if seq >= n:
                raise FormatError("CHUNK_OUT_OF_RANGE")
            if {kk: c.get(kk) for kk in chunk_key(parent, key_schema, layout, m["v"], seq)} != chunk_key(
                parent, key_schema, layout, m["v"], seq
            ):
                raise FormatError("CHUNK_FOREIGN_PARENT")
            d, h = c.get("_d"), c.get("_h")
            if d is None or d[0] != "B" or h is None or h[0] != "B" or len(h[1]) != 8:
                raise FormatError("CHUNK_MALFORMED")
            if seq in seen:
                raise FormatError("CHUNK_DUPLICATE")
            want = min(k, s - seq * k)
            if len(d[1]) < want:
                raise FormatError("CHUNK_TRUNCATED")
            if len(d[1]) > want:
                raise FormatError("CHUNK_OVERSIZED")
            if chunk_digest(d[1], m["v"], seq) != h[1]:
                raise FormatError("CHUNK_DIGEST_MISMATCH")
            seen[seq] = d[1]
        for seq in range(n):
            if seq not in seen:
                raise FormatError("CHUNK_MISSING", str(seq))
        frame = b"".join(seen[i] for i in range(n))
        check_header(frame)
        if m["c"] == "none":
            if s - 21 != m["r"] or int.from_bytes(frame[-8:], "little") != m["h"]:
                raise FormatError("FRAME_MISMATCH")
            raw = frame[13:-8]
            if xxh3(raw) != m["h"]:
                raise FormatError("DIGEST_MISMATCH")
        else:
            raw = decompress_frame(frame, limit)
            if int.from_bytes(frame[-8:], "little") != m["h"]:
                raise FormatError("FRAME_MISMATCH")
    decoded = decode_stream(raw)
    out = {k: v for k, v in parent.items() if k != "_ds"}
    for name, v in decoded.items():
        if name in out or name == "_ds":
            raise FormatError("ATTRIBUTE_CONFLICT", name)
        out[name] = v
    return out


def split_key_text(text: str) -> list[str]:
    """Split on unescaped '#', unescaping `\\x` to `x` for any `x`, as docs/FORMAT.md section 6
    describes core's parser. (Core in fact refuses escapes other than `\\\\` and `\\#`; either way
    reassembly compares the whole key with the one the parent makes.)"""
    parts, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i + 1])
            i += 2
            continue
        if ch == "#":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def parse_chunk_seq(chunk: dict, key_schema, layout: Layout, version: str) -> int:
    if layout.kind == "table":
        kv = chunk.get(layout.key_name)
    else:
        kv = chunk.get(key_schema[1][0]) if len(key_schema) == 2 else None
    if kv is None or kv[0] != "S":
        raise FormatError("CHUNK_MALFORMED")
    parts = split_key_text(kv[1])
    if len(parts) < 3 or not re.fullmatch(r"[0-9]{6}", parts[-1]):
        raise FormatError("CHUNK_MALFORMED")
    try:
        parse_ulid(parts[-2])
    except FormatError:
        raise FormatError("CHUNK_MALFORMED") from None
    if parts[-2] != version:
        raise FormatError("CHUNK_FOREIGN_VERSION")
    return int(parts[-1])


# ---------------------------------------------------------------------------------------------
# Self-test against the other vector files


def selftest(vectors_dir: str) -> None:
    stream = json.load(open(os.path.join(vectors_dir, "stream.json"), encoding="utf-8"))
    for case in stream["valid"]:
        item = item_from_ddb(case["item"])
        assert encode_stream(item).hex() == case["hex"], case["name"]
        assert decode_stream(bytes.fromhex(case["hex"])) == item, case["name"]
    for case in stream["invalid"]:
        try:
            decode_stream(bytes.fromhex(case["hex"]))
        except FormatError as e:
            assert e.code == case["code"], (case["name"], e.code)
        else:
            raise AssertionError(case["name"])
    codecs = json.load(open(os.path.join(vectors_dir, "codecs.json"), encoding="utf-8"))
    for case in codecs["digests"]:
        assert f"{xxh3(bytes.fromhex(case['raw_hex'])):016x}" == case["xxh3_64"]
    for case in codecs["seeded_digests"]:
        got = xxh3(bytes.fromhex(case["raw_hex"]), int(case["seed"]))
        assert f"{got:016x}" == case["xxh3_64"]
    for case in codecs["bodies"]:
        if case["codec"] in ("deflate", "zlib", "gzip"):
            raw = bytes.fromhex(case["raw_hex"])
            frame = (
                b"DSZ\x01"
                + bytes([CODEC_IDS[case["codec"]]])
                + len(raw).to_bytes(8, "little")
                + bytes.fromhex(case["body_hex"])
                + xxh3(raw).to_bytes(8, "little")
            )
            assert decompress_frame(frame) == raw, case["name"]
    sizes = json.load(open(os.path.join(vectors_dir, "sizes.json"), encoding="utf-8"))
    for case in sizes["numbers"]:
        assert number_size(case["text"]) == case["size"], case["text"]
    for case in sizes["items"]:
        assert item_size(item_from_ddb(case["item"])) == case["size"], case["name"]
    # Section 2 and 6 examples.
    assert number_size("100.5") == 4 and number_size("1E125") == number_size("1") == 2
    for text, canon in [("1.50", "1.5"), ("15E-1", "1.5"), ("+1.5", "1.5"), ("1E3", "1000"),
                        ("-0.0500", "-0.05"), ("-0", "0"), ("0.000", "0"), (".5", "0.5"), ("5.", "5")]:
        assert Num(text).canonical() == canon, (text, Num(text).canonical())
    assert ulid_text(0, 0) == "0" * 26 and ulid_text(2**48 - 1, 2**80 - 1) == "7" + "Z" * 25
    v = "01HF7YAT00000000000000001A"
    assert ulid_text(parse_ulid(v) >> 80, parse_ulid(v) & (2**80 - 1)) == v
    key = chunk_key({"pk": ("S", "doc#1")}, [("pk", "S")], Layout("table"), v, 0)
    assert key == {"pk": ("S", "doc\\#1#01HF7YAT00000000000000001A#000000")}
    k = chunk_data_bytes({"pk": ("S", "doc")}, [("pk", "S")], Layout("table"), v, ITEM_LIMIT)
    assert k == 409_538, k
    print("selftest: ok", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Vector generation (tests/vectors/chunks.v2.json)

# Deterministic version ids: Unix milliseconds and 80 random bits (given as decimal strings).
T0 = 1_763_683_200_000  # 2025-11-21T00:00:00Z


def pseudo_random_bytes(n: int, seed: int) -> bytes:
    """Deterministic incompressible-looking bytes (XXH3 counter mode)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += xxh3(i.to_bytes(8, "little"), seed).to_bytes(8, "little")
        i += 1
    return bytes(out[:n])


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def fill(t: str, f: str, count: int) -> dict:
    return {t: {"fill": f, "count": count}}


PATTERN = bytes(range(256)).hex()  # 256 distinct bytes, so chunk contents differ


def case_specs() -> list[dict]:
    """The cases: everything but the expected parent and chunks, which split_item computes."""
    pk_s = {"pk": "S"}
    pk_sk = {"pk": "S", "sk": "S"}
    table = {"kind": "table", "key_name": "pk"}
    coll = {"kind": "collection"}

    def opts(i, chunk_item_bytes=2048, item_limit=16384, parent_budget=4096, inline=False, random=None):
        return {
            "version": {"unix_ms": T0 + i, "random": str(random if random is not None else 0x0123456789ABCDEF0123 + i)},
            "codec": "none",
            "chunk_item_bytes": chunk_item_bytes,
            "item_limit": item_limit,
            "parent_budget": parent_budget,
            "inline": inline,
        }

    specs = []
    specs.append(dict(
        name="table-default-sizes-two-chunks",
        key=pk_s, layout=table,
        options=opts(1, chunk_item_bytes=409_600, item_limit=409_600),
        item={"pk": {"S": "doc"}, "title": {"S": "a report"}, "body": fill("B", PATTERN, 1601)},
        about="default item limit and chunk size: pk 'doc' gives k = 409,538 (docs/FORMAT.md section 6 example); "
              "'body' (409,860 bytes) is spilled, 'title' stays; the frame needs 2 chunks",
    ))
    specs.append(dict(
        name="table-second-anchor",
        key=pk_s, layout=table,
        options=opts(40, chunk_item_bytes=2048, item_limit=16384),
        item={"pk": {"S": "blob-64"}, "data": fill("B", PATTERN, 512)},
        about="chunk_item_bytes 2048 and 67 chunks: chunks 0 and 64 are anchors (they carry _da, a copy of _h, and "
              "fill 2048 bytes), every other chunk but the last is 2048 - 11 bytes",
    ))
    specs.append(dict(
        name="table-many-small-chunks",
        key=pk_s, layout=table,
        options=opts(2, chunk_item_bytes=2048, item_limit=16384),
        item={"pk": {"S": "blob-7"}, "data": fill("B", PATTERN, 128), "kind": {"S": "attachment"}},
        about="chunk_item_bytes 2048 (the minimum): k = 2048 - overhead, 17 chunks; every chunk but the last is exactly 2048 bytes",
    ))
    specs.append(dict(
        name="table-exact-multiple-of-k",
        key=pk_s, layout=table,
        options=opts(3, chunk_item_bytes=2048, item_limit=4096),
        item={"pk": {"S": "exact"}, "data": "EXACT"},
        about="the frame length is exactly 3 k: the last chunk is full, n = s / k",
    ))
    specs.append(dict(
        name="table-keys-with-hash-and-backslash",
        key=pk_sk, layout={"kind": "table", "key_name": "ck"},
        options=opts(4, item_limit=4096),
        item={"pk": {"S": "a#b\\c#"}, "sk": {"S": "\\#x\\\\"}, "data": fill("S", "é#\\", 1200)},
        spilled=["data"],
        about="S key parts escaped character by character (backslash doubled, '#' preceded by a backslash); "
              "partition key part, '#', sort key part; chunk table key attribute named 'ck'",
    ))
    specs.append(dict(
        name="collection-keys-with-hash-and-backslash",
        key=pk_sk, layout=coll,
        options=opts(5, item_limit=4096),
        item={"pk": {"S": "user#1\\"}, "sk": {"S": "doc#\\v2#"}, "data": fill("S", "x", 5000)},
        about="item collection: the partition key is copied unchanged, the sort key is the escaped sort key part + '#<ULID>#<seq>'",
    ))
    specs.append(dict(
        name="table-numeric-pk-non-canonical",
        key={"pk": "N"}, layout=table,
        options=opts(6, item_limit=4096),
        item={"pk": {"N": "1.50"}, "data": fill("B", "5a", 5000)},
        about="N key part canonical: '1.50' -> '1.5' in the chunk key",
    ))
    specs.append(dict(
        name="table-numeric-sort-key-exponent",
        key={"pk": "N", "sk": "N"}, layout=table,
        options=opts(7, item_limit=4096),
        item={"pk": {"N": "-0.0500"}, "sk": {"N": "12.500E2"}, "data": fill("B", "a5", 5000)},
        about="N key parts canonical: '-0.0500' -> '-0.05', '12.500E2' -> '1250'",
    ))
    specs.append(dict(
        name="collection-numeric-pk-non-canonical",
        key={"pk": "N", "sk": "S"}, layout=coll,
        options=opts(8, item_limit=4096),
        item={"pk": {"N": "+001.50"}, "sk": {"S": "v"}, "data": fill("B", "c3", 5000)},
        about="item collection: the N partition key is copied as written ('+001.50'); its size (3 bytes) counts in the chunk overhead",
    ))
    specs.append(dict(
        name="table-binary-keys",
        key={"pk": "B", "sk": "B"}, layout=table,
        options=opts(9, item_limit=4096),
        item={"pk": {"B": b64(bytes([0xFB, 0xFF, 0xBF, 0x00]))}, "sk": {"B": b64(b"\xff\xfe")},
              "data": fill("B", "00ff", 2500)},
        about="B key parts are standard base64 with '+', '/' and '=' padding",
    ))
    specs.append(dict(
        name="collection-binary-pk",
        key={"pk": "B", "sk": "S"}, layout=coll,
        options=opts(10, item_limit=4096),
        item={"pk": {"B": b64(bytes([0x00, 0x01, 0xFE, 0xFF, 0x80]))}, "sk": {"S": "ŝ#ḱ"},
              "data": fill("B", "ee", 5000)},
        about="item collection with a B partition key: copied unchanged (raw bytes count in the chunk overhead)",
    ))
    specs.append(dict(
        name="table-spill-some-keep-some",
        key=pk_sk, layout=table,
        options=opts(11, item_limit=16384, parent_budget=4096),
        item={
            "pk": {"S": "order#42"}, "sk": {"S": "v1"},
            "big": fill("S", "b", 9500),
            "mid_b": fill("S", "m", 3000),
            "mid_a": fill("S", "m", 3000),
            "small": fill("S", "s", 900),
            "status": {"S": "open"},
            "n": {"N": "12.50"},
            "flag": {"BOOL": True},
            "tags": {"SS": ["y", "x"]},
        },
        spilled=["big", "mid_a"],
        about="spill by attribute size descending, ties by name: big (9,503), then mid_a before mid_b (both 3,005); "
              "spilling stops once kept size + worst-case manifest <= parent_budget 4096, so mid_b, small and the small "
              "attributes stay on the parent",
    ))
    specs.append(dict(
        name="collection-unicode-names",
        key={"pk": "S", "sk": "S"}, layout=coll,
        options=opts(12, item_limit=8192, parent_budget=4096),
        item={
            "pk": {"S": "ユーザー"}, "sk": {"S": "日記#1"},
            "😀": fill("S", "a", 2800),
            "～": fill("S", "a", 2801),
            "é": fill("S", "é", 1500),
            "e": {"S": "stays"},
            "Ω": {"M": {"😀": {"N": "1"}, "～": {"N": "2"}, "z": {"L": [{"S": "ü"}]}}},
        },
        spilled=["é", "～"],
        about="names compare by UTF-8 bytes: '～' (U+FF5E, ef bd 9e) sorts before '😀' (U+1F600, f0 9f 98 80), the opposite "
              "of UTF-16 order; both attributes cost 2,804 bytes, so the tie goes to '～', which is spilled after 'é' "
              "(3,002) while '😀' stays; map entries of 'Ω' are sorted the same way in the value stream",
    ))
    specs.append(dict(
        name="table-every-type-spilled",
        key=pk_s, layout=table,
        options=opts(13, item_limit=4096, parent_budget=0),
        item={
            "pk": {"S": "types"},
            "s": {"S": ""}, "n": {"N": "-0012.3400E+2"}, "b": {"B": ""}, "t": {"BOOL": True}, "f": {"BOOL": False},
            "z": {"NULL": True}, "l": {"L": [{"S": "a"}, {"N": "1"}, {"L": []}, {"M": {}}]},
            "m": {"M": {"b": {"BS": ["AQ==", "AA=="]}, "a": {"NS": ["10", "9", "1E2"]}, "c": {"SS": ["z", "a", ""]}}},
            "big": fill("B", "11", 4100),
        },
        spilled=["b", "big", "f", "l", "m", "n", "s", "t", "z"],
        about="parent_budget 0: every non-key attribute is spilled; every type in the value stream; number text and set order kept",
    ))
    specs.append(dict(
        name="table-inline-none",
        key=pk_s, layout=table,
        options=opts(14, item_limit=4096, parent_budget=4096, inline=True),
        item={"pk": {"S": "inline"}, "nulls": {"L": [{"NULL": True}] * 2100}},
        about="inline: a list of 2,100 NULLs costs 4,203 bytes in DynamoDB but 2,105 in the value stream, so the uncompressed "
              "frame fits the parent: _ds.p holds it, n = k = 0, no chunks",
    ))
    specs.append(dict(
        name="table-single-short-chunk",
        key=pk_s, layout=table,
        options=opts(15, chunk_item_bytes=65536, item_limit=4096, random=2**80 - 1),
        item={"pk": {"S": "one"}, "data": fill("S", "1", 4100)},
        about="the frame is shorter than k: one chunk, shorter than chunk_item_bytes; random bits all ones",
    ))
    return specs


DECODE_ONLY = [
    ("decode-deflate-table", "deflate", 21, {"pk": "S"}, {"kind": "table", "key_name": "pk"}),
    ("decode-zlib-collection", "zlib", 22, {"pk": "S", "sk": "S"}, {"kind": "collection"}),
    ("decode-gzip-fname-table", "gzip", 23, {"pk": "S", "sk": "S"}, {"kind": "table", "key_name": "id"}),
    ("decode-zlib-inline", "zlib", 24, {"pk": "S"}, {"kind": "table", "key_name": "pk"}),
]


def options_from_json(o: dict, inline_default: bool = False) -> Options:
    version = ulid_text(o["version"]["unix_ms"], int(o["version"]["random"]))
    return Options(
        version=version,
        codec=o["codec"],
        chunk_item_bytes=o["chunk_item_bytes"],
        item_limit=o["item_limit"],
        parent_budget=o["parent_budget"],
        inline=o.get("inline", inline_default),
    )


def tune_exact(spec: dict) -> None:
    """Make the frame of `table-exact-multiple-of-k` exactly 3 k long."""
    o = options_from_json(spec["options"])
    schema = list(spec["key"].items())
    parent = item_from_ddb({"pk": spec["item"]["pk"]})
    k = chunk_data_bytes(parent, schema, Layout.from_json(spec["layout"]), o.version, o.chunk_item_bytes)
    for count in range(3 * k - 100, 3 * k):
        raw = encode_stream({"data": ("B", b"\xab" * count)})
        if len(raw) + 21 == 3 * k:
            spec["item"]["data"] = fill("B", "ab", count)
            return
    raise AssertionError("no exact size")


def generate() -> dict:
    cases = []
    for spec in case_specs():
        if spec["item"].get("data") == "EXACT":
            tune_exact(spec)
        schema = list(spec["key"].items())
        layout = Layout.from_json(spec["layout"])
        o = options_from_json(spec["options"])
        item = item_from_ddb(spec["item"])
        parent, chunks = split_item(item, schema, layout, o)
        assert "_ds" in parent, spec["name"]
        if "spilled" in spec:
            assert sorted(parent["_ds"][1]["a"][1]) == sorted(spec["spilled"]), (spec["name"], parent["_ds"][1]["a"][1])
        assert reassemble(parent, list(reversed(chunks)), schema, layout) == item, spec["name"]
        for seq, c in enumerate(chunks[:-1]):
            # An anchor fills the limit; the others lack its _da (3 + 8 bytes).
            assert item_size(c) == o.chunk_item_bytes - (0 if is_anchor(seq) else 11)
        if chunks:
            assert item_size(chunks[-1]) <= o.chunk_item_bytes
        m = read_manifest(parent)
        spilled = sorted(parent["_ds"][1]["a"][1], key=name_key)
        cases.append({
            "name": spec["name"],
            "key": spec["key"],
            "layout": spec["layout"],
            "options": spec["options"],
            "item": spec["item"],
            "parent": item_to_ddb(parent),
            "chunks": [item_to_ddb(c) for c in chunks],
            "provenance": (
                f"tests/vectors/tools/reference.py (independent Python implementation of docs/FORMAT.md, xxhash "
                f"{xxhash.VERSION}); {spec['about']}. version {o.version}; item size {item_size(item)}; "
                f"spilled {spilled}; parent size {item_size(parent)}; s {m['s']}, r {m['r']}, k {m['k']}, n {m['n']}"
            ),
        })
    for name, codec, i, key, layout_j in DECODE_ONLY:
        schema = list(key.items())
        layout = Layout.from_json(layout_j)
        inline = name.endswith("inline")
        o = {
            "version": {"unix_ms": T0 + i, "random": str(0xFEDCBA9876543210ABCD + i)},
            "codec": codec,
            "chunk_item_bytes": 2048,
            "item_limit": 4096,
            "parent_budget": 4096,
            "inline": inline,
        }
        text = "".join(f"line {j}: the quick brown fox jumps over the lazy dog #{j * 7919 % 1000}\n" for j in range(400))
        item_j = {"pk": {"S": f"compressed-{codec}"}, "note": {"S": "kept on the parent"},
                  "text": {"S": text}, "noise": {"B": b64(pseudo_random_bytes(5000 if not inline else 600, i))}}
        if "sk" in key:
            item_j["sk"] = {"S": "rev#1"}
        item = item_from_ddb(item_j)
        parent, chunks = split_item(item, schema, layout, options_from_json(o))
        m = read_manifest(parent)
        assert (m["p"] is not None) == inline and m["c"] == codec, name
        assert reassemble(parent, chunks, schema, layout) == item, name
        cases.append({
            "name": name,
            "decode_only": True,
            "key": key,
            "layout": layout_j,
            "options": o,
            "item": item_j,
            "parent": item_to_ddb(parent),
            "chunks": [item_to_ddb(c) for c in chunks],
            "provenance": (
                f"tests/vectors/tools/reference.py with Python {sys.version.split()[0]} zlib {zlib.ZLIB_VERSION} "
                f"({codec}{', gzip.GzipFile with FNAME and MTIME set' if codec == 'gzip' else ', level 6'}) inside a dynaslice "
                f"frame; spill policy and chunking as for codec none; checks reading only (compressed bytes differ from "
                f"miniz_oxide's). version {m['v']}; s {m['s']}, r {m['r']}, k {m['k']}, n {m['n']}"
                + ("; inline: the frame is in _ds.p" if inline else "")
            ),
        })
    return {
        "format": "dynaslice-chunk-vectors/2",
        "about": (
            "Expected output of split_item (parent and chunk items, DynamoDB JSON) computed by an independent Python "
            "implementation of docs/FORMAT.md (tests/vectors/tools/reference.py), not by dynaslice. Cases without "
            "decode_only: split_item(item) with these options must give exactly parent and chunks (in seq order), and "
            "reassemble must give item back. Version 2: every 64th chunk (0, 64, ...) is an anchor carrying _da (a copy of "
            "its _h), and k leaves room for it (docs/FORMAT.md section 6, \"Anchors\"). decode_only cases: payloads compressed by Python's zlib/gzip; reassemble "
            "must give item."
        ),
        "cases": cases,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("selftest")
    g = sub.add_parser("generate")
    g.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    vectors_dir = os.path.dirname(here)
    selftest(vectors_dir)
    if args.cmd == "generate":
        doc = generate()
        text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
