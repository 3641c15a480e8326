import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { deliver, registerAlerts, triggerPathOf } from "../../../test/alerts.ts";
import { readFixture } from "../../../test/fixtures.ts";
import { describeEachEngine, type Harness, testConfig } from "../../../test/harness.ts";
import type { Db } from "../../core/db/database.ts";
import { createSecrets } from "../../core/secrets.ts";
import { confirmSnsSubscriptionJob, confirmSubscription } from "./confirm-sns.ts";

const FIXTURE = readFixture("cloudwatch", "sns-subscription-confirmation.json");
const SUBSCRIBE_URL = JSON.parse(FIXTURE).SubscribeURL as string;

async function register(
  h: Harness,
  autoConfirm: boolean,
  integration: string,
): Promise<{ id: string; platform_webhook_url: string }> {
  const { auth } = await h.createKey();
  return registerAlerts(h, auth, { source: "cloudwatch", integration, sns_auto_confirm: autoConfirm });
}

async function confirmJobs(h: Harness, webhookId: string) {
  const { rows } = await h.vigil.services.database.db.execute(
    sql`select data from pgboss.job where name = ${confirmSnsSubscriptionJob.name} and data->>'webhookId' = ${webhookId}`,
  );
  return rows.map((row) => row.data);
}

describeEachEngine("SNS subscription handshakes", (harness) => {
  async function post(registration: { platform_webhook_url: string }, body: string) {
    return deliver(harness(), triggerPathOf(registration), body, {
      "content-type": "text/plain; charset=UTF-8",
      "x-amz-sns-message-type": JSON.parse(body).Type,
    });
  }

  it("queues the confirmation when the registration enables auto-confirm", async () => {
    const registration = await register(harness(), true, "auto");
    const response = await post(registration, FIXTURE);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toMatchObject({ events: 0, alerts: [] });
    expect(response.json().note).toMatch(/; confirming the subscription$/);
    const [job] = await confirmJobs(harness(), registration.id);
    expect(job).toEqual({
      subscribeUrl: SUBSCRIBE_URL,
      topicArn: JSON.parse(FIXTURE).TopicArn,
      webhookId: registration.id,
      invocationId: response.json().invocation_id,
    });
  });

  it("only records the handshake when auto-confirm is off", async () => {
    const registration = await register(harness(), false, "manual");
    const response = await post(registration, FIXTURE);
    expect(response.statusCode).toBe(202);
    expect(response.json().note).toEqual(expect.stringContaining("SubscriptionConfirmation"));
    expect(response.json().note).toMatch(
      /; auto-confirm is off: open its SubscribeURL to confirm the subscription$/,
    );
    expect(await confirmJobs(harness(), registration.id)).toEqual([]);
  });

  it("says so when it will not call a SubscribeURL outside SNS", async () => {
    const registration = await register(harness(), true, "elsewhere");
    const elsewhere = FIXTURE.replace(SUBSCRIBE_URL, "https://sns.example.com/?Action=ConfirmSubscription");
    const response = await post(registration, elsewhere);
    expect(response.statusCode).toBe(202);
    expect(response.json().note).toMatch(
      /; not confirmed: its SubscribeURL is not an https URL of an sns\.<region>\.amazonaws\.com host$/,
    );
    expect(await confirmJobs(harness(), registration.id)).toEqual([]);
  });

  it("never calls the URL of an UnsubscribeConfirmation", async () => {
    const registration = await register(harness(), true, "unsubscribe");
    const unsubscribe = FIXTURE.replace('"SubscriptionConfirmation"', '"UnsubscribeConfirmation"');
    const response = await post(registration, unsubscribe);
    expect(response.statusCode).toBe(202);
    expect(await confirmJobs(harness(), registration.id)).toEqual([]);
  });
});

describe("the confirmation job", () => {
  async function withServer(status: number, run: (url: string, seen: string[]) => Promise<void>) {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.statusCode = status;
      response.end("<ConfirmSubscriptionResponse/>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await run(`http://127.0.0.1:${port}/?Action=ConfirmSubscription&Token=abc`, seen);
    } finally {
      server.close();
    }
  }
  const ctx = {
    db: {} as Db,
    log: pino({ level: "silent" }),
    config: testConfig(),
    secrets: createSecrets("test"),
    now: () => new Date(),
    enqueue: async () => {
      throw new Error("the confirmation job sends no follow-up jobs");
    },
    enqueueMany: async () => {
      throw new Error("the confirmation job sends no follow-up jobs");
    },
  };
  const data = (subscribeUrl: string) => ({
    subscribeUrl,
    topicArn: null,
    webhookId: "w",
    invocationId: "i",
  });

  // The test's SNS stands on loopback, an internal address: named on the allow-list here.
  const loopback = {
    allowedHosts: ["127.0.0.1"],
    allowedHostsSetting: "the test's list",
    config: testConfig(),
  };

  it("GETs the SubscribeURL", async () => {
    await withServer(200, async (url, seen) => {
      await confirmSubscription(loopback, url);
      expect(seen).toEqual(["GET /?Action=ConfirmSubscription&Token=abc"]);
    });
  });

  it("fails, so the queue retries, when SNS refuses", async () => {
    await withServer(503, async (url) => {
      await expect(confirmSubscription(loopback, url)).rejects.toThrow("SNS answered 503");
    });
  });

  it("calls under the outbound rules: the job reaches no internal address, and follows no redirect", async () => {
    await withServer(200, async (url, seen) => {
      await expect(confirmSnsSubscriptionJob.handler({ ctx, data: data(url), attempt: 1 })).rejects.toThrow(
        /an internal address/,
      );
      expect(seen).toEqual([]);
    });
    await withServer(302, async (url, seen) => {
      await expect(confirmSubscription(loopback, url)).rejects.toThrow("SNS answered 302");
      expect(seen).toHaveLength(1);
    });
  });
});
