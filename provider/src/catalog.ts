// Whether the service's catalog has an app: asked before a plan replaces an object with one that
// names another app, since the replacement deletes the object first.
import { apiDiagnostic, type Client, isGone } from "./client.ts";
import { type Diagnostic, error } from "./diagnostics.ts";

/** An error on `app_name` when the catalog has no app of that name; null when it has one. */
export async function catalogLacks(client: Client, appName: string): Promise<Diagnostic | null> {
  try {
    await client.request("GET", `/api/v1/apps/${encodeURIComponent(appName)}`, {
      shape: { app_name: "string" },
    });
    return null;
  } catch (thrown) {
    if (!isGone(thrown, ["app_name"]))
      throw apiDiagnostic(thrown, `Cannot read app "${appName}"`, ["app_name"]);
    return error(
      "Unknown app",
      `The catalog has no app "${appName}". Nothing was changed: the replacement would have removed the current object first.`,
      ["app_name"],
    );
  }
}
