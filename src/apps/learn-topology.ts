// What discovery learns from label sets (Prometheus series and targets, Alertmanager alerts and
// silences): services with their environments, clusters and namespaces, and which service calls
// which. The label names are the common conventions (Kubernetes, Prometheus, service meshes).
import type { DiscoveredService, DiscoveryResult } from "./tables.ts";

type Labels = Record<string, string>;

const SERVICE = ["service", "service_name", "app_kubernetes_io_name", "app", "k8s_app", "job"];
const ENVIRONMENT = ["environment", "env", "deployment_environment", "stage", "tier_env"];
const CLUSTER = ["cluster", "k8s_cluster", "cluster_name", "kubernetes_cluster"];
const NAMESPACE = ["namespace", "kubernetes_namespace", "k8s_namespace"];
const CALLER = ["source_service", "source_workload", "client_service", "client", "caller", "from_service"];
const CALLEE = [
  "destination_service",
  "destination_workload",
  "server_service",
  "upstream_service",
  "callee",
  "to_service",
  "peer_service",
];
/** job values that name Prometheus itself or exporters, not a service. */
const NOT_SERVICES = new Set([
  "prometheus",
  "alertmanager",
  "node",
  "node_exporter",
  "node-exporter",
  "kubelet",
  "cadvisor",
  "apiserver",
]);

const first = (labels: Labels, names: string[]) => {
  for (const name of names) {
    const value = labels[name]?.trim();
    if (value) return value;
  }
  return null;
};

/** `payments.prod.svc.cluster.local` -> `payments`. */
const serviceName = (value: string) => value.replace(/\.svc(\.cluster\.local)?$/, "").split(".")[0] ?? value;

export class TopologyBuilder {
  private readonly services = new Map<
    string,
    { environments: Set<string>; clusters: Set<string>; namespaces: Set<string>; seenIn: Set<string> }
  >();
  private readonly environments = new Set<string>();
  private readonly clusters = new Set<string>();
  private readonly calls = new Map<string, { from: string; to: string }>();

  private service(name: string, seenIn: string) {
    const entry = this.services.get(name) ?? {
      environments: new Set(),
      clusters: new Set(),
      namespaces: new Set(),
      seenIn: new Set(),
    };
    entry.seenIn.add(seenIn);
    this.services.set(name, entry);
    return entry;
  }

  /** One label set seen in integration `seenIn`. */
  add(labels: Labels, seenIn: string): void {
    const environment = first(labels, ENVIRONMENT);
    const cluster = first(labels, CLUSTER);
    const namespace = first(labels, NAMESPACE);
    if (environment) this.environments.add(environment);
    if (cluster) this.clusters.add(cluster);
    const caller = first(labels, CALLER);
    const callee = first(labels, CALLEE);
    const own = first(labels, SERVICE);
    const names = [own, caller, callee].filter((name): name is string => name !== null).map(serviceName);
    for (const name of new Set(names)) {
      if (NOT_SERVICES.has(name)) continue;
      const entry = this.service(name, seenIn);
      if (environment) entry.environments.add(environment);
      if (cluster) entry.clusters.add(cluster);
      if (namespace) entry.namespaces.add(namespace);
    }
    // A call needs both ends; a series naming only the callee is a call from the service that exports it.
    const from = caller ? serviceName(caller) : callee && own ? serviceName(own) : null;
    const to = callee ? serviceName(callee) : null;
    if (from && to && from !== to) this.calls.set(`${from}\n${to}`, { from, to });
  }

  result(integrations: DiscoveryResult["integrations"]): DiscoveryResult {
    const sorted = (values: Iterable<string>) => [...values].sort();
    const services: DiscoveredService[] = sorted(this.services.keys()).map((name) => {
      const entry = this.services.get(name);
      return {
        name,
        environments: sorted(entry?.environments ?? []),
        clusters: sorted(entry?.clusters ?? []),
        namespaces: sorted(entry?.namespaces ?? []),
        seen_in: sorted(entry?.seenIn ?? []),
      };
    });
    const calls = [...this.calls.values()].sort((a, b) => (a.from + a.to < b.from + b.to ? -1 : 1));
    return {
      services,
      environments: sorted(this.environments),
      clusters: sorted(this.clusters),
      calls,
      integrations,
    };
  }
}
