"""The Kubernetes manifests and the compose file, checked offline.

`kubectl kustomize` renders each overlay; the output must pass `kubernetes-validate --strict` for
every Kubernetes version we support, and the policies the deployment promises are checked on the
rendered objects: probes, limits and a locked-down security context on every container; no secret
value anywhere in the repository; who may call the cashier and fairness, and who reaches the
databases. Where kubectl is missing the rendering checks are skipped with a loud message.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service_runtime.server import LIVENESS_SERVICE
from service_runtime.service_settings import DEV_SIGNING_KEY
from services.fairness.settings import DEV_SEED_KEY_HEX
from services.table.settings import TableSettings
from tests.deploy.monitoring import crd_schemas, validate_custom_resource
from tests.deploy.network_policies import EXTERNAL, Pod, can_connect
from tests.deploy.rendering import render as _render

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
OVERLAYS = ("dev", "production")
# The Kubernetes versions we support: every minor release from 1.30 on; the oldest, a middle one
# and the newest schema that kubernetes-validate ships are checked.
KUBERNETES_VERSIONS = ("1.30.0", "1.33.0", "1.35.0")
SERVICES = {"lobby": 50051, "table": 50052, "cashier": 50053, "fairness": 50054, "history": 50055}
# Every process Prometheus scrapes, by the port it serves on: the services and the players' gateway.
SCRAPED = {**SERVICES, "gateway": 50056}
WORKLOAD_KINDS = {"Deployment", "StatefulSet"}
DATABASE_CLIENTS = {"cashier", "fairness", "lobby", "history"}
REDIS_CLIENTS = {"table", "lobby"}
# Custom resources (cert-manager, the Prometheus Operator), validated against their vendored CRDs.
CUSTOM_GROUPS = {"cert-manager.io", "monitoring.coreos.com"}
METRICS_PORT, HEALTH_PORT = 9464, 8081
TLS_FILES = {
    "POKER_TLS_CERT_FILE": "/etc/poker/tls/tls.crt",
    "POKER_TLS_KEY_FILE": "/etc/poker/tls/tls.key",
    "POKER_TLS_CA_FILE": "/etc/poker/tls/ca.crt",
}


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {overlay: _render(overlay) for overlay in OVERLAYS}


def _of_kind(docs: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in kinds]


def _config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(c for c in _of_kind(docs, "ConfigMap") if c["metadata"]["name"] == "poker-config")


def _containers(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for workload in _of_kind(docs, *WORKLOAD_KINDS):
        pod = workload["spec"]["template"]["spec"]
        for container in pod.get("initContainers", []) + pod["containers"]:
            yield workload["metadata"]["name"], pod, container


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_and_passes_strict_schema_validation(
    rendered: dict[str, list[dict[str, Any]]], overlay: str, version: str
) -> None:
    schemas = crd_schemas()
    for doc in rendered[overlay]:
        if doc["apiVersion"].split("/")[0] in CUSTOM_GROUPS:
            # cert-manager and Prometheus Operator kinds: their CRDs' schemas, unknown fields refused.
            validate_custom_resource(doc, schemas)
        else:
            kubernetes_validate.validate(doc, version, strict=True)


def test_strict_validation_rejects_a_misspelt_field(rendered: dict[str, list[dict[str, Any]]]) -> None:
    # The check above would pass vacuously if the validator ignored unknown fields.
    workload = _of_kind(rendered["production"], "Deployment")[0]
    workload["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(workload, KUBERNETES_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_has_probes_limits_and_a_locked_down_security_context(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    containers = list(_containers(rendered[overlay]))
    assert containers
    for workload, pod, container in containers:
        where = f"{overlay}/{workload}/{container['name']}"
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert probe in container, f"{where}: no {probe}"
        resources = container.get("resources", {})
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(resources.get(kind, {})), f"{where}: {kind} incomplete"
        security = container.get("securityContext", {})
        assert security.get("runAsNonRoot") or pod.get("securityContext", {}).get("runAsNonRoot"), where
        assert security.get("allowPrivilegeEscalation") is False, where
        assert security.get("readOnlyRootFilesystem") is True, where
        assert security.get("privileged", False) is False, where
        assert security.get("capabilities", {}).get("drop") == ["ALL"], where
        assert not security.get("capabilities", {}).get("add"), where
        seccomp = security.get("seccompProfile") or pod.get("securityContext", {}).get("seccompProfile")
        assert seccomp == {"type": "RuntimeDefault"}, where
        assert pod.get("automountServiceAccountToken") is False, where


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_runs_from_the_one_image_with_native_grpc_probes_and_a_metrics_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    docs = rendered[overlay]
    workloads = {
        w["metadata"]["name"]: w for w in _of_kind(docs, *WORKLOAD_KINDS) if w["metadata"]["name"] in SERVICES
    }
    assert set(workloads) == set(SERVICES)
    assert workloads["table"]["kind"] == "StatefulSet"
    images = set()
    for name, port in SERVICES.items():
        (container,) = workloads[name]["spec"]["template"]["spec"]["containers"]
        images.add(container["image"])
        assert container["command"] == ["python3", "-m", f"services.{name}"]
        assert (REPO / "services" / name / "__main__.py").is_file()
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"grpc": port, "metrics": METRICS_PORT, "health": HEALTH_PORT}, name
        # Kubelet's gRPC probes cannot speak TLS: they ask the plaintext health-only port.
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == HEALTH_PORT, f"{name} {probe}"
    config = _config(docs)
    assert config["data"]["POKER_METRICS_PORT"] == str(METRICS_PORT)
    assert config["data"]["POKER_HEALTH_PORT"] == str(HEALTH_PORT)
    assert len(images) == 1, images


def test_table_shards_have_stable_names_and_a_grace_period_that_covers_the_drain(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    docs = rendered["production"]
    (table,) = [w for w in _of_kind(docs, "StatefulSet") if w["metadata"]["name"] == "table"]
    (service,) = [
        s for s in _of_kind(docs, "Service") if s["metadata"]["name"] == table["spec"]["serviceName"]
    ]
    assert service["spec"]["clusterIP"] == "None"
    config = _config(docs)
    pod = table["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    data = config["data"]
    # The grace period follows the drain setting (issue 26): the preStop pause, then on SIGTERM the
    # drain (hands played out, rooms handed over), the one-second pause, the grace for in-flight RPCs.
    pre_stop_pause = _pre_stop_pause(container)
    drain = float(data["POKER_TABLE_DRAIN_SECONDS"])
    grace = float(data["POKER_TABLE_SHUTDOWN_GRACE_SECONDS"])
    assert pod["terminationGracePeriodSeconds"] >= pre_stop_pause + drain + 1 + grace + 10
    # The drain time is one the shard accepts: at least a hand in which every seat uses its whole
    # action time and time bank at the configured clocks.
    clocks = {
        name: float(data[f"POKER_TABLE_{name.upper()}"])
        for name in ("action_seconds", "time_bank_seconds", "countdown_seconds", "house_decision_seconds")
        if f"POKER_TABLE_{name.upper()}" in data
    }
    assert drain >= TableSettings(**clocks).longest_hand_seconds()  # type: ignore[arg-type]
    # Readiness goes NOT_SERVING when the drain starts; liveness asks for the entry that stays SERVING
    # until the process stops, so the kubelet does not kill a shard that is playing its hands out.
    assert "service" not in container["readinessProbe"]["grpc"]
    assert container["livenessProbe"]["grpc"]["service"] == LIVENESS_SERVICE
    # The same bound in the compose file.
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["table"]
    assert float(compose["environment"]["POKER_TABLE_DRAIN_SECONDS"]) == drain
    stop_grace = float(compose["stop_grace_period"].removesuffix("s"))
    assert stop_grace >= drain + 1 + float(compose["environment"]["POKER_TABLE_SHUTDOWN_GRACE_SECONDS"])


def _pre_stop_pause(container: dict[str, Any]) -> float:
    """The seconds the container's preStop hook sleeps (`python3 -c "import time; time.sleep(N)"`)."""
    command = " ".join(container["lifecycle"]["preStop"]["exec"]["command"])
    found = re.search(r"time\.sleep\(([0-9.]+)\)", command)
    assert found is not None, command
    return float(found.group(1))


