"""The dashboards and alert rules in deploy/, checked offline.

promtool (Debian's `prometheus` package; .ci/run installs it) checks the PrometheusRule's groups
and runs the alerts' unit tests (monitoring/alert_tests.yaml: each alert fires on the series that
should page, and only then), and checks every dashboard query as an expression. Without promtool
those checks are skipped with a loud message (a failure where POKER_REQUIRE_PROMTOOL=1, as in CI).
Every metric a rule or a dashboard reads is one the services define, every alert has a runbook in
docs/deploy.md, and the custom resources (cert-manager, Prometheus Operator) pass their CRDs' schemas
with unknown fields refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from prometheus_client import REGISTRY

from tests.deploy.monitoring import (
    DASHBOARDS,
    REPO,
    alert_rules,
    crd_schemas,
    dashboard_queries,
    exposed_names,
    metric_names,
    recording_rules,
    referenced_metric_names,
    rule_groups,
    validate_custom_resource,
    without_variables,
)
from tests.deploy.summary import SUMMARY

# Minutes at a 15 s evaluation, and hours (error budgets, spikes) at one minute.
ALERT_TESTS = tuple(
    Path(__file__).resolve().parent / "monitoring" / name
    for name in ("alert_tests.yaml", "alert_tests_hours.yaml")
)
# What the issue says must page an operator.
PAGING = {
    "PokerAuditNotBalanced",
    "PokerSettlementLag",
    "PokerHandsVoided",
    "PokerErrorRate",
    "PokerActLatencyHigh",
    "PokerHouseBankBelowCover",
    "PokerShardWithoutLease",
    # Issue 40: a service or shard down, the first INTERNAL, certificates, error budgets, the front door.
    "PokerServiceDown",
    "PokerShardDown",
    "PokerInternalError",
    "PokerCertificateExpiring",
    "PokerErrorBudgetBurn",
    "PokerSignInRefusalsSpike",
    "PokerRateLimitSpike",
}
# Series Prometheus writes itself for every target (not a service's).
PROMETHEUS_OWN = {"up"}


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        message = "PROMTOOL CHECKS SKIPPED: promtool is not installed (apt-get install prometheus)"
        SUMMARY["promtool"] = message
        if os.environ.get("POKER_REQUIRE_PROMTOOL") == "1":
            pytest.fail(f"{message} (POKER_REQUIRE_PROMTOOL=1)")
        pytest.skip(message)
    return found


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_promtool_accepts_the_alert_rules_and_their_unit_tests_pass(tmp_path: Path) -> None:
    promtool = _promtool()
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rule_groups()))
    checked = _run(promtool, "check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for path in ALERT_TESTS:
        shutil.copy(path, tmp_path / path.name)
    tested = _run(promtool, "test", "rules", *(path.name for path in ALERT_TESTS), cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_promtool_refuses_a_broken_rule(tmp_path: Path) -> None:
    """The check above would pass vacuously if promtool read nothing."""
    promtool = _promtool()
    groups = rule_groups()
    groups["groups"][0]["rules"][0]["expr"] = "min by (pool) (poker_cashier_audit_balanced == "
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(groups))
    assert _run(promtool, "check", "rules", "rules.yaml", cwd=tmp_path).returncode != 0


def test_every_dashboard_query_is_valid_promql(tmp_path: Path) -> None:
    promtool = _promtool()
    rules = [
        {"record": f"dashboard:query:{n}", "expr": without_variables(expression)}
        for n, (_, _, expression) in enumerate(dashboard_queries())
    ]
    assert len(rules) > 30
    (tmp_path / "dashboards.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]})
    )
    checked = _run(promtool, "check", "rules", "dashboards.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_dashboards_are_grafana_dashboards_for_the_cluster_and_a_table_shard() -> None:
    titles = {}
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        titles[dashboard["uid"]] = dashboard["title"]
        ids = [panel["id"] for panel in dashboard["panels"]]
        assert len(ids) == len(set(ids)), path.name
        for panel in dashboard["panels"]:
            assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
            if panel["type"] != "row":
                assert panel["targets"], f"{path.name}: {panel['title']} has no query"
                assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])
        variables = {v["name"] for v in dashboard["templating"]["list"]}
        assert "datasource" in variables
    assert set(titles) == {"poker-cluster", "poker-table-shard"}
    shard = json.loads((DASHBOARDS[0].parent / "poker-table-shard.json").read_text())
    assert all('pod=~"$pod"' in t["expr"] for p in shard["panels"] for t in p.get("targets", []))


def _defined_metric_names() -> set[str]:
    # The modules that define metrics register them when imported, as in each service process.
    import service_runtime.certificate_expiry
    import service_runtime.storage_metrics
    import service_runtime.tracing  # noqa: F401
    import services.cashier.audit_watch
    import services.cashier.money_metrics
    import services.gateway.metrics
    import services.table.metrics  # noqa: F401

    recorded = {rule["record"] for rule in recording_rules()}
    return (
        exposed_names((family.name, family.type) for family in REGISTRY.collect()) | recorded | PROMETHEUS_OWN
    )


def test_every_metric_a_rule_or_dashboard_reads_is_defined_by_a_service() -> None:
    """The end-to-end test (tests/e2e/test_observability.py) checks the same against what the
    running processes export."""
    referenced = referenced_metric_names()
    assert {
        "poker_cashier_audit_balanced",
        "grpc_server_handled_total",
        "poker_settlement_seconds_bucket",
    } <= set(referenced)
    missing = {
        name: sorted(where) for name, where in referenced.items() if name not in _defined_metric_names()
    }
    assert not missing, missing


def test_metric_names_are_read_from_promql_as_prometheus_would() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (le, grpc_method) (rate(grpc_client_handling_seconds_bucket{grpc_code!="OK",'
        ' pod=~".*"}[5m]))) > on () group_left () max(poker_house_bank_minimum_chips) or time() - up'
    )
    assert metric_names(expression) == {
        "grpc_client_handling_seconds_bucket",
        "poker_house_bank_minimum_chips",
        "up",
    }


def _heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the Markdown headings (outside code blocks)."""
    anchors, fenced = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("#") and not fenced:
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^a-z0-9 _-]", "", title).replace(" ", "-"))
    return anchors


