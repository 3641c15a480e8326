// The provider's RPC handlers: decode the request's DynamicValues, call the resource, encode the
// answer. Every failure comes back as diagnostics; a handler never fails the RPC itself.
import type { Settings } from "./client.ts";
import { type Diagnostic, diagnosticsOf, protoDiagnostic, protoPath } from "./diagnostics.ts";
import type { Resource, ResourceContext } from "./resource.ts";
import { protoSchema } from "./schema.ts";
import { clientFor, PROVIDER_SCHEMA, resolveSettings, validateSettings } from "./settings.ts";
import { asObject, decodeValue, encodeValue, type ObjectValue, type Value } from "./values.ts";

type Dynamic = { msgpack?: Uint8Array | null; json?: Uint8Array | null } | null | undefined;
// biome-ignore lint/suspicious/noExplicitAny: protocol requests are decoded by proto-loader
type Request = Record<string, any>;

export interface ProviderHandlers {
  [method: string]: (request: Request) => Promise<Record<string, unknown>>;
}

const diagnosticsField = (diagnostics: Diagnostic[]) => diagnostics.map(protoDiagnostic);
const dynamic = (value: Value) => ({ msgpack: encodeValue(value) });

/** The handlers of one provider process offering `resources`. */
export function createProvider(resources: Resource[]): ProviderHandlers {
  const byName = new Map(resources.map((resource) => [resource.typeName, resource]));
  let settings: Settings | null = null;
  // Aborted by StopProvider (OpenTofu sends it on Ctrl-C): requests and polls in flight end at once
  // with a diagnostic, and later ones are refused, as the stop holds for the rest of the process.
  const stop = new AbortController();

  /** The context of one request; its warnings join the request's answer. */
  function contextFor(warnings: Diagnostic[]): ResourceContext {
    const ctx: ResourceContext = {
      get settings() {
        if (!settings) throw new Error("the provider is not configured");
        return settings;
      },
      client: () => clientFor(ctx.settings, stop.signal),
      warn: (diagnostic) => warnings.push(diagnostic),
    };
    return ctx;
  }

  function resourceOf(typeName: string): Resource {
    const resource = byName.get(typeName);
    if (!resource) {
      throw new Error(
        `This build of the provider has no resource type "${typeName}" (it offers ${[...byName.keys()].join(", ")}).`,
      );
    }
    return resource;
  }

  /** Runs `body`, turning anything it throws into diagnostics next to `fallback`'s fields. */
  async function guarded(
    body: () => Promise<Record<string, unknown>> | Record<string, unknown>,
    fallback: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    try {
      return await body();
    } catch (thrown) {
      return { ...fallback, diagnostics: diagnosticsField(diagnosticsOf(thrown)) };
    }
  }

  const objectOf = (value: Dynamic) => asObject(decodeValue(value));

  return {
    async GetMetadata() {
      return {
        server_capabilities: { plan_destroy: false, get_provider_schema_optional: false },
        resources: [...byName.keys()].map((type_name) => ({ type_name })),
        diagnostics: [],
      };
    },

    async GetProviderSchema() {
      return {
        provider: protoSchema(PROVIDER_SCHEMA),
        resource_schemas: Object.fromEntries(resources.map((r) => [r.typeName, protoSchema(r.schema)])),
        data_source_schemas: {},
        server_capabilities: { plan_destroy: false, get_provider_schema_optional: false },
        diagnostics: [],
      };
    },

    async ValidateProviderConfig(request) {
      return guarded(() => ({
        diagnostics: diagnosticsField(validateSettings(decodeValue(request.config))),
      }));
    },

    async ConfigureProvider(request) {
      return guarded(() => {
        settings = resolveSettings(decodeValue(request.config));
        return { diagnostics: [] };
      });
    },

    async ValidateResourceConfig(request) {
      return guarded(() => {
        const config = objectOf(request.config) ?? {};
        return { diagnostics: diagnosticsField(resourceOf(request.type_name).validate(config)) };
      });
    },

    async UpgradeResourceState(request) {
      return guarded(() => {
        const resource = resourceOf(request.type_name);
        const raw = request.raw_state?.json;
        const stored = raw && raw.length > 0 ? JSON.parse(Buffer.from(raw).toString("utf8")) : null;
        if (stored === null) return { upgraded_state: dynamic(null), diagnostics: [] };
        // Schema version 0 is the only one so far: keep the known attributes, fill new ones with null.
        const upgraded: ObjectValue = {};
        for (const name of Object.keys(resource.schema.attributes)) upgraded[name] = stored[name] ?? null;
        return { upgraded_state: dynamic(upgraded), diagnostics: [] };
      });
    },

    async ReadResource(request) {
      return guarded(
        async () => {
          const resource = resourceOf(request.type_name);
          const state = objectOf(request.current_state);
          const warnings: Diagnostic[] = [];
          const next = state ? await resource.read(state, contextFor(warnings)) : null;
          return {
            new_state: dynamic(next),
            private: request.private,
            diagnostics: diagnosticsField(warnings),
          };
        },
        { new_state: request.current_state, private: request.private },
      );
    },

    async PlanResourceChange(request) {
      return guarded(
        async () => {
          const resource = resourceOf(request.type_name);
          const proposed = objectOf(request.proposed_new_state);
          if (!proposed) return { planned_state: dynamic(null), diagnostics: [] }; // destroy
          const prior = objectOf(request.prior_state);
          const result = resource.plan({
            prior,
            proposed,
            config: objectOf(request.config) ?? {},
            ctx: contextFor([]),
          });
          const valid = !result.diagnostics.some((diagnostic) => diagnostic.severity === "ERROR");
          if (valid && prior && result.requiresReplace.length > 0 && resource.checkReplacement) {
            result.diagnostics.push(
              ...(await resource.checkReplacement(result.planned, prior, contextFor([]))),
            );
          }
          return {
            planned_state: dynamic(result.planned),
            requires_replace: result.requiresReplace.map(protoPath),
            planned_private: request.prior_private,
            diagnostics: diagnosticsField(result.diagnostics),
          };
        },
        { planned_state: request.proposed_new_state },
      );
    },

    async ApplyResourceChange(request) {
      const prior = objectOf(request.prior_state);
      return guarded(
        async () => {
          const resource = resourceOf(request.type_name);
          const warnings: Diagnostic[] = [];
          const next = await resource.apply({
            prior,
            planned: objectOf(request.planned_state),
            config: objectOf(request.config),
            ctx: contextFor(warnings),
          });
          return {
            new_state: dynamic(next),
            private: request.planned_private,
            diagnostics: diagnosticsField(warnings),
          };
        },
        // On failure the object is as it was: the prior state stays (nothing was created or removed).
        { new_state: dynamic(prior) },
      );
    },

    async ImportResourceState(request) {
      return guarded(async () => {
        const resource = resourceOf(request.type_name);
        const warnings: Diagnostic[] = [];
        const state = await resource.importState(String(request.id ?? ""), contextFor(warnings));
        return {
          imported_resources: [
            { type_name: resource.typeName, state: dynamic(state), private: Buffer.alloc(0) },
          ],
          diagnostics: diagnosticsField(warnings),
        };
      });
    },

    async StopProvider() {
      stop.abort();
      return { Error: "" };
    },
  };
}
