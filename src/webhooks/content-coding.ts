// Senders that compress (Content-Encoding: gzip, deflate or br) are read like any other: the body
// is decoded before it is recorded and parsed, and never grows past the webhook body limit, so a
// small compressed body cannot expand into memory (a decompression bomb answers 413).
import { promisify } from "node:util";
import { brotliDecompress, inflate, inflateRaw, unzip, type ZlibOptions } from "node:zlib";
import { AppError } from "../core/errors.ts";

type Decoder = (body: Buffer, options: ZlibOptions) => Promise<Buffer>;

const gzip: Decoder = promisify(unzip);
const zlibOrRaw = promisify(inflate);
const raw = promisify(inflateRaw);
// "deflate" means the zlib format (RFC 9110), but some senders send a bare deflate stream.
const deflate: Decoder = (body, options) => zlibOrRaw(body, options).catch(() => raw(body, options));

const DECODERS = new Map<string, Decoder>([
  ["gzip", gzip],
  ["x-gzip", gzip],
  ["deflate", deflate],
  ["br", promisify(brotliDecompress)],
]);

export type DecodedBody = { body: Buffer; decoded: boolean };

/**
 * The body as the sender meant it. An encoding Vigil does not know, or bytes that do not decode,
 * are kept as received: the delivery is still recorded, and the parser's error says what it saw.
 */
export async function decodeContent(
  body: Buffer,
  contentEncoding: string | undefined,
  limitBytes: number,
): Promise<DecodedBody> {
  // Codings listed in the order they were applied: undo them from the last.
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0 || !codings.every((coding) => DECODERS.has(coding))) {
    return { body, decoded: false };
  }
  let decoded = body;
  try {
    for (const coding of codings.reverse()) {
      decoded = await (DECODERS.get(coding) as Decoder)(decoded, { maxOutputLength: limitBytes });
    }
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new AppError(
        "PAYLOAD_TOO_LARGE",
        `request body is larger than the limit of ${limitBytes} bytes once decoded`,
        {},
        413,
      );
    }
    return { body, decoded: false };
  }
  return { body: decoded, decoded: true };
}
