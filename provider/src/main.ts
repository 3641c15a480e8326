// terraform-provider-svc: started by OpenTofu, never by hand. The bundle's version is fixed at
// build time (provider/scripts/build.ts); run from source it is the latest.
import { createProvider } from "./provider.ts";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, serve } from "./server.ts";
import { LATEST_VERSION, resourcesOf } from "./versions.ts";

declare const __PROVIDER_VERSION__: string | undefined;
const version = typeof __PROVIDER_VERSION__ === "string" ? __PROVIDER_VERSION__ : LATEST_VERSION;

async function main() {
  if (process.env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    process.stderr.write(
      `terraform-provider-svc ${version} is a plugin for OpenTofu and Terraform; it is started by them, not run directly.\n`,
    );
    process.exit(1);
  }
  const exit = () => {
    server.stop().finally(() => process.exit(0));
  };
  const server = await serve(createProvider(resourcesOf(version)), {
    clientCertPem: process.env.PLUGIN_CLIENT_CERT ?? null,
    onShutdown: exit,
  });
  process.stdout.write(`${server.handshake}\n`);
  // The host ends the plugin with a Shutdown call or by closing stdin / a signal.
  process.on("SIGTERM", exit);
  process.on("SIGINT", () => {}); // OpenTofu forwards Ctrl-C to plugins; it stops them itself.
}

main().catch((thrown: unknown) => {
  process.stderr.write(
    `terraform-provider-svc: ${thrown instanceof Error ? thrown.stack : String(thrown)}\n`,
  );
  process.exit(1);
});
