// The protocol layer on its own, over real gRPC with mutual TLS as OpenTofu speaks it: the
// handshake line of the bundled executable, msgpack values with unknowns, and diagnostics that
// carry attribute paths.
import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { fromJSON } from "@grpc/proto-loader";
import { decode, ExtData } from "@msgpack/msgpack";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../src/cert.ts";
import { PROTOCOL_PROTO } from "../src/protocol.proto.ts";
import { createProvider } from "../src/provider.ts";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, type RunningServer, serve } from "../src/server.ts";
import { decodeValue, encodeValue, UNKNOWN } from "../src/values.ts";
import { resourcesOf } from "../src/versions.ts";
import { buildDevProvider } from "./tofu.ts";

// biome-ignore lint/suspicious/noExplicitAny: a dynamic gRPC client
type AnyClient = any;

function providerClient(
  address: string,
  serverCertDer: Buffer,
  own: ReturnType<typeof selfSignedCertificate>,
) {
  const root = protobuf.parse(PROTOCOL_PROTO, { keepCase: true }).root;
  const definition = grpc.loadPackageDefinition(
    fromJSON(root.toJSON(), { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true }),
  ) as AnyClient;
  const serverPem = new X509Certificate(serverCertDer).toString();
  const credentials = grpc.credentials.createSsl(
    Buffer.from(serverPem),
    Buffer.from(own.keyPem),
    Buffer.from(own.certPem),
  );
  return new definition.tfplugin6.Provider(address, credentials, {
    "grpc.ssl_target_name_override": "localhost",
  }) as AnyClient;
}

const call = (client: AnyClient, method: string, request: object) =>
  new Promise<AnyClient>((resolve, reject) => {
    client[method](request, (failure: Error | null, response: unknown) =>
      failure ? reject(failure) : resolve(response),
    );
  });

/** Parses a handshake line into address and server certificate. */
function parseHandshake(line: string) {
  const [core, version, network, address, protocol, cert] = line.trim().split("|");
  return {
    core,
    version,
    network,
    address: address ?? "",
    protocol,
    cert: Buffer.from(cert ?? "", "base64"),
  };
}

