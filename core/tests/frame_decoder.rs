//! The incremental frame decoder against the whole one: the same bytes out
//! of every codec however the frame is cut and however small the output
//! buffer, the same verdict on damaged frames, and never a panic.

mod common;

use common::generate;
use dynaslice_core::codec::{Codec, CodecError, Compression, FrameDecoder, compress, decompress};
use proptest::prelude::*;

const LIMIT: usize = 64 << 20;

/// Decodes `frame` fed in pieces of `piece` bytes, into an output buffer of
/// `out` bytes.
fn decode(frame: &[u8], piece: usize, out: usize) -> Result<Vec<u8>, CodecError> {
    let mut decoder = FrameDecoder::new(LIMIT);
    let mut buffer = vec![0u8; out];
    let mut raw = Vec::new();
    let pieces: Vec<&[u8]> = frame.chunks(piece.max(1)).collect();
    for (i, part) in pieces.iter().enumerate() {
        decoder.feed(part, i + 1 == pieces.len())?;
        loop {
            let n = decoder.decode(&mut buffer)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buffer[..n]);
        }
    }
    if frame.is_empty() {
        decoder.feed(&[], true)?;
    }
    let digest = decoder.finish()?;
    assert_eq!(digest, dynaslice_core::digest::digest(&raw));
    Ok(raw)
}

fn frames(raw: &[u8]) -> Vec<(Codec, Vec<u8>)> {
    Codec::ALL
        .into_iter()
        .map(|codec| (codec, compress(raw, Compression::new(codec)).unwrap()))
        .collect()
}

#[test]
fn every_codec_decodes_in_any_pieces_into_any_buffer() {
    for raw in [
        Vec::new(),
        b"x".to_vec(),
        generate::bulk(1, 300_000, true),
        generate::bulk(2, 200_000, false),
        vec![0; 1_000_000],
    ] {
        for (codec, frame) in frames(&raw) {
            for (piece, out) in [
                (1, 1),
                (7, 3),
                (13, 100_000),
                (4096, 1),
                (frame.len(), 1 << 16),
            ] {
                // One-byte pieces of a megabyte take long in a debug build.
                if piece * 20_000 < frame.len() || out * 50_000 < raw.len() {
                    continue;
                }
                let got = decode(&frame, piece, out).unwrap_or_else(|e| {
                    panic!(
                        "{codec}, {} raw bytes, pieces {piece}, out {out}: {e}",
                        raw.len()
                    )
                });
                assert!(got == raw, "{codec}, pieces {piece}, out {out}");
            }
        }
    }
}

#[test]
fn gzip_headers_with_every_optional_field_decode_in_pieces() {
    let raw = generate::bulk(3, 50_000, true);
    let frame = compress(&raw, Compression::new(Codec::Gzip)).unwrap();
    // FTEXT, FHCRC, FEXTRA, FNAME and FCOMMENT, inserted into the plain header.
    let (header, rest) = frame.split_at(13 + 10);
    let mut patched = header.to_vec();
    patched[13 + 3] = 0x1f;
    patched.extend_from_slice(&[3, 0, b'a', b'b', b'c']);
    patched.extend_from_slice(b"name.txt\0a comment\0");
    patched.extend_from_slice(&[0xaa, 0xbb]);
    patched.extend_from_slice(rest);
    assert_eq!(decompress(&patched, LIMIT).unwrap(), raw);
    for piece in [1, 2, 5, 1000] {
        assert_eq!(
            decode(&patched, piece, 4096).unwrap(),
            raw,
            "pieces {piece}"
        );
    }
}

#[test]
fn a_body_longer_than_recorded_is_stopped_at_the_recorded_length() {
    let raw = generate::bulk(4, 100_000, true);
    for (codec, mut frame) in frames(&raw) {
        // Record 10 bytes fewer than the body holds.
        frame[5..13].copy_from_slice(&(raw.len() as u64 - 10).to_le_bytes());
        let mut decoder = FrameDecoder::new(LIMIT);
        decoder.feed(&frame, true).unwrap();
        let mut out = vec![0u8; 4096];
        let mut given = 0u64;
        let error = loop {
            match decoder.decode(&mut out) {
                Ok(0) => break decoder.finish().unwrap_err(),
                Ok(n) => given += n as u64,
                Err(e) => break e,
            }
        };
        assert!(
            given <= raw.len() as u64 - 10,
            "{codec}: {given} bytes given"
        );
        let expected = decompress(&frame, LIMIT).unwrap_err();
        assert_eq!(error.code(), expected.code(), "{codec}: {error}");
        assert_eq!(error.code(), "LENGTH_MISMATCH", "{codec}");
    }
}

