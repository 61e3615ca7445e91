// The S3 requests a protocol machine asks for when a table keeps large
// payloads in S3 (the `s3` option; docs/FORMAT.md §5a), sent once with
// @aws-sdk/client-s3, an optional peer dependency loaded on the first S3
// request. The inputs are the machine's, exactly (wasm/src/convert/
// objects.rs: `IfNoneMatch: "*"` and the body's CRC-32 on every write,
// `IfMatch` on every read); this file only reads the answers off, as
// facts the machine decides on.

import { dynasliceError } from '../error.js';

let commands;

/**
 * @aws-sdk/client-s3's command classes, loaded once; OPTIONS_INVALID when
 * the package is not installed.
 */
export async function loadS3() {
  if (commands === undefined) {
    let s3;
    try {
      s3 = await import('@aws-sdk/client-s3');
    } catch (error) {
      throw dynasliceError('OPTIONS_INVALID', `the s3 option needs the package @aws-sdk/client-s3 (npm install @aws-sdk/client-s3): ${error?.message ?? error}`);
    }
    commands = {
      PutObject: s3.PutObjectCommand,
      CreateMultipartUpload: s3.CreateMultipartUploadCommand,
      UploadPart: s3.UploadPartCommand,
      CompleteMultipartUpload: s3.CompleteMultipartUploadCommand,
      AbortMultipartUpload: s3.AbortMultipartUploadCommand,
      HeadObject: s3.HeadObjectCommand,
      GetObject: s3.GetObjectCommand,
      DeleteObject: s3.DeleteObjectCommand,
      ListObjectsV2: s3.ListObjectsV2Command,
      ListMultipartUploads: s3.ListMultipartUploadsCommand,
    };
  }
  return commands;
}

const millis = (date) => (date instanceof Date && !Number.isNaN(date.getTime()) ? date.getTime() : undefined);

/** S3's commands, for send.js. */
export const S3 = {
  async command(operation, input) {
    const Command = (await loadS3())[operation];
    return new Command(input);
  },
  async call(client, command, signal) {
    const output = await client.send(command, { abortSignal: signal });
    // A body that breaks off is a request with no answer, as in the host.
    if (output.Body !== undefined) output.bytes = await output.Body.transformToByteArray();
    return output;
  },
  answer(operation, output) {
    switch (operation) {
      case 'CreateMultipartUpload':
        return { uploadId: output.UploadId };
      case 'HeadObject':
        return { etag: output.ETag, len: output.ContentLength };
      case 'GetObject':
        return { etag: output.ETag, bytes: output.bytes ?? new Uint8Array(0) };
      case 'ListObjectsV2':
        return {
          objects: (output.Contents ?? []).map((o) => ({ key: o.Key, modifiedMs: millis(o.LastModified) })),
          next: output.IsTruncated ? output.NextContinuationToken : undefined,
        };
      case 'ListMultipartUploads':
        return {
          uploads: (output.Uploads ?? []).map((u) => ({ key: u.Key, uploadId: u.UploadId, initiatedMs: millis(u.Initiated) })),
          nextKey: output.IsTruncated ? output.NextKeyMarker : undefined,
          nextUploadId: output.IsTruncated ? output.NextUploadIdMarker : undefined,
        };
      default:
        return { etag: output.ETag };
    }
  },
};