describe("the bundled provider executable", () => {
  let binary = "";
  beforeAll(async () => {
    ({ binary } = await buildDevProvider());
  });

  it("prints go-plugin's handshake line and serves protocol 6 over mutual TLS", async () => {
    const clientCert = selfSignedCertificate();
    const child = spawn(binary, [], {
      env: { ...process.env, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_CLIENT_CERT: clientCert.certPem },
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk) => {
          out += chunk;
          if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      const handshake = parseHandshake(line);
      expect(handshake).toMatchObject({ core: "1", version: "6", network: "tcp", protocol: "grpc" });
      expect(handshake.address).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(line.split("|")[5]).not.toContain("="); // unpadded base64, as go-plugin decodes it
      const cert = new X509Certificate(handshake.cert);
      expect(cert.checkHost("localhost")).toBe("localhost");
      expect(cert.verify(cert.publicKey)).toBe(true);

      const client = providerClient(handshake.address, handshake.cert, clientCert);
      const metadata = await call(client, "GetMetadata", {});
      expect(metadata.resources.map((r: { type_name: string }) => r.type_name).sort()).toEqual([
        "svc_app",
        "svc_sre_alert_webhook",
      ]);
      client.close();

      // A client without the certificate OpenTofu passed is refused.
      const stranger = providerClient(handshake.address, handshake.cert, selfSignedCertificate());
      await expect(call(stranger, "GetMetadata", {})).rejects.toThrow();
      stranger.close();
    } finally {
      child.kill("SIGTERM");
    }
  });

  it("says what it is when started by hand", async () => {
    const env = { ...process.env };
    delete env[MAGIC_COOKIE_KEY];
    const child = spawn(binary, [], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("is a plugin for OpenTofu and Terraform");
  });
});

describe("the self-signed certificate", () => {
  it("is valid DER every time (its random serial is minimally encoded)", () => {
    for (let i = 0; i < 300; i++) {
      const own = selfSignedCertificate();
      const cert = new X509Certificate(own.certPem);
      expect(cert.ca).toBe(true);
      expect(cert.checkHost("localhost")).toBe("localhost");
    }
  });
});

describe("msgpack values", () => {
  it("encodes an unknown value as extension type 0 and reads extension 0 and 12 as unknown", () => {
    const bytes = encodeValue({ id: UNKNOWN, name: "x", tags: ["a", UNKNOWN], n: null });
    const raw = decode(bytes, { extensionCodec: undefined }) as Record<string, unknown>;
    expect(raw.id).toBeInstanceOf(ExtData);
    expect((raw.id as ExtData).type).toBe(0);
    expect(raw.name).toBe("x");
    expect(decodeValue({ msgpack: bytes })).toEqual({
      id: UNKNOWN,
      name: "x",
      tags: ["a", UNKNOWN],
      n: null,
    });
    // fixext1 type 12: an unknown value with refinements (e.g. "not null"), as newer cores send.
    expect(decodeValue({ msgpack: Buffer.from([0xd4, 0x0c, 0x00]) })).toBe(UNKNOWN);
    expect(decodeValue({ msgpack: Buffer.alloc(0) })).toBeNull();
    expect(decodeValue({ json: Buffer.from('{"a":1}') })).toEqual({ a: 1 });
  });
});

describe("RPCs and diagnostics", () => {
  let server: RunningServer;
  let client: AnyClient;
  const own = selfSignedCertificate();

  beforeAll(async () => {
    server = await serve(createProvider(resourcesOf("0.1.27")), { clientCertPem: own.certPem });
    const handshake = parseHandshake(server.handshake);
    client = providerClient(handshake.address, handshake.cert, own);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });

  const dynamic = (value: Parameters<typeof encodeValue>[0]) => ({ msgpack: encodeValue(value) });
  const webhookConfig = (values: Record<string, unknown>) => ({
    source: "alertmanager",
    app_name: null,
    auto_investigate: null,
    classify_mode: null,
    classify_batch_window_seconds: null,
    classify_bucket_by: null,
    classify_critical_bypass: null,
    integration: null,
    platform_webhook_id: null,
    platform_webhook_url: null,
    id: null,
    trigger_url: null,
    ...values,
  });

  it("describes both resources with their modes and sensitive attributes", async () => {
    const schema = await call(client, "GetProviderSchema", {});
    const attrs = schema.resource_schemas.svc_sre_alert_webhook.block.attributes;
    const trigger = attrs.find((a: { name: string }) => a.name === "trigger_url");
    expect(trigger).toMatchObject({ computed: true, sensitive: true, optional: false });
    expect(JSON.parse(Buffer.from(trigger.type).toString())).toBe("string");
    const apiKey = schema.provider.block.attributes.find((a: { name: string }) => a.name === "api_key");
    expect(apiKey.sensitive).toBe(true);
    const assignments = schema.resource_schemas.svc_app.block.attributes.find(
      (a: { name: string }) => a.name === "workflow_assignments",
    );
    expect(assignments.nested_type.nesting).toBe("LIST");
  });

  it("puts a validation error on the attribute's path", async () => {
    const response = await call(client, "ValidateResourceConfig", {
      type_name: "svc_sre_alert_webhook",
      config: dynamic(webhookConfig({ classify_batch_window_seconds: 301 })),
    });
    expect(response.diagnostics).toEqual([
      expect.objectContaining({
        severity: "ERROR",
        summary: "Invalid classify_batch_window_seconds",
        attribute: {
          steps: [{ attribute_name: "classify_batch_window_seconds", selector: "attribute_name" }],
        },
      }),
    ]);
  });

  it("checks a number OpenTofu sends as a string because no float64 holds it exactly", async () => {
    for (const written of ["400.0000000000000000001", "60.00000000000000000000001"]) {
      const response = await call(client, "ValidateResourceConfig", {
        type_name: "svc_sre_alert_webhook",
        config: dynamic(webhookConfig({ classify_batch_window_seconds: written })),
      });
      expect(response.diagnostics).toEqual([
        expect.objectContaining({
          severity: "ERROR",
          summary: "Invalid classify_batch_window_seconds",
          detail: `classify_batch_window_seconds must be a whole number of seconds from 15 to 300; got ${written}.`,
        }),
      ]);
    }
  });

  it("steps into list elements in a path", async () => {
    const response = await call(client, "ValidateResourceConfig", {
      type_name: "svc_app",
      config: dynamic({
        app_name: "sre",
        integrations: ["prom", "prom"],
        workflow_assignments: null,
      }),
    });
    expect(response.diagnostics[0].attribute.steps).toEqual([
      { attribute_name: "integrations", selector: "attribute_name" },
      { element_key_int: 1, selector: "element_key_int" },
    ]);
  });

  it("accepts unknown values in a configuration and leaves them to apply", async () => {
    const response = await call(client, "ValidateResourceConfig", {
      type_name: "svc_sre_alert_webhook",
      config: dynamic(webhookConfig({ classify_batch_window_seconds: UNKNOWN, classify_mode: UNKNOWN })),
    });
    expect(response.diagnostics).toEqual([]);
  });

  it("checks provider settings on their attributes", async () => {
    const response = await call(client, "ValidateProviderConfig", {
      config: dynamic({ workspace_id: "not-a-uuid", service_url: "ftp://x", api_key: null }),
    });
    const paths = response.diagnostics.map((d: AnyClient) => d.attribute.steps[0].attribute_name);
    expect(paths).toEqual(["workspace_id", "service_url"]);
    const configured = await call(client, "ConfigureProvider", {
      config: dynamic({ workspace_id: null, service_url: null, api_key: null }),
    });
    const missing = configured.diagnostics.find(
      (d: AnyClient) => d.summary === "Missing provider setting workspace_id",
    );
    expect(missing?.attribute.steps[0].attribute_name).toBe("workspace_id");
  });

  it("plans computed attributes as unknown on create, with the defaults filled in", async () => {
    await call(client, "ConfigureProvider", {
      config: dynamic({
        workspace_id: "6f1c1f8e-8a57-4a39-9d7b-6f0d5d1f2a10",
        service_url: "http://vigil.test",
        api_key: null,
      }),
    });
    const config = webhookConfig({});
    const response = await call(client, "PlanResourceChange", {
      type_name: "svc_sre_alert_webhook",
      prior_state: dynamic(null),
      proposed_new_state: dynamic(config),
      config: dynamic(config),
    });
    expect(response.diagnostics).toEqual([]);
    const planned = decodeValue(response.planned_state) as Record<string, unknown>;
    expect(planned).toMatchObject({
      app_name: "sre",
      classify_mode: "batch",
      integration: "",
      id: UNKNOWN,
      trigger_url: UNKNOWN,
    });
  });

  it("answers an unknown resource type with a diagnostic, not a failed call", async () => {
    const response = await call(client, "ValidateResourceConfig", {
      type_name: "svc_nope",
      config: dynamic({}),
    });
    expect(response.diagnostics[0].detail).toContain('no resource type "svc_nope"');
  });
});
