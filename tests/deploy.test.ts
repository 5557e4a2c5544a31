// The Kubernetes deployment and the container image, checked without a cluster or a Docker engine:
// every kustomize overlay under deploy/k8s/overlays is rendered with `kubectl kustomize`, each object
// is validated against the Kubernetes API schemas (kubernetes-models; the Strimzi resources by hand),
// and the rules the deployment promises are checked on what would be applied: probes, resources and
// a locked-down securityContext on every container, replicas or autoscaling per overlay, the gateway
// as the only way in, the delivery service's fenced egress. The Dockerfile is read for its base
// image, its user and the files it runs.
//
// Needs kubectl >= 1.27 (kustomize v5) on PATH.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { ConfigMap, Namespace, PersistentVolumeClaim, Service } from "kubernetes-models/v1";
import { CronJob, Job } from "kubernetes-models/batch/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { livenessService } from "@formsvc/platform/health.ts";
import { serviceNames as schemaNames } from "@formsvc/platform/config.ts";
import { stopTimeoutMs } from "@formsvc/platform/stopping.ts";

// Parsed YAML: plain JSON-like data.
type Obj = Record<string, any>;

const root = resolve(import.meta.dirname, "..");
const k8sDir = join(root, "deploy/k8s");
const dockerfilePath = join(root, "deploy/docker/Dockerfile");
const dockerignorePath = join(root, "deploy/docker/Dockerfile.dockerignore");

const partOf = "formsvc";
const secretName = "formsvc-secrets";
const gatewayName = "gateway";
/** Deployments autoscaled on CPU in every overlay but dev. */
const autoscaled = ["gateway", "submissions", "delivery"];
/** Address ranges delivery must never reach (webhook URLs are chosen by integrators). */
const privateRanges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"];
/** Ports delivery may reach on any address: DNS, Postgres, Kafka, OTLP/HTTP (the trace collector). */
const infrastructurePorts = new Set([53, 5432, 9092, 9093, 4318]);
/** Environment that must come from the Secret, never from a literal in a manifest. */
const secretVariables = /^(DATABASE_URL|REDIS_URL|SECRET_KEY|SMTP_URL|S3_.*)$/;

const models: Record<string, new (data: any) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "batch/v1/CronJob": CronJob,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

// --- rendering -----------------------------------------------------------------------------------

function render(dir: string): Obj[] {
  const result = spawnSync("kubectl", ["kustomize", dir], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.error) {
    assert.fail(`\`kubectl kustomize ${dir}\` could not run (${result.error.message}); the deploy test needs kubectl >= 1.27 on PATH`);
  }
  assert.equal(result.status, 0, `\`kubectl kustomize ${dir}\` failed:\n${result.stderr}`);
  const objects: Obj[] = [];
  for (const doc of parseAllDocuments(result.stdout)) {
    assert.deepEqual(doc.errors.map(String), [], `${dir}: the rendered YAML does not parse`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value as Obj);
  }
  assert.ok(objects.length > 0, `${dir} renders no object`);
  return objects;
}

const overlayNames = readdirSync(join(k8sDir, "overlays")).filter((name) =>
  existsSync(join(k8sDir, "overlays", name, "kustomization.yaml")),
);
const renders = new Map<string, Obj[]>();
function rendered(name: string): Obj[] {
  let objects = renders.get(name);
  if (!objects) {
    objects = render(name === "base" ? "deploy/k8s/base" : `deploy/k8s/overlays/${name}`);
    renders.set(name, objects);
  }
  return objects;
}

// --- helpers ---------------------------------------------------------------------------------------

const id = (o: Obj) => `${o.kind}/${o.metadata?.name}`;
const ofKind = (objects: Obj[], kind: string) => objects.filter((o) => o.kind === kind);

function matches(selector: Obj | undefined, labels: Obj | undefined): boolean {
  if (!selector) return false;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (have[key] !== value) return false;
  for (const expr of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, expr.key);
    const value = have[expr.key];
    if (expr.operator === "In" && !(present && expr.values.includes(value))) return false;
    if (expr.operator === "NotIn" && present && expr.values.includes(value)) return false;
    if (expr.operator === "Exists" && !present) return false;
    if (expr.operator === "DoesNotExist" && present) return false;
  }
  return true;
}

const podLabels = (d: Obj): Obj => d.spec.template.metadata?.labels ?? {};
const containersOf = (d: Obj): Obj[] => [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers];

/** The paths a command names that look like files of the repository (`node gateway/src/server.ts`). */
function sourcePaths(words: string[]): string[] {
  return words.filter((w) => /^[\w@.-]+(\/[\w@.-]+)+\.(ts|js|mjs|cjs)$/.test(w));
}

/** Ports a NetworkPolicy port entry stands for: a number, or a named port resolved in `pods`. */
function resolvePort(port: number | string | undefined, pods: Obj[]): number[] {
  if (port === undefined) return [];
  if (typeof port === "number") return [port];
  return pods.flatMap((d) => containersOf(d).flatMap((c: Obj) => (c.ports ?? []).filter((p: Obj) => p.name === port).map((p: Obj) => p.containerPort)));
}

