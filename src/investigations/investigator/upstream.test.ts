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

  it("two NodeDown alerts: the pod's depends_on names the later one, and it is the upstream read", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: `up-twins-${process.pid}`,
    });
    const now = Date.now();
    const ruleOf = (node: string) =>
      `http://prometheus.example:9090/graph?g0.expr=up%7Binstance%3D%22${node}%22%7D`;
    const nodeDown = async (node: string, agoMs: number) => {
      const [id] = await deliverIds(
        h,
        trigger,
        amBody(
          [
            {
              status: "firing",
              fingerprint: `${node}-${process.pid}`,
              startsAt: new Date(now - agoMs).toISOString(),
              labels: { alertname: "NodeDown", cluster: "prod", instance: `${node}:9100`, job: "node" },
              summary: "NodeDown",
            },
          ],
          { generatorURL: ruleOf(node) },
        ),
      );
      return id as string;
    };
    // node-1 fired first: the storm's cause. The pod depends on node-2, a NodeDown too.
    const first = await nodeDown("node-1", 300_000);
    const second = await nodeDown("node-2", 180_000);
    const [podId] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: `pod-on-node-2-${process.pid}`,
          startsAt: new Date(now).toISOString(),
          labels: {
            alertname: "KubePodNotReady",
            cluster: "prod",
            namespace: "search",
            instance: "node-2:9100",
            depends_on: "node-2",
          },
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
    const roles = await Promise.all(
      [first, second, podId].map(async (alertId) => {
        const alert = (await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alertId}`)).json();
        return [alert.alert_role, alert.likely_upstream];
      }),
    );
    expect(roles).toEqual([
      ["cause", null],
      ["symptom", "NodeDown (instance=node-1:9100)"],
      ["symptom", "NodeDown (instance=node-2:9100)"],
    ]);
    expect(done.hypotheses[0]).toMatchObject({
      statement: "A symptom of an upstream problem: NodeDown (instance=node-2:9100)",
      confidence: 0.8,
      status: "confirmed",
    });
    expect(done.hypotheses[0].rationale).toContain(`(alert ${second})`);
    const cited = done.evidence
      .filter((item: { tool_name?: string }) => item.tool_name === "alert_storm")
      .map((item: { url: string }) => item.url);
    expect(cited).toEqual([ruleOf("node-2")]);
  }, 90_000);
});