def test_each_table_shard_keeps_its_data_folder_across_restarts(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """The house-game round journal lives in POKER_DATA_DIR: on a read-only root file system it needs
    a mount, and it must outlive the pod (a restarted shard resumes or refunds its open rounds)."""
    for overlay in OVERLAYS:
        (table,) = [w for w in _of_kind(rendered[overlay], "StatefulSet") if w["metadata"]["name"] == "table"]
        (claim,) = table["spec"]["volumeClaimTemplates"]
        (container,) = table["spec"]["template"]["spec"]["containers"]
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        assert mounts[claim["metadata"]["name"]] == "/var/lib/poker"  # the image's POKER_DATA_DIR
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert any(v.endswith(":/var/lib/poker") for v in compose["services"]["table"]["volumes"])


def test_production_spreads_replicas_budgets_disruptions_and_scales_the_stateless_services(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    docs = rendered["production"]
    workloads = {w["metadata"]["name"]: w for w in _of_kind(docs, *WORKLOAD_KINDS)}
    budgets = {
        b["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"]
        for b in _of_kind(docs, "PodDisruptionBudget")
    }
    assert budgets == set(SERVICES) | {"gateway"}
    for name, workload in workloads.items():
        assert workload["spec"]["replicas"] >= 2, name
        assert "podAntiAffinity" in workload["spec"]["template"]["spec"].get("affinity", {}), name
    scaled = {h["spec"]["scaleTargetRef"]["name"]: h for h in _of_kind(docs, "HorizontalPodAutoscaler")}
    assert set(scaled) == {"lobby", "cashier", "fairness", "history"}
    for name, hpa in scaled.items():
        assert workloads[name]["kind"] == hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]


def _pods(docs: list[dict[str, Any]]) -> list[Pod]:
    pods = [
        Pod(w["metadata"]["name"], w["spec"]["template"]["metadata"]["labels"])
        for w in _of_kind(docs, *WORKLOAD_KINDS)
    ]
    return [
        *pods,
        Pod("gateway", {"poker.example/role": "gateway"}, elsewhere=True),
        Pod("payments", {"poker.example/role": "payments"}, elsewhere=True),
        Pod("ingress-controller", {"app.kubernetes.io/name": "ingress-nginx"}, elsewhere=True),
        Pod("stranger-here", {"app.kubernetes.io/name": "debug-shell"}),
        Pod("stranger-elsewhere", {}, elsewhere=True),
    ]


def _callers(docs: list[dict[str, Any]], target_name: str, port: int) -> set[str]:
    policies = _of_kind(docs, "NetworkPolicy")
    pods = _pods(docs)
    target = EXTERNAL if target_name == "external" else next(p for p in pods if p.name == target_name)
    return {p.name for p in pods if p is not target and can_connect(policies, p, target, port)}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_is_reached_by_exactly_the_callers_docs_access_md_grants(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    # docs/access.md: players and admins (through the gateways) read balances, statements and the
    # audit; only the payments gateway buys and withdraws; anyone authenticated verifies a deck.
    docs = rendered[overlay]
    # No cashier RPC is granted to the lobby (docs/access.md), so no path either.
    assert _callers(docs, "cashier", 50053) == {"table", "history", "gateway", "payments"}
    assert _callers(docs, "fairness", 50054) == {"table", "gateway"}
    assert _callers(docs, "table", 50052) == {"lobby", "gateway"}
    assert _callers(docs, "lobby", 50051) == {"table", "gateway"}
    assert _callers(docs, "history", 50055) == {"table", "gateway"}


def test_nothing_but_their_owners_reaches_the_databases(rendered: dict[str, list[dict[str, Any]]]) -> None:
    # Production: PostgreSQL and Redis are outside the cluster, so egress is what fences them.
    production = rendered["production"]
    assert _callers(production, "external", 5432) == DATABASE_CLIENTS | {
        "gateway",
        "payments",
        "ingress-controller",
        "stranger-elsewhere",
    }
    assert _callers(production, "external", 6379) == REDIS_CLIENTS | {
        "gateway",
        "payments",
        "ingress-controller",
        "stranger-elsewhere",
    }
    # Dev: they are pods in the namespace, fenced both ways.
    dev = rendered["dev"]
    assert _callers(dev, "postgres", 5432) == DATABASE_CLIENTS
    assert _callers(dev, "redis", 6379) == REDIS_CLIENTS


def test_no_secret_value_is_in_the_repository(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert _of_kind(rendered["production"], "Secret") == []
    # The dev overlay's Secrets hold only in-cluster addresses without a password.
    for secret in _of_kind(rendered["dev"], "Secret"):
        for key, value in (secret.get("data") or {}).items():
            text = base64.b64decode(value).decode()
            assert re.fullmatch(r"POKER_(\w+_DATABASE_URL|REDIS_URL)", key), key
            assert re.fullmatch(r"(postgresql\+psycopg|redis)://(postgres@)?[a-z]+:\d+/\w+", text), text
    files = [
        p for p in [*DEPLOY.rglob("*"), REPO / "docs" / "deploy.md"] if p.is_file() and p.suffix != ".whl"
    ]
    for path in files:
        text = path.read_text(errors="replace")
        assert DEV_SIGNING_KEY not in text, path
        assert DEV_SEED_KEY_HEX not in text.lower(), path
        assert "PRIVATE KEY-----" not in text, path
        passwords = re.findall(r"://[^/\s:@]+:([^/\s@]+)@", text)
        # Placeholders such as ${CASHIER_DB_PASSWORD} in the docs are fine; a literal password is not.
        assert all(re.fullmatch(r"\$\{?[A-Z_]+\}?", pw) for pw in passwords), f"{path}: a URL with a password"
        assert not re.search(r"\b[0-9a-fA-F]{48,}\b", text), f"{path}: something that looks like key material"


def test_every_secret_the_manifests_reference_is_documented(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    guide = (REPO / "docs" / "deploy.md").read_text()
    referenced = {
        source["secretRef"]["name"]
        for _, _, container in _containers(rendered["production"])
        for source in container.get("envFrom", [])
        if "secretRef" in source
    }
    assert referenced
    for name in referenced:
        assert f"`{name}`" in guide, f"docs/deploy.md does not say how to create Secret {name}"


def test_compose_runs_every_service_from_the_one_image_locked_down() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(SERVICES) <= set(services)
    for name, port in SERVICES.items():
        service = services[name]
        assert service["command"] == ["python3", "-m", f"services.{name}"]
        assert service["image"] == services["lobby"]["image"]
        assert service["read_only"] is True, name
        assert service["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in service["security_opt"], name
        published = [f"127.0.0.1:{port}:{port}"]
        if name == "table":  # the gateway runs in the table's network (compose.yaml)
            published.append("127.0.0.1:50056:50056")
        assert service["ports"] == published, name
        assert service["environment"][f"POKER_{name.upper()}_HOST"] == "0.0.0.0"
    for name in ("postgres", "redis"):
        assert "ports" not in services[name], f"{name} must not be published"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_is_reached_only_from_the_ingress_over_tls_and_probed_over_http(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    docs = rendered[overlay]
    assert _callers(docs, "gateway", 50056) == {"ingress-controller"}
    assert _callers(docs, "gateway", 50057) == {"ingress-controller"}
    (gateway,) = [w for w in _of_kind(docs, "Deployment") if w["metadata"]["name"] == "gateway"]
    (container,) = gateway["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["python3", "-m", "services.gateway"]
    # Measured like every service: its metrics port, set by the shared ConfigMap it reads.
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 50056, "staff": 50057, "metrics": METRICS_PORT}
    config_maps = {s["configMapRef"]["name"] for s in container.get("envFrom", []) if "configMapRef" in s}
    assert [name for name in config_maps if re.fullmatch(r"poker-config(-\w+)?", name)]
    assert _config(docs)["data"]["POKER_METRICS_PORT"] == str(METRICS_PORT)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert gateway["spec"]["template"]["metadata"]["labels"]["poker.example/role"] == "gateway"
    # The services' signing keys never reach the internet-facing gateway: it has its own player-scoped one.
    # (The dev overlay's generated Secrets carry a hash suffix.)
    secrets = {s["secretRef"]["name"] for s in container.get("envFrom", []) if "secretRef" in s}
    assert not [name for name in secrets if name.startswith("poker-auth")]
    assert [name for name in secrets if re.fullmatch(r"poker-gateway(-\w+)?", name)]
    ingresses = {i["metadata"]["name"]: i for i in _of_kind(docs, "Ingress")}
    assert set(ingresses) == {"gateway", "backoffice"}
    ingress = ingresses["gateway"]
    assert ingress["spec"]["tls"][0]["secretName"] == "poker-gateway-tls"
    (service,) = [s for s in _of_kind(docs, "Service") if s["metadata"]["name"] == "gateway"]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    # Issue 38: the staff door is never reachable through the players' address. The players' Service
    # has no staff port and their Ingress names only it; the back office has its own Service, host,
    # certificate and an allow-list of source addresses.
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    assert env["POKER_GATEWAY_STAFF_PORT"] == "50057"
    backoffice = ingresses["backoffice"]
    (staff_service,) = [s for s in _of_kind(docs, "Service") if s["metadata"]["name"] == "gateway-staff"]
    assert [p["targetPort"] for p in staff_service["spec"]["ports"]] == ["staff"]
    (rule,) = backoffice["spec"]["rules"]
    assert [p["backend"]["service"] for p in rule["http"]["paths"]] == [
        {"name": "gateway-staff", "port": {"name": "staff"}}
    ]
    assert rule["host"] != ingress["spec"]["rules"][0]["host"]
    assert backoffice["spec"]["tls"][0]["secretName"] == "poker-backoffice-tls"
    assert backoffice["metadata"]["annotations"]["nginx.ingress.kubernetes.io/whitelist-source-range"]
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            assert path["backend"]["service"]["name"] == "gateway"
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert compose["services"]["gateway"]["command"] == ["python3", "-m", "services.gateway"]


def test_production_speaks_mutual_tls_with_certificates_from_cert_manager(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    docs = rendered["production"]
    config = _config(docs)["data"]
    assert {key: config.get(key) for key in TLS_FILES} == TLS_FILES
    certificates = {c["metadata"]["name"]: c for c in _of_kind(docs, "Certificate")}
    issuers = {i["metadata"]["name"]: i for i in _of_kind(docs, "Issuer")}
    assert certificates["poker-ca"]["spec"]["isCA"] is True
    assert issuers["poker-ca"]["spec"]["ca"]["secretName"] == certificates["poker-ca"]["spec"]["secretName"]
    for name, workload in ((w["metadata"]["name"], w) for w in _of_kind(docs, *WORKLOAD_KINDS)):
        certificate = certificates[f"{name}-tls"]["spec"]
        assert certificate["issuerRef"]["name"] == "poker-ca"
        # One certificate serves and calls: mutual TLS.
        assert {"server auth", "client auth"} <= set(certificate["usages"]), name
        assert name in certificate["dnsNames"], name
        assert certificate["privateKey"]["rotationPolicy"] == "Always"
        pod = workload["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/etc/poker/tls"]
        assert mount["readOnly"] is True
        assert volumes[mount["name"]]["secret"]["secretName"] == certificate["secretName"], name
    # Table shards are dialled by their own names under the headless Service (table-0.table:50052).
    assert "*.table" in certificates["table-tls"]["spec"]["dnsNames"]
    assert any(
        e["value"].endswith(".table:50052")
        for e in next(w for w in _of_kind(docs, "StatefulSet"))["spec"]["template"]["spec"]["containers"][0][
            "env"
        ]
        if e["name"] == "POKER_TABLE_ADVERTISE_ADDRESS"
    )
    # Development stays plaintext (no certificate is mounted there).
    assert not any(key in _config(rendered["dev"])["data"] for key in TLS_FILES)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_prometheus_reaches_the_metrics_ports(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    docs = rendered[overlay]
    policies = _of_kind(docs, "NetworkPolicy")
    prometheus = Pod("prometheus", {"poker.example/role": "monitoring"}, elsewhere=True)
    for name, port in SCRAPED.items():
        target = next(p for p in _pods(docs) if p.name == name)
        callers = {
            p.name
            for p in [*_pods(docs), prometheus]
            if p is not target and can_connect(policies, p, target, METRICS_PORT)
        }
        assert callers == {"prometheus"}, (name, callers)
        # And Prometheus reaches nothing else of theirs.
        assert not can_connect(policies, prometheus, target, port), name


def test_prometheus_scrapes_every_service_and_the_gateway_on_their_metrics_port() -> None:
    monitor = yaml.safe_load((DEPLOY / "k8s" / "components" / "monitoring" / "podmonitor.yaml").read_text())
    (selected,) = monitor["spec"]["selector"]["matchExpressions"]
    assert selected["key"] == "app.kubernetes.io/name"
    assert selected["operator"] == "In"
    assert set(selected["values"]) == set(SCRAPED)
    assert [endpoint["port"] for endpoint in monitor["spec"]["podMetricsEndpoints"]] == ["metrics"]
