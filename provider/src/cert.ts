// A throw-away self-signed certificate for go-plugin's AutoMTLS: OpenTofu trusts exactly the
// certificate the handshake line carries and checks it for the name "localhost". Node can sign but
// not build X.509, so the few DER structures are encoded here (ECDSA P-256: key generation is instant).
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const octets = (body: Buffer) => tlv(0x04, body);

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, "ascii"));
}

const extension = (id: string, critical: boolean, value: Buffer) =>
  critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));

const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

export interface SelfSigned {
  certDer: Buffer;
  certPem: string;
  keyPem: string;
}

/** A certificate for "localhost", usable for server and client auth, valid from a minute ago for a year. */
export function selfSignedCertificate(now = new Date()): SelfSigned {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const serial = randomBytes(16);
  // A positive INTEGER in minimal DER: top bit clear (not negative), first byte not zero (no padding).
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  const name = seq(set(seq(oid("2.5.4.10"), utf8("Vigil"))), set(seq(oid("2.5.4.3"), utf8("localhost"))));
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + 365 * 24 * 3600_000);
  const extensions = seq(
    extension("2.5.29.19", true, seq(bool(true))), // basicConstraints: CA (go-plugin's own certs are)
    // keyUsage: digitalSignature, keyEncipherment, keyCertSign
    extension("2.5.29.15", true, tlv(0x03, Buffer.from([0x02, 0xa4]))),
    extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"), oid("1.3.6.1.5.5.7.3.2"))), // server, client auth
    extension("2.5.29.17", false, seq(tlv(0x82, Buffer.from("localhost", "ascii")))), // subjectAltName
  );
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // version 3
    tlv(0x02, serial),
    ECDSA_SHA256,
    name,
    seq(utcTime(notBefore), utcTime(notAfter)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, extensions),
  );
  const signature = sign("sha256", tbs, privateKey);
  const certDer = seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const base64 = certDer.toString("base64").replace(/(.{64})/g, "$1\n");
  return {
    certDer,
    certPem: `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`,
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
