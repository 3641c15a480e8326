// The 16 sources, each with where its trigger URL goes. Keyed by the API's own source names, so a
// source added to the API fails the console's type check until it has a snippet here.
import type { Schemas } from "./api/client.ts";

type SourceName = Schemas["AlertWebhook"]["source"];
interface Source {
  name: SourceName;
  title: string;
  /** Where to paste the snippet. */
  where: string;
  snippet(url: string): string;
}

const BY_NAME: { [name in SourceName]: Omit<Source, "name"> } = {
  alertmanager: {
    title: "Prometheus Alertmanager",
    where: "alertmanager.yml: add the receiver and route to it",
    snippet: (url) => `route:
  receiver: vigil
receivers:
  - name: vigil
    webhook_configs:
      - url: "${url}"
        send_resolved: true`,
  },
  grafana: {
    title: "Grafana Alerting",
    where: "Alerting → Contact points → New → Webhook; or provisioning (contactpoints.yaml)",
    snippet: (url) => `apiVersion: 1
contactPoints:
  - orgId: 1
    name: vigil
    receivers:
      - uid: vigil
        type: webhook
        settings:
          url: "${url}"
          httpMethod: POST`,
  },
  datadog: {
    title: "Datadog",
    where: "Integrations → Webhooks → New; then mention @webhook-vigil in monitors",
    snippet: (url) => `Name: vigil
URL: ${url}
Payload:
{
  "id": "$ID",
  "alert_id": "$ALERT_ID",
  "title": "$EVENT_TITLE",
  "body": "$EVENT_MSG",
  "alert_transition": "$ALERT_TRANSITION",
  "alert_priority": "$ALERT_PRIORITY",
  "date": "$DATE",
  "tags": "$TAGS",
  "link": "$LINK",
  "hostname": "$HOSTNAME"
}`,
  },
  pagerduty: {
    title: "PagerDuty",
    where: "Integrations → Generic Webhooks (v3) → New webhook",
    snippet: (url) => `Webhook URL: ${url}
Scope type: Service (or Account)
Event subscription: incident.triggered, incident.acknowledged, incident.resolved, incident.reopened`,
  },
  opsgenie: {
    title: "Opsgenie",
    where: "Settings → Integrations → Webhook",
    snippet: (url) => `Webhook URL: ${url}
Add Alert Description to Payload: on
Add Alert Details to Payload: on
Alert actions: Create, Close, Acknowledge, AddNote`,
  },
  cloudwatch: {
    title: "Amazon CloudWatch (via SNS)",
    where: "Subscribe the alarm's SNS topic over HTTPS (the subscription is confirmed automatically)",
    snippet: (url) => `aws sns subscribe \\
  --topic-arn arn:aws:sns:REGION:ACCOUNT:TOPIC \\
  --protocol https \\
  --notification-endpoint '${url}'`,
  },
  "azure-monitor": {
    title: "Azure Monitor",
    where: "Action group → Actions → Webhook, with the common alert schema on",
    snippet: (url) => `az monitor action-group update \\
  --resource-group RG --name AG \\
  --add-action webhook vigil '${url}' usecommonalertschema`,
  },
  "gcp-monitoring": {
    title: "Google Cloud Monitoring",
    where: "Alerting → Edit notification channels → Webhooks → Add new",
    snippet: (url) => `gcloud beta monitoring channels create \\
  --display-name=vigil --type=webhook_tokenauth \\
  --channel-labels=url='${url}'`,
  },
  newrelic: {
    title: "New Relic",
    where: "Alerts → Destinations → Webhook; then a workflow notifying it",
    snippet: (url) => `Endpoint URL: ${url}
Payload template:
{
  "id": {{ json issueId }},
  "issueUrl": {{ json issuePageUrl }},
  "title": {{ json annotations.title.[0] }},
  "priority": {{ json priority }},
  "state": {{ json state }},
  "createdAt": {{ createdAt }},
  "updatedAt": {{ updatedAt }},
  "sources": {{ json accumulations.source }},
  "entitiesData": {{ json entitiesData }}
}`,
  },
  sentry: {
    title: "Sentry",
    where: "Settings → Developer Settings → Internal Integration: Webhook URL, Alert Rule Action on",
    snippet: (url) => `Webhook URL: ${url}
Alert Rule Action: enabled
Webhooks: issue`,
  },
  zabbix: {
    title: "Zabbix",
    where: "Alerts → Media types → Webhook; parameters sent as JSON",
    snippet: (url) => `URL: ${url}
Parameters:
  eventId={EVENT.ID}
  triggerId={TRIGGER.ID}
  eventName={EVENT.NAME}
  eventSeverity={EVENT.SEVERITY}
  eventValue={EVENT.VALUE}
  eventDate={EVENT.DATE}
  eventTime={EVENT.TIME}
  hostName={HOST.NAME}
  eventTags={EVENT.TAGSJSON}`,
  },
  dynatrace: {
    title: "Dynatrace",
    where: "Settings → Integration → Problem notifications → Custom integration",
    snippet: (url) => `Webhook URL: ${url}
Call webhook if new events merge into existing problems: on
Custom payload:
{
  "ProblemID": "{ProblemID}",
  "PID": "{PID}",
  "ProblemTitle": "{ProblemTitle}",
  "State": "{State}",
  "ProblemSeverity": "{ProblemSeverity}",
  "ProblemImpact": "{ProblemImpact}",
  "ProblemURL": "{ProblemURL}",
  "ImpactedEntities": {ImpactedEntities},
  "Tags": "{Tags}"
}`,
  },
  elastic: {
    title: "Elastic (Kibana alerting)",
    where: "Stack Management → Connectors → Webhook; then a rule action using it",
    snippet: (url) => `Connector URL: ${url}
Method: POST
Action body:
{
  "rule": { "id": "{{rule.id}}", "name": "{{rule.name}}", "tags": {{rule.tags}} },
  "alert": { "id": "{{alert.id}}", "actionGroup": "{{alert.actionGroup}}" },
  "context": { "message": "{{context.message}}" },
  "date": "{{date}}",
  "kibanaBaseUrl": "{{kibanaBaseUrl}}"
}`,
  },
  splunk: {
    title: "Splunk",
    where: "Saved search → Edit alert → Add actions → Webhook",
    snippet: (url) => `[your saved search]
action.webhook = 1
action.webhook.param.url = ${url}`,
  },
  "uptime-kuma": {
    title: "Uptime Kuma",
    where: "Settings → Notifications → Setup notification → Webhook, body: application/json",
    snippet: (url) => `Notification type: Webhook
Post URL: ${url}
Request body: Preset - application/json`,
  },
  checkmk: {
    title: "Checkmk",
    where: "Setup → Notifications → rule with a webhook notification script posting the context as JSON",
    snippet: (url) => `# Notification script parameter (the script posts the notification context as JSON):
${url}`,
  },
};

export const SOURCES: Source[] = Object.entries(BY_NAME).map(([name, source]) => ({
  name: name as SourceName,
  ...source,
}));

export const sourceOf = (name: string): Source | undefined => SOURCES.find((source) => source.name === name);