function ipv4Range(cidr: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (!m) return undefined;
  const address = m.slice(1, 5).reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(m[5]));
  const start = address - (address % size);
  return [start, start + size - 1];
}

function overlaps(a: string, b: string): boolean {
  const ra = ipv4Range(a);
  const rb = ipv4Range(b);
  return !!ra && !!rb && ra[0] <= rb[1] && rb[0] <= ra[1];
}

function workspaceDirs(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return (pkg.workspaces as string[]).flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(join(root, parent))
      .filter((name) => statSync(join(root, parent, name)).isDirectory())
      .map((name) => `${parent}/${name}`);
  }).filter((dir) => existsSync(join(root, dir, "package.json")));
}

/** services/<name> directories that run a server: each must be deployed. */
function serviceNames(): string[] {
  return readdirSync(join(root, "services")).filter((name) => existsSync(join(root, "services", name, "src/server.ts")));
}

// --- the checks every render must pass -------------------------------------------------------------

function checkSchemas(objects: Obj[]): void {
  for (const o of objects) {
    assert.ok(o.apiVersion && o.kind && o.metadata?.name, `an object without apiVersion, kind or name: ${JSON.stringify(o).slice(0, 200)}`);
    if (o.apiVersion.startsWith("kafka.strimzi.io/")) continue; // checkStrimzi
    const Model = models[`${o.apiVersion}/${o.kind}`];
    assert.ok(Model, `${id(o)}: no schema for ${o.apiVersion} ${o.kind} in this test; add it`);
    try {
      new Model(o).validate();
    } catch (err) {
      assert.fail(`${id(o)} is not a valid ${o.apiVersion} ${o.kind}: ${(err as Error).message}`);
    }
  }
  assert.equal(ofKind(objects, "Secret").length, 0, "no Secret is rendered: secret values are never shipped");
}

function checkLabelsAndNamespace(objects: Obj[]): void {
  const namespaces = new Set(objects.filter((o) => o.kind !== "Namespace").map((o) => o.metadata.namespace));
  assert.equal(namespaces.size, 1, `every object in one namespace, found ${[...namespaces].join(", ")}`);
  for (const o of objects) {
    const labels = o.metadata.labels ?? {};
    assert.equal(labels["app.kubernetes.io/part-of"], partOf, `${id(o)}: label app.kubernetes.io/part-of`);
    assert.ok(labels["app.kubernetes.io/name"], `${id(o)}: label app.kubernetes.io/name`);
    assert.ok(labels["app.kubernetes.io/component"], `${id(o)}: label app.kubernetes.io/component`);
  }
  for (const d of ofKind(objects, "Deployment")) {
    const labels = podLabels(d);
    for (const key of ["app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/component"]) {
      assert.equal(labels[key], d.metadata.labels[key], `${id(d)}: pod label ${key} as on the Deployment`);
    }
    assert.ok(matches(d.spec.selector, labels), `${id(d)}: its selector selects its pods`);
  }
}

