// A pod alert whose node went NotReady minutes earlier: the investigation reads the storm as it
// stands (correlating what is still pending), ranks the node as the upstream cause and cites the
// node alert's own link.
import { expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { call, describeEachEngine, waitFor } from "../../../test/harness.ts";

describeEachEngine("the storm's upstream in an investigation", (harness) => {
  it("a pod alert after its node went NotReady: the node is the top hypothesis, cited", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: `up-${process.pid}`,
    });
    const now = Date.now();
    const nodeRule = "http://prometheus.example:9090/graph?g0.expr=kube_node_ready%3D%3D0";
    await deliverIds(
      h,
      trigger,
      amBody(
        [
          {
            status: "firing",
            fingerprint: `node-${process.pid}`,
            startsAt: new Date(now - 180_000).toISOString(),
            labels: { alertname: "KubeNodeNotReady", cluster: "prod", node: "worker-7" },
            summary: "KubeNodeNotReady: node worker-7 is NotReady",
          },
        ],
        { generatorURL: nodeRule },
      ),
    );
    const [podId] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: `pod-${process.pid}`,
          startsAt: new Date(now).toISOString(),
          labels: { alertname: "KubePodNotReady", cluster: "prod", namespace: "search", node: "worker-7" },
        },
      ]),
    );
    const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${podId}/investigate`);
    expect(started.statusCode, started.body).toBe(200);
    const id = started.json().investigation.id as string;
    const done = await waitFor(async () => {
      const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
      return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
    }, 60_000);
    expect(done.status).toBe("completed");
    expect(done.hypotheses[0]).toMatchObject({
      statement: "A symptom of an upstream problem: KubeNodeNotReady",
      confidence: 0.8,
      status: "confirmed",
    });
    expect(done.hypotheses[0].rationale).toContain("both run on host worker-7");
    expect(done.structured_rca).toMatchObject({
      category: "upstream_dependency",
      plain_summary: { verdict: "real_problem" },
    });
    expect(done.evidence).toContainEqual(
      expect.objectContaining({
        kind: "alert_rule",
        url: nodeRule,
        source: "tool_trace",
        tool_name: "alert_storm",
        verified: false,
      }),
    );
  }, 90_000);
});