#[test]
fn shortened_and_extended_frames_fail_as_the_whole_decoder_fails() {
    let raw = generate::bulk(5, 80_000, true);
    for (codec, frame) in frames(&raw) {
        let body_end = frame.len() - 8;
        let trailer = &frame[body_end..];
        let mut cases = vec![
            ("body cut", [&frame[..body_end - 3], trailer].concat()),
            (
                "body padded",
                [&frame[..body_end], &[0, 1, 2], trailer].concat(),
            ),
            ("trailer cut", frame[..frame.len() - 1].to_vec()),
            ("header only", frame[..13].to_vec()),
        ];
        let mut longer = frame.clone();
        longer[5..13].copy_from_slice(&(raw.len() as u64 + 1).to_le_bytes());
        cases.push(("recorded longer", longer));
        for (name, case) in cases {
            let whole = decompress(&case, LIMIT).unwrap_err();
            for piece in [1000, case.len().max(1)] {
                let streamed = decode(&case, piece, 1000).unwrap_err();
                assert_eq!(
                    streamed.code(),
                    whole.code(),
                    "{codec} {name}: {streamed} / {whole}"
                );
            }
        }
    }
}

#[test]
fn snappy_is_held_within_the_limit() {
    let raw = vec![7u8; 100_000];
    let frame = compress(&raw, Compression::new(Codec::Snappy)).unwrap();
    let mut decoder = FrameDecoder::new(99_999);
    decoder.feed(&frame, true).unwrap();
    let error = decoder.decode(&mut [0; 10]).unwrap_err();
    assert_eq!(error.code(), "DECOMPRESS_LIMIT");
    // Nothing comes out before the last piece: raw snappy decodes whole.
    let mut decoder = FrameDecoder::new(LIMIT);
    decoder.feed(&frame[..frame.len() - 1], false).unwrap();
    assert_eq!(decoder.decode(&mut [0; 10]).unwrap(), 0);
}

#[test]
fn zstd_windows_beyond_8_mib_are_held_to_the_limit() {
    // A frame header asking for a 64 MiB window (window descriptor 0x30:
    // exponent 16, so 2^(10+16)) over 16 MiB of content.
    let mut frame = Vec::from(*b"DSZ\x01\x05");
    frame.extend_from_slice(&(16u64 << 20).to_le_bytes());
    frame.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x80]);
    frame.extend_from_slice(&[1, 0, 0]); // an empty raw last block
    frame.extend_from_slice(&0u64.to_le_bytes());
    let mut decoder = FrameDecoder::new(8 << 20);
    decoder.feed(&frame, true).unwrap();
    assert_eq!(
        decoder.decode(&mut [0; 10]).unwrap_err().code(),
        "CODEC_CORRUPT"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any frame, damaged or not, cut anywhere: the incremental decoder
    /// agrees with the whole one, bytes and verdict, and never panics.
    #[test]
    fn agrees_with_the_whole_decoder(
        seed in any::<u64>(),
        len in 0usize..40_000,
        compressible in any::<bool>(),
        codec in 0usize..6,
        piece in 1usize..5000,
        out in 1usize..5000,
        damage in proptest::option::of((any::<prop::sample::Index>(), 1u8..=255)),
    ) {
        let raw = generate::bulk(seed, len, compressible);
        let mut frame = compress(&raw, Compression::new(Codec::ALL[codec])).unwrap();
        if let Some((at, flip)) = damage {
            let at = at.index(frame.len());
            frame[at] ^= flip;
        }
        match (decompress(&frame, LIMIT), decode(&frame, piece, out)) {
            (Ok(whole), Ok(streamed)) => prop_assert!(whole == streamed),
            // A damaged raw length: the whole decoder refuses to allocate
            // it; the streaming one allocates nothing for it and finds the
            // body shorter.
            (Err(CodecError::TooLarge { .. }), Err(_)) => {}
            (Err(whole), Err(streamed)) => {
                // Damage the whole decoder finds past the recorded length
                // stops the streaming one at that length first.
                let either = |e: &CodecError| ["LENGTH_MISMATCH", "CODEC_CORRUPT"].contains(&e.code().as_str());
                prop_assert!(
                    whole.code() == streamed.code() || (either(&whole) && either(&streamed)),
                    "{} / {}", whole, streamed
                );
            }
            (whole, streamed) => prop_assert!(false, "{:?} but {:?}", whole.map(|r| r.len()), streamed.map(|r| r.len())),
        }
    }
}
