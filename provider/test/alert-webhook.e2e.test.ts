import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeEachEngine } from "../../test/harness.ts";
import { buildDevProvider, createWorkspace, providerBlock, type Workspace } from "./tofu.ts";

describeEachEngine("svc_sre_alert_webhook with OpenTofu", (harness) => {
  let base = "";
  let org = "";
  let ws: Workspace;
  beforeAll(async () => {
    const h = harness();
    await h.vigil.app.listen({ port: 0, host: "127.0.0.1" });
    const address = h.vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("not listening");
    base = `http://127.0.0.1:${address.port}`;
    org = await h.createOrg("platform");
    const { key } = await h.createKey({ orgIds: [org] });
    const provider = await buildDevProvider();
    ws = createWorkspace({ providerDir: provider.dir, env: { SVC_API_KEY: key } });
  });
  afterAll(() => ws?.remove());

  it("applies", async () => {
    ws.write(`${providerBlock(org, base)}
resource "svc_sre_alert_webhook" "am" {
  source = "alertmanager"
}
`);
    const out = await ws.tofu("apply", "-auto-approve", "-no-color");
    console.log(out.stdout, out.stderr);
    expect(out.code).toBe(0);
  });
});
