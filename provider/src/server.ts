// Serves the provider the way go-plugin expects: a gRPC server on loopback, mutual TLS when the
// host passes its certificate in PLUGIN_CLIENT_CERT (AutoMTLS), and one handshake line on stdout
// `core-version|app-protocol|network|address|protocol|server-cert` that tells OpenTofu where to dial.
import * as grpc from "@grpc/grpc-js";
import { fromJSON } from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { selfSignedCertificate } from "./cert.ts";
import { HEALTH_PROTO, PLUGIN_PROTO, PROTOCOL_PROTO } from "./protocol.proto.ts";
import type { ProviderHandlers } from "./provider.ts";

/** Set by OpenTofu in every plugin it launches; a binary started by hand says what it is instead. */
export const MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE";
export const MAGIC_COOKIE_VALUE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

const CORE_PROTOCOL_VERSION = 1;
const PLUGIN_PROTOCOL_VERSION = 6;

const LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

// biome-ignore lint/suspicious/noExplicitAny: the package object proto-loader builds is untyped
function load(text: string): any {
  const root = protobuf.parse(text, { keepCase: true }).root;
  return grpc.loadPackageDefinition(fromJSON(root.toJSON(), LOADER_OPTIONS));
}

export interface RunningServer {
  handshake: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts the gRPC server; `onShutdown` runs when the host asks the plugin to exit. */
export async function serve(
  handlers: ProviderHandlers,
  options: { clientCertPem?: string | null; onShutdown?: () => void } = {},
): Promise<RunningServer> {
  const server = new grpc.Server({
    "grpc.max_receive_message_length": 256 << 20,
    "grpc.max_send_message_length": 256 << 20,
  });
  const tfplugin6 = load(PROTOCOL_PROTO).tfplugin6;
  const plugin = load(PLUGIN_PROTO).plugin;
  const health = load(HEALTH_PROTO).grpc.health.v1;

  const unary = Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        handler(call.request as Record<string, unknown>).then(
          (response) => callback(null, response),
          (thrown: unknown) =>
            callback({
              code: grpc.status.INTERNAL,
              details: thrown instanceof Error ? thrown.message : String(thrown),
            }),
        );
      },
    ]),
  );
  server.addService(tfplugin6.Provider.service, unary);

  const stop = () =>
    new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
    });
  server.addService(plugin.GRPCController.service, {
    Shutdown: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
      callback(null, {});
      setImmediate(() => options.onShutdown?.());
    },
  });
  server.addService(health.Health.service, {
    Check: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, { status: "SERVING" }),
  });

  let credentials = grpc.ServerCredentials.createInsecure();
  let certField = "";
  if (options.clientCertPem) {
    const own = selfSignedCertificate();
    credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(options.clientCertPem),
      [{ private_key: Buffer.from(own.keyPem), cert_chain: Buffer.from(own.certPem) }],
      true,
    );
    // go-plugin reads the certificate as unpadded standard base64 of its DER.
    certField = own.certDer.toString("base64").replace(/=+$/, "");
  }
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", credentials, (failure, bound) =>
      failure ? reject(failure) : resolve(bound),
    );
  });
  const handshake = [
    CORE_PROTOCOL_VERSION,
    PLUGIN_PROTOCOL_VERSION,
    "tcp",
    `127.0.0.1:${port}`,
    "grpc",
    certField,
  ].join("|");
  return { handshake, port, stop };
}