function checkContainers(objects: Obj[]): void {
  const deployments = ofKind(objects, "Deployment");
  const images = new Set<string>();
  for (const d of deployments) {
    const pod = d.spec.template.spec;
    const podSecurity = pod.securityContext ?? {};
    assert.equal(pod.automountServiceAccountToken, false, `${id(d)}: no service account token (the code never calls the API server)`);
    const tmp = pod.volumes?.find((v: Obj) => v.emptyDir !== undefined && pod.containers.every((c: Obj) => c.volumeMounts?.some((m: Obj) => m.name === v.name && m.mountPath === "/tmp")));
    assert.ok(tmp, `${id(d)}: an emptyDir mounted at /tmp in every container`);
    for (const c of containersOf(d)) {
      const where = `${id(d)} container ${c.name}`;
      images.add(c.image);
      if (!pod.initContainers?.includes(c)) {
        assert.ok(c.livenessProbe, `${where}: livenessProbe`);
        assert.ok(c.readinessProbe, `${where}: readinessProbe`);
      }
      for (const kind of ["requests", "limits"]) {
        assert.ok(c.resources?.[kind]?.cpu, `${where}: resources.${kind}.cpu`);
        assert.ok(c.resources?.[kind]?.memory, `${where}: resources.${kind}.memory`);
      }
      const sc = c.securityContext ?? {};
      assert.equal(sc.runAsNonRoot ?? podSecurity.runAsNonRoot, true, `${where}: runAsNonRoot`);
      assert.equal(sc.runAsUser ?? podSecurity.runAsUser, 1000, `${where}: runAsUser 1000`);
      assert.equal(sc.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
      assert.equal(sc.allowPrivilegeEscalation, false, `${where}: allowPrivilegeEscalation false`);
      assert.ok(sc.capabilities?.drop?.includes("ALL"), `${where}: capabilities drop ALL`);
      assert.equal((sc.seccompProfile ?? podSecurity.seccompProfile)?.type, "RuntimeDefault", `${where}: seccompProfile RuntimeDefault`);
      assert.notEqual(sc.privileged, true, `${where}: not privileged`);
      const command = [...(c.command ?? []), ...(c.args ?? [])];
      assert.ok(command.length > 0, `${where}: names its command (one image runs every process)`);
      for (const path of sourcePaths(command)) assert.ok(existsSync(join(root, path)), `${where}: runs ${path}, which is not in the repository`);
      for (const env of c.env ?? []) {
        if (env.valueFrom?.secretKeyRef) assert.equal(env.valueFrom.secretKeyRef.name, secretName, `${where}: ${env.name} from the Secret ${secretName}`);
        if (secretVariables.test(env.name)) assert.ok(env.valueFrom?.secretKeyRef, `${where}: ${env.name} comes from a secretKeyRef, not a literal`);
      }
      for (const source of c.envFrom ?? []) {
        assert.ok(!source.secretRef, `${where}: secrets by secretKeyRef, one variable at a time, not envFrom`);
        if (source.configMapRef) {
          assert.ok(ofKind(objects, "ConfigMap").some((m) => m.metadata.name === source.configMapRef.name), `${where}: ConfigMap ${source.configMapRef.name} is rendered`);
        }
      }
    }
  }
  assert.equal(images.size, 1, `one image for every process, found ${[...images].join(", ")}`);
}

/**
 * A pod's grace covers its preStop pause and then as long as the launcher waits for a process it stopped
 * (stopping.ts): the process finishes its requests in flight and exits by itself before Kubernetes' SIGKILL.
 */
function checkGracePeriods(objects: Obj[]): void {
  for (const d of ofKind(objects, "Deployment")) {
    const pod = d.spec.template.spec;
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const pauses = pod.containers.map((c: Obj) => {
      const command: string[] = c.lifecycle?.preStop?.exec?.command ?? [];
      assert.ok(command.length === 0 || command[0] === "sleep", `${id(d)} container ${c.name}: a preStop is a sleep`);
      return command.length ? Number(command[1]) : 0;
    });
    const needed = Math.max(0, ...pauses) + stopTimeoutMs / 1000;
    assert.ok(grace >= needed, `${id(d)}: terminationGracePeriodSeconds ${grace} covers preStop and the stop (${needed} s)`);
  }
}

function checkServices(objects: Obj[]): void {
  const deployments = ofKind(objects, "Deployment");
  const services = ofKind(objects, "Service");
  const byName = new Map(deployments.map((d) => [d.metadata.name, d]));
  const expected = [gatewayName, ...serviceNames()];
  for (const name of expected) {
    const d = byName.get(name);
    assert.ok(d, `a Deployment "${name}"`);
    const entry = name === gatewayName ? "gateway/src/server.ts" : `services/${name}/src/server.ts`;
    assert.ok(containersOf(d).some((c) => [...(c.command ?? []), ...(c.args ?? [])].includes(entry)), `Deployment ${name} runs ${entry}`);
  }
  for (const d of deployments) {
    const service = services.find((s) => matches({ matchLabels: s.spec.selector }, podLabels(d)));
    assert.ok(service, `${id(d)}: a Service selects its pods`);
    assert.equal(service.spec.type ?? "ClusterIP", "ClusterIP", `${id(service)}: ClusterIP`);
    const [container] = d.spec.template.spec.containers;
    if (d.metadata.name === gatewayName) {
      const http = container.ports.find((p: Obj) => p.name === "http");
      assert.equal(http?.containerPort, 8080, "the gateway listens on its named port http, 8080");
      assert.ok(service.spec.ports.some((p: Obj) => p.name === "http" && p.port === 8080), `${id(service)}: port http 8080`);
      assert.equal(container.livenessProbe.httpGet?.path, "/healthz", "gateway liveness: /healthz");
      assert.equal(container.readinessProbe.httpGet?.path, "/readyz", "gateway readiness: /readyz");
      continue;
    }
    const grpc = container.ports?.find((p: Obj) => p.name === "grpc");
    assert.ok(grpc, `${id(d)}: a container port named grpc`);
    const servicePort = service.spec.ports.find((p: Obj) => p.name === "grpc");
    assert.ok(servicePort, `${id(service)}: a port named grpc`);
    assert.ok([grpc.name, grpc.containerPort].includes(servicePort.targetPort ?? servicePort.port), `${id(service)}: targets the grpc port`);
    for (const probe of ["livenessProbe", "readinessProbe"]) {
      assert.equal(container[probe].grpc?.port, grpc.containerPort, `${id(d)}: ${probe} is grpc.health.v1 on port ${grpc.containerPort}`);
    }
    // Not ready while the database is down, but not restarted for it either.
    assert.equal(container.livenessProbe.grpc.service, livenessService, `${id(d)}: livenessProbe asks for "${livenessService}"`);
    assert.equal(container.readinessProbe.grpc.service, undefined, `${id(d)}: readinessProbe asks for readiness`);
    // A service listens on the port of its own *_URL; the others call it there.
    const configMap = ofKind(objects, "ConfigMap").find((m) => container.envFrom?.some((e: Obj) => e.configMapRef?.name === m.metadata.name));
    const address = configMap?.data?.[`${d.metadata.name.toUpperCase()}_URL`];
    assert.ok(address, `${id(d)}: ${d.metadata.name.toUpperCase()}_URL in the ConfigMap`);
    const url = new URL(address);
    assert.equal(url.hostname, service.metadata.name, `${d.metadata.name.toUpperCase()}_URL names the Service ${service.metadata.name}`);
    assert.equal(Number(url.port), servicePort.port, `${d.metadata.name.toUpperCase()}_URL has the Service's port`);
    assert.equal(Number(url.port), grpc.containerPort, `${d.metadata.name.toUpperCase()}_URL has the container's port`);
  }
}

function checkIngress(objects: Obj[]): void {
  const deployments = ofKind(objects, "Deployment");
  for (const ingress of ofKind(objects, "Ingress")) {
    const backends = [ingress.spec.defaultBackend, ...(ingress.spec.rules ?? []).flatMap((r: Obj) => (r.http?.paths ?? []).map((p: Obj) => p.backend))].filter(Boolean);
    assert.ok(backends.length > 0, `${id(ingress)}: has a backend`);
    for (const backend of backends) {
      const service = ofKind(objects, "Service").find((s) => s.metadata.name === backend.service?.name);
      assert.ok(service, `${id(ingress)}: backend Service ${backend.service?.name} is rendered`);
      const selected = deployments.filter((d) => matches({ matchLabels: service.spec.selector }, podLabels(d))).map((d) => d.metadata.name);
      assert.deepEqual(selected, [gatewayName], `${id(ingress)} reaches only the gateway, not ${selected.join(", ")}`);
    }
  }
}

function checkNetworkPolicies(objects: Obj[]): void {
  const policies = ofKind(objects, "NetworkPolicy");
  const deployments = ofKind(objects, "Deployment");
  const denyAll = policies.find(
    (p) => Object.keys(p.spec.podSelector ?? {}).length === 0 && p.spec.policyTypes?.includes("Ingress") && (p.spec.ingress ?? []).length === 0,
  );
  assert.ok(denyAll, "a default-deny ingress NetworkPolicy (podSelector {}, policyTypes [Ingress], no rules)");

  for (const d of deployments) {
    const rules = policies
      .filter((p) => matches(p.spec.podSelector, podLabels(d)) && p.spec.policyTypes?.includes("Ingress"))
      .flatMap((p) => (p.spec.ingress ?? []).map((rule: Obj) => ({ policy: p, rule })));
    const fromOutside = rules.filter(({ rule }) => !rule.from || rule.from.length === 0 || rule.from.some((peer: Obj) => peer.ipBlock));
    if (d.metadata.name === gatewayName) {
      assert.ok(fromOutside.length > 0, "the gateway takes ingress from outside the app (the ingress controller)");
      continue;
    }
    assert.deepEqual(fromOutside.map(({ policy }) => id(policy)), [], `${id(d)} takes no ingress from outside the cluster`);
    const grpcPort = d.spec.template.spec.containers[0].ports.find((p: Obj) => p.name === "grpc").containerPort;
    const fromApp = rules.find(
      ({ rule }) =>
        rule.from.some((peer: Obj) => !peer.namespaceSelector && !peer.ipBlock && peer.podSelector?.matchLabels?.["app.kubernetes.io/part-of"] === partOf) &&
        (rule.ports ?? []).some((p: Obj) => resolvePort(p.port, [d]).includes(grpcPort)),
    );
    assert.ok(fromApp, `${id(d)}: takes ingress on its grpc port from the pods of the app`);
    for (const { policy, rule } of rules) {
      const allowsGrpc = !rule.ports || rule.ports.some((p: Obj) => resolvePort(p.port, [d]).includes(grpcPort));
      const onlyApp = rule.from.every((peer: Obj) => !peer.namespaceSelector && !peer.ipBlock && peer.podSelector?.matchLabels?.["app.kubernetes.io/part-of"] === partOf);
      assert.ok(!allowsGrpc || onlyApp, `${id(policy)}: ${id(d)}'s grpc port is open only to the pods of the app`);
    }
  }

  const delivery = deployments.find((d) => d.metadata.name === "delivery");
  assert.ok(delivery, "a Deployment delivery");
  const egress = policies.filter((p) => matches(p.spec.podSelector, podLabels(delivery)) && p.spec.policyTypes?.includes("Egress"));
  assert.ok(egress.length > 0, "a NetworkPolicy restricts delivery's egress");
  const rules: Obj[] = egress.flatMap((p) => p.spec.egress ?? []);
  const internet = rules.flatMap((r) => r.to ?? []).find((peer: Obj) => peer.ipBlock?.cidr === "0.0.0.0/0");
  assert.ok(internet, "delivery may reach the internet (ipBlock 0.0.0.0/0)");
  for (const rule of rules) {
    if (!rule.to || rule.to.length === 0) {
      const ports = (rule.ports ?? []).flatMap((p: Obj) => resolvePort(p.port, deployments));
      assert.ok(ports.length > 0 && ports.every((p: number) => infrastructurePorts.has(p)), `delivery reaches any address only on DNS, Postgres, Kafka or OTLP ports, not ${JSON.stringify(rule.ports ?? "all ports")}`);
      continue;
    }
    for (const peer of rule.to) {
      if (!peer.ipBlock) {
        assert.ok(peer.podSelector, `delivery egress: a peer by namespace only opens whole namespaces: ${JSON.stringify(peer)}`);
        continue;
      }
      const { cidr, except = [] } = peer.ipBlock;
      for (const range of privateRanges) {
        if (overlaps(cidr, range)) assert.ok(except.includes(range), `delivery egress to ${cidr} must except ${range}`);
      }
    }
  }
  const dns = rules.some((r) => (r.ports ?? []).some((p: Obj) => p.port === 53));
  assert.ok(dns, "delivery may resolve names (port 53)");
}

function checkDisruptionBudgets(objects: Obj[]): void {
  const budgets = ofKind(objects, "PodDisruptionBudget");
  for (const d of ofKind(objects, "Deployment")) {
    const budget = budgets.find((b) => matches(b.spec.selector, podLabels(d)));
    assert.ok(budget, `${id(d)}: a PodDisruptionBudget`);
    assert.equal(budget.spec.minAvailable, 1, `${id(budget)}: minAvailable 1`);
  }
}

function autoscalerOf(objects: Obj[], d: Obj): Obj | undefined {
  return ofKind(objects, "HorizontalPodAutoscaler").find(
    (h) => h.spec.scaleTargetRef.kind === "Deployment" && h.spec.scaleTargetRef.name === d.metadata.name,
  );
}

function checkAutoscalers(objects: Obj[], minimum: number): void {
  for (const d of ofKind(objects, "Deployment")) {
    const hpa = autoscalerOf(objects, d);
    if (autoscaled.includes(d.metadata.name)) {
      assert.ok(hpa, `${id(d)}: a HorizontalPodAutoscaler`);
      assert.ok(hpa.spec.metrics.some((m: Obj) => m.type === "Resource" && m.resource.name === "cpu"), `${id(hpa)}: scales on CPU`);
      assert.ok(hpa.spec.maxReplicas >= hpa.spec.minReplicas, `${id(hpa)}: maxReplicas >= minReplicas`);
    }
    const least = hpa ? hpa.spec.minReplicas ?? 1 : d.spec.replicas ?? 1;
    assert.ok(least >= minimum, `${id(d)}: at least ${minimum} replica(s) (replicas, or the autoscaler's minimum), found ${least}`);
  }
}

function checkStrimzi(objects: Obj[]): void {
  const strimzi = objects.filter((o) => o.apiVersion.startsWith("kafka.strimzi.io/"));
  for (const o of strimzi) {
    assert.ok(["kafka.strimzi.io/v1", "kafka.strimzi.io/v1beta2"].includes(o.apiVersion), `${id(o)}: a served Strimzi apiVersion, not ${o.apiVersion}`);
    assert.ok(["Kafka", "KafkaNodePool", "KafkaTopic"].includes(o.kind), `${id(o)}: a kind this test knows`);
    assert.equal(typeof o.spec, "object", `${id(o)}: spec`);
  }
  const kafkas = ofKind(strimzi, "Kafka");
  assert.equal(kafkas.length, 1, "one Kafka");
  const [kafka] = kafkas;
  assert.equal(kafka.spec.zookeeper, undefined, "KRaft: no ZooKeeper");
  if (kafka.apiVersion.endsWith("v1beta2")) {
    assert.equal(kafka.metadata.annotations?.["strimzi.io/kraft"], "enabled", "v1beta2 needs strimzi.io/kraft: enabled");
    assert.equal(kafka.metadata.annotations?.["strimzi.io/node-pools"], "enabled", "v1beta2 needs strimzi.io/node-pools: enabled");
  }
  const listeners: Obj[] = kafka.spec.kafka?.listeners ?? [];
  assert.ok(listeners.length > 0, "Kafka: spec.kafka.listeners");
  for (const l of listeners) {
    assert.ok(/^[a-z0-9]{1,11}$/.test(l.name), `listener name ${l.name}`);
    assert.ok(Number.isInteger(l.port) && l.port >= 9092, `listener ${l.name}: port`);
    assert.ok(["internal", "route", "loadbalancer", "nodeport", "ingress", "cluster-ip"].includes(l.type), `listener ${l.name}: type`);
    assert.equal(typeof l.tls, "boolean", `listener ${l.name}: tls`);
  }

  const pools = ofKind(strimzi, "KafkaNodePool");
  assert.ok(pools.length > 0, "a KafkaNodePool");
  for (const pool of pools) {
    assert.equal(pool.metadata.labels?.["strimzi.io/cluster"], kafka.metadata.name, `${id(pool)}: label strimzi.io/cluster`);
    assert.ok(Number.isInteger(pool.spec.replicas) && pool.spec.replicas >= 1, `${id(pool)}: replicas`);
    assert.ok(pool.spec.roles?.length > 0 && pool.spec.roles.every((r: string) => ["controller", "broker"].includes(r)), `${id(pool)}: roles`);
    assert.ok(["jbod", "ephemeral", "persistent-claim"].includes(pool.spec.storage?.type), `${id(pool)}: storage`);
  }
  const count = (role: string) => pools.filter((p) => p.spec.roles.includes(role)).reduce((n, p) => n + p.spec.replicas, 0);
  assert.ok(count("controller") >= 1, "KRaft controllers");
  const brokers = count("broker");
  assert.ok(brokers >= 1, "brokers");

  const topics = ofKind(strimzi, "KafkaTopic");
  for (const topic of topics) {
    assert.equal(topic.metadata.labels?.["strimzi.io/cluster"], kafka.metadata.name, `${id(topic)}: label strimzi.io/cluster`);
    assert.ok(Number.isInteger(topic.spec.partitions) && topic.spec.partitions >= 1, `${id(topic)}: partitions`);
    assert.ok(Number.isInteger(topic.spec.replicas) && topic.spec.replicas >= 1 && topic.spec.replicas <= brokers, `${id(topic)}: replicas within the ${brokers} brokers`);
  }
  const responses = topics.find((t) => (t.spec.topicName ?? t.metadata.name) === "formsvc.responses");
  assert.ok(responses, "KafkaTopic formsvc.responses");
  assert.equal(responses.spec.partitions, 3, "formsvc.responses: 3 partitions");

  const plain = listeners.find((l) => !l.tls && l.type === "internal");
  assert.ok(plain, "a plain internal listener for the services");
  const bootstrap = `${kafka.metadata.name}-kafka-bootstrap:${plain.port}`;
  for (const name of ["submissions", "delivery"]) {
    const d = ofKind(objects, "Deployment").find((x) => x.metadata.name === name);
    assert.ok(d, `a Deployment ${name}`);
    const env = d.spec.template.spec.containers[0].env?.find((e: Obj) => e.name === "KAFKA_BROKERS");
    assert.equal(env?.value, bootstrap, `${name}: KAFKA_BROKERS is the bootstrap Service`);
    assert.equal(env?.valueFrom, undefined, `${name}: KAFKA_BROKERS has one source`);
  }
}

function checkCommon(objects: Obj[]): void {
  checkSchemas(objects);
  checkLabelsAndNamespace(objects);
  checkContainers(objects);
  checkGracePeriods(objects);
  checkServices(objects);
  checkIngress(objects);
  checkNetworkPolicies(objects);
}

// --- the tests -------------------------------------------------------------------------------------

describe("Kubernetes manifests (kubectl kustomize)", () => {
  test("the overlays are dev, prod and strimzi (and any other is checked like prod)", () => {
    for (const name of ["dev", "prod", "strimzi"]) assert.ok(overlayNames.includes(name), `deploy/k8s/overlays/${name}`);
  });

  test("base: valid, locked down, autoscalers and budgets in place", () => {
    const objects = rendered("base");
    checkCommon(objects);
    checkDisruptionBudgets(objects);
    checkAutoscalers(objects, 1);
  });

  test("dev: valid, one replica of everything, no autoscaling", () => {
    const objects = rendered("dev");
    checkCommon(objects);
    assert.deepEqual(ofKind(objects, "HorizontalPodAutoscaler").map(id), [], "dev has no HorizontalPodAutoscaler");
    for (const d of ofKind(objects, "Deployment")) assert.equal(d.spec.replicas, 1, `${id(d)}: 1 replica`);
  });

  test("every overlay keeps files in S3: S3_BUCKET required from the Secret, no volume for files in submissions", () => {
    for (const name of ["base", ...overlayNames]) {
      const submissions = ofKind(rendered(name), "Deployment").find((d) => d.metadata.name === "submissions");
      assert.ok(submissions, `${name}: the submissions Deployment`);
      const pod = submissions.spec.template.spec;
      const env = new Map<string, Obj>(pod.containers[0].env.map((e: Obj) => [e.name, e]));
      assert.equal(env.get("S3_BUCKET")?.valueFrom?.secretKeyRef?.optional, false, `${name}: S3_BUCKET is required`);
      for (const key of ["S3_ENDPOINT", "S3_REGION", "S3_FORCE_PATH_STYLE", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"]) {
        assert.equal(env.get(key)?.valueFrom?.secretKeyRef?.key, key, `${name}: ${key} from the Secret`);
      }
      const mounts = pod.containers.flatMap((c: Obj) => c.volumeMounts ?? []).map((m: Obj) => m.mountPath);
      assert.deepEqual(mounts, ["/tmp"], `${name}: submissions mounts /tmp only (files are in the bucket)`);
    }
  });

  test("every overlay backs up: a CronJob dumps every service's schema from the Secret's DATABASE_URL onto a volume, one run at a time", () => {
    for (const name of ["base", ...overlayNames]) {
      const objects = rendered(name);
      const [cron] = ofKind(objects, "CronJob");
      assert.ok(cron, `${name}: a CronJob`);
      assert.equal(cron.spec.concurrencyPolicy, "Forbid", `${name}: ${id(cron)} never runs twice at once`);
      const pod = cron.spec.jobTemplate.spec.template.spec;
      assert.equal(pod.automountServiceAccountToken, false, `${name}: ${id(cron)} has no service account token`);
      const [c] = pod.containers;
      const script = [...(c.command ?? []), ...(c.args ?? [])].join(" ");
      const dumped = [...script.matchAll(/--schema=(\w+)/g)].map((m) => m[1]).sort();
      assert.deepEqual(dumped, [...schemaNames].sort(), `${name}: pg_dump takes every service's schema (serviceNames in config.ts)`);
      assert.deepEqual(dumped, serviceNames().sort(), `${name}: ... which are the services under services/`);
      assert.match(script, /pg_dump --format=custom/, "a custom-format dump, which `restore --from` and pg_restore take");
      assert.equal(c.env.find((e: Obj) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef?.name, secretName, "DATABASE_URL from the Secret");
      const sc = c.securityContext ?? {};
      assert.equal(sc.readOnlyRootFilesystem, true, `${id(cron)}: readOnlyRootFilesystem`);
      assert.equal(sc.allowPrivilegeEscalation, false, `${id(cron)}: allowPrivilegeEscalation false`);
      assert.ok(sc.capabilities?.drop?.includes("ALL"), `${id(cron)}: capabilities drop ALL`);
      assert.equal(pod.securityContext?.runAsNonRoot, true, `${id(cron)}: runAsNonRoot`);
      const mount = c.volumeMounts.find((m: Obj) => m.mountPath === "/backups");
      const volume = pod.volumes.find((v: Obj) => v.name === mount?.name);
      const claim = ofKind(objects, "PersistentVolumeClaim").find((p) => p.metadata.name === volume?.persistentVolumeClaim?.claimName);
      assert.ok(claim, `${name}: the backups land on a rendered PersistentVolumeClaim`);
    }
  });

  test("the restore Job (deploy/k8s/restore, applied by hand) drops and restores every service's schema, locked down like the CronJob", () => {
    const [job] = parseAllDocuments(readFileSync(join(k8sDir, "restore/restore-job.yaml"), "utf8")).map((d) => d.toJS() as Obj);
    new Job(job).validate();
    const [c] = job.spec.template.spec.containers;
    const script = c.args.join(" ");
    const dropped = /drop schema if exists ([\w, ]+) cascade/.exec(script)?.[1].split(/,\s*/).sort();
    assert.deepEqual(dropped, [...schemaNames].sort(), "it drops every service's schema (serviceNames in config.ts)");
    assert.match(script, /pg_restore --exit-on-error --single-transaction/);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(job.spec.template.spec.volumes.find((v: Obj) => v.persistentVolumeClaim)?.persistentVolumeClaim.claimName, "formsvc-backups");
  });

  for (const name of overlayNames.filter((n) => n !== "dev")) {
    test(`${name}: valid, at least 2 replicas of everything, budgets in place`, () => {
      const objects = rendered(name);
      checkCommon(objects);
      checkDisruptionBudgets(objects);
      checkAutoscalers(objects, 2);
      for (const hpa of ofKind(objects, "HorizontalPodAutoscaler")) assert.ok(hpa.spec.minReplicas >= 2, `${id(hpa)}: minReplicas >= 2`);
      if (name === "strimzi") checkStrimzi(objects);
      else assert.equal(objects.filter((o) => o.apiVersion.startsWith("kafka.strimzi.io/")).length, 0, `${name}: no Strimzi resources`);
    });
  }
});

// --- the image -------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments and parser directives dropped. */
function instructions(text: string): Instruction[] {
  const result: Instruction[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (current === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      current += line.slice(0, -1) + " ";
      continue;
    }
    current += line;
    const m = /^(\w+)\s+([\s\S]*)$/.exec(current.trim());
    if (m) result.push({ keyword: m[1].toUpperCase(), args: m[2].trim() });
    current = "";
  }
  return result;
}

/** Whether a .dockerignore keeps `path` out of the build context (the last matching line decides). */
function ignored(patterns: string[], path: string): boolean {
  const toRegExp = (pattern: string) =>
    new RegExp(
      "^" +
        pattern
          .replace(/^\/+/, "")
          .replace(/\/+$/, "")
          .split("")
          .map((ch, i, all) => {
            if (ch === "*") {
              if (all[i + 1] === "*") return "";
              return all[i - 1] === "*" ? ".*" : "[^/]*";
            }
            if (ch === "?") return "[^/]";
            return ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
          })
          .join("")
          .replace(/\.\*\//g, "(?:.*/)?") +
        "$",
    );
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let excluded = false;
  for (const line of patterns) {
    const negated = line.startsWith("!");
    const re = toRegExp(negated ? line.slice(1) : line);
    if (prefixes.some((p) => re.test(p))) excluded = !negated;
  }
  return excluded;
}

describe("container image (deploy/docker/Dockerfile)", () => {
  const text = existsSync(dockerfilePath) ? readFileSync(dockerfilePath, "utf8") : "";
  const steps = instructions(text);
  const stages: { name?: string; base: string; steps: Instruction[] }[] = [];
  for (const step of steps) {
    if (step.keyword === "FROM") {
      const [base, as, name] = step.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      stages.push({ base, name: as?.toUpperCase() === "AS" ? name : undefined, steps: [] });
    } else stages.at(-1)?.steps.push(step);
  }
  const final = stages.at(-1);

  test("every stage builds on BASE, node:24-slim unless the build says otherwise", () => {
    assert.ok(text, "deploy/docker/Dockerfile exists");
    assert.ok(stages.length >= 2, "multi-stage: dependencies apart from the runtime");
    const globalArgs = steps.slice(0, steps.findIndex((s) => s.keyword === "FROM")).filter((s) => s.keyword === "ARG").map((s) => s.args);
    assert.ok(globalArgs.includes("BASE=node:24-slim"), "ARG BASE=node:24-slim before the first FROM");
    const names = new Set<string>();
    for (const stage of stages) {
      assert.ok(stage.base === "${BASE}" || names.has(stage.base), `FROM ${stage.base}: \${BASE}, or an earlier stage`);
      if (stage.name) names.add(stage.name);
    }
    assert.equal(final?.base, "${BASE}", "the runtime stage is the base");
  });

  test("dependencies: npm ci from the lockfile, without devDependencies", () => {
    const runs = stages.flatMap((s) => s.steps).filter((s) => s.keyword === "RUN").map((s) => s.args);
    assert.ok(runs.some((r) => /\bnpm ci\b/.test(r) && /--omit[= ]dev\b/.test(r)), "RUN npm ci --omit=dev");
    assert.ok(!runs.some((r) => /\bnpm (install|i)\b/.test(r)), "npm ci, never npm install");
  });

  test("runtime: not root, production, one image whose command runs a file of the repository", () => {
    assert.ok(final);
    const users = final.steps.filter((s) => s.keyword === "USER").map((s) => s.args.split(":")[0]);
    assert.ok(users.length > 0, "a USER in the runtime stage");
    assert.ok(!["root", "0"].includes(users.at(-1)!), `the runtime stage's USER is ${users.at(-1)}: it must not be root`);
    const env = final.steps.filter((s) => s.keyword === "ENV").map((s) => s.args).join(" ");
    assert.match(env, /\bNODE_ENV[= ]production\b/, "ENV NODE_ENV=production");
    const entry = final.steps.filter((s) => s.keyword === "CMD" || s.keyword === "ENTRYPOINT");
    assert.ok(entry.some((s) => s.keyword === "CMD"), "a CMD");
    for (const step of entry) {
      const words: string[] = JSON.parse(step.args);
      assert.ok(Array.isArray(words), `${step.keyword} in exec form`);
      for (const path of sourcePaths(words)) assert.ok(existsSync(join(root, path)), `${step.keyword} runs ${path}, which is not in the repository`);
    }
    assert.deepEqual(JSON.parse(entry.find((s) => s.keyword === "CMD")!.args), ["node", "gateway/src/server.ts"], "the default command runs the gateway");
  });

  test("runtime: labelled with the release, which the build checks against package.json's version", () => {
    assert.ok(final);
    assert.ok(final.steps.some((s) => s.keyword === "ARG" && /^VERSION$/.test(s.args)), "ARG VERSION (no default: the build passes it)");
    const labels = final.steps.filter((s) => s.keyword === "LABEL").map((s) => s.args).join(" ");
    assert.match(labels, /org\.opencontainers\.image\.version="\$\{VERSION\}"/, "LABEL org.opencontainers.image.version from the build argument");
    const runs = final.steps.filter((s) => s.keyword === "RUN").map((s) => s.args);
    assert.ok(runs.some((r) => r.includes("${VERSION}") && r.includes('require("./package.json").version')), "a RUN that fails the build when VERSION is not package.json's version");
  });

  test("the build context keeps what npm ci and the processes need", () => {
    assert.ok(existsSync(dockerignorePath), "deploy/docker/Dockerfile.dockerignore exists");
    const patterns = readFileSync(dockerignorePath, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    assert.ok(ignored(patterns, "node_modules/x") && ignored(patterns, "services/forms/node_modules/x"), "node_modules stays out of the context");
    assert.ok(ignored(patterns, ".git/HEAD"), ".git stays out of the context");
    const needed = [
      "package.json",
      "package-lock.json",
      ...workspaceDirs().map((dir) => `${dir}/package.json`),
      "gateway/src/server.ts",
      ...serviceNames().map((name) => `services/${name}/src/server.ts`),
      "packages/platform/src/config.ts",
      "packages/cli/src/main.ts",
      // The deps stage runs it after npm ci.
      "deploy/docker/prune-dependencies.ts",
    ];
    for (const path of needed) {
      assert.ok(existsSync(join(root, path)), `${path} exists`);
      assert.ok(!ignored(patterns, path), `${path} is in the build context`);
    }
    for (const path of sourcePaths(steps.filter((s) => s.keyword === "CMD").flatMap((s) => JSON.parse(s.args)))) {
      assert.ok(!ignored(patterns, path), `${path} (the CMD) is in the build context`);
    }
  });
});
