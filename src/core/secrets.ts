// Secrets the API must show again (trigger URLs, integration credentials) are kept encrypted at rest
// with AES-256-GCM under a key derived from SECRET_KEY. The embedded default generates one into
// DATA_DIR on first start; PostgreSQL deployments must set SECRET_KEY so that replicas agree.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirectory } from "./make-directory.ts";

export interface Secrets {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

const VERSION = "v1";

export function createSecrets(secretKey: string): Secrets {
  const key = createHash("sha256").update(secretKey, "utf8").digest();
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        body.toString("base64url"),
      ].join(".");
    },
    decrypt(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("not a sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}

/** SECRET_KEY, or the key kept in DATA_DIR (created with mode 0600 on first start). */
export function resolveSecretKey(secretKey: string | null, dataDir: string): string {
  if (secretKey) return secretKey;
  const path = join(dataDir, "secret.key");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  makeDirectory(dataDir, "DATA_DIR");
  const generated = randomBytes(32).toString("base64url");
  writeFileSync(path, `${generated}\n`, { mode: 0o600, flag: "wx" });
  return generated;
}
