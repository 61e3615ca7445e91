// splitStream: the streaming splitter over the sources JavaScript has for
// large payloads. Each chunk goes to `onChunk` (awaited, so a slow upload
// holds the reading back) before more is read: memory stays within a chunk
// and the source's own buffer, whatever the payload's size.

/** Yields the Uint8Arrays of a Blob, a ReadableStream or an async iterable. */
export async function* bytesOf(source) {
  if (typeof Blob !== 'undefined' && source instanceof Blob) source = source.stream();
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    const reader = source.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield bytes(value);
      }
    } finally {
      reader.releaseLock();
    }
  }
  if (source == null || typeof source[Symbol.asyncIterator] !== 'function') {
    throw new TypeError('splitStream: the source must be a Blob, a ReadableStream or an async iterable of Uint8Array');
  }
  for await (const piece of source) yield bytes(piece);
}

/** A piece as it is, if it is bytes: the Splitter would read anything else as zeros or nothing. */
function bytes(piece) {
  if (!(piece instanceof Uint8Array)) {
    throw new TypeError('splitStream: the source must yield Uint8Array pieces (Node streams: no encoding set)');
  }
  return piece;
}

/** Binds splitStream to a build's Splitter class. */
export function splitStreamWith(Splitter) {
  /**
   * Splits `source` as the binary attribute `options.attribute` of `item`:
   * exactly `options.size` bytes (a Blob's size by default), or, with no
   * size, as many as the source yields (a Node stream, a ReadableStream,
   * a generator), recorded when it ends.
   * @returns the Splitter's finish() result; its `chunks` (the last ones)
   * were already passed to `onChunk`, like every chunk before them.
   */
  return async function splitStream(source, item, options) {
    const { onChunk, onProgress, ...rest } = options;
    const size = rest.size ?? source?.size;
    const splitter = new Splitter(item, { ...rest, size });
    try {
      let chunks = 0;
      for await (const piece of bytesOf(source)) {
        for (const chunk of splitter.push(piece)) {
          chunks += 1;
          await onChunk?.(chunk);
        }
        onProgress?.({ bytesRead: splitter.received, totalBytes: size, chunks });
      }
      // A stream of unknown length learns its size here.
      const read = splitter.received;
      const result = splitter.finish();
      for (const chunk of result.chunks) await onChunk?.(chunk);
      onProgress?.({ bytesRead: read, totalBytes: read, chunks: chunks + result.chunks.length });
      return result;
    } finally {
      splitter.free();
    }
  };
}