def test_every_alert_pages_or_tickets_and_has_a_runbook() -> None:
    anchors = _heading_anchors((REPO / "docs" / "deploy.md").read_text())
    rules = alert_rules()
    assert {rule["alert"] for rule in rules if rule["labels"]["severity"] == "page"} >= PAGING
    for rule in rules:
        assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
        runbook = rule["annotations"]["runbook"]
        assert runbook == f"docs/deploy.md#{rule['alert'].lower()}", rule["alert"]
        assert runbook.split("#")[1] in anchors, f"docs/deploy.md has no section {rule['alert']}"


def test_custom_resources_pass_their_crds_schemas_strictly(rendered_production: list[dict]) -> None:
    schemas = crd_schemas()
    custom = [
        d
        for d in rendered_production
        if d["apiVersion"].split("/")[0] in ("cert-manager.io", "monitoring.coreos.com")
    ]
    assert {d["kind"] for d in custom} == {"Issuer", "Certificate", "PodMonitor", "PrometheusRule"}
    for document in custom:
        validate_custom_resource(document, schemas)
    # Not vacuous: a misspelt field is refused.
    certificate = next(d for d in custom if d["kind"] == "Certificate")
    certificate["spec"]["dnsName"] = ["typo"]
    with pytest.raises(jsonschema.ValidationError):
        validate_custom_resource(certificate, schemas)


def test_panels_of_counters_show_zero_rather_than_no_data() -> None:
    """A counter that has not moved yet is a 0 on the dashboard, not Grafana's "No data" (the
    services pre-initialise their fixed label sets; `noValue` covers the rest)."""
    checked = 0
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            if any("_total" in target["expr"] for target in panel.get("targets", [])):
                assert panel["fieldConfig"]["defaults"].get("noValue") == "0", (
                    f"{path.name}: {panel['title']}"
                )
                checked += 1
    assert checked > 15


def test_every_alert_has_a_promtool_case_where_it_fires_and_one_where_it_does_not() -> None:
    cases = [case for path in ALERT_TESTS for case in yaml.safe_load(path.read_text())["tests"]]
    fires, quiet = set(), set()
    for case in cases:
        for check in case["alert_rule_test"]:
            (fires if check["exp_alerts"] else quiet).add(check["alertname"])
    alerts = {rule["alert"] for rule in alert_rules()}
    assert alerts - fires == set(), "alerts no case sees fire"
    assert alerts - quiet == set(), "alerts no case sees stay quiet"
