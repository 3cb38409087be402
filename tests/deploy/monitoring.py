"""What the monitoring manifests ask of the services: the alert rules, the dashboards' queries, the
metric names they read, and a strict check of custom resources against their CRDs' schemas.

Used by tests/deploy/test_monitoring.py (offline) and tests/e2e/test_observability.py (against the
names the running processes export).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO = Path(__file__).resolve().parents[2]
MONITORING = REPO / "deploy" / "k8s" / "components" / "monitoring"
ALERTS = MONITORING / "alerts.yaml"
DASHBOARDS = sorted((MONITORING / "dashboards").glob("*.json"))
CRD_SCHEMAS = Path(__file__).resolve().parent / "crd_schemas"

# PromQL words that are not metric names: functions and aggregations (always followed by a
# parenthesis, or by `by (...)`), keywords, and the values a Grafana variable stands for.
_AGGREGATIONS = {
    "sum",
    "min",
    "max",
    "avg",
    "count",
    "stddev",
    "stdvar",
    "topk",
    "bottomk",
    "quantile",
    "group",
}
_KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
}


def _rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text())
    return [rule for group in document["spec"]["groups"] for rule in group["rules"]]


def alert_rules() -> list[dict[str, Any]]:
    return [rule for rule in _rules() if "alert" in rule]


def recording_rules() -> list[dict[str, Any]]:
    """The rules that record a series (the error-budget ratios the burn-rate alerts read)."""
    return [rule for rule in _rules() if "record" in rule]


def rule_groups() -> dict[str, Any]:
    """The PrometheusRule's groups as a plain Prometheus rules file (what promtool reads)."""
    return {"groups": yaml.safe_load(ALERTS.read_text())["spec"]["groups"]}


def dashboard_queries() -> Iterator[tuple[str, str, str]]:
    """(dashboard file, panel title, expression) of every query of every panel."""
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                yield path.name, panel["title"], target["expr"]


def without_variables(expression: str) -> str:
    """A dashboard query as Prometheus would get it: Grafana's variables replaced by values."""
    return expression.replace("$pod", ".*").replace("${pod}", ".*")


def metric_names(expression: str) -> set[str]:
    """The metric names a PromQL expression reads."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)  # label values
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        word, rest = match.group(), text[match.end() :].lstrip()
        before = text[: match.start()]
        if rest.startswith("(") or word in _AGGREGATIONS | _KEYWORDS:
            continue
        if re.search(r"[0-9.]$", before) or re.fullmatch(r"\d.*", word):
            continue  # part of a number such as 1e3
        names.add(word)
    return names


def referenced_metric_names() -> dict[str, set[str]]:
    """metric name -> where it is read (alert names and dashboard panels)."""
    where: dict[str, set[str]] = {}
    for rule in alert_rules():
        for name in metric_names(rule["expr"]):
            where.setdefault(name, set()).add(f"alert {rule['alert']}")
    for rule in recording_rules():
        for name in metric_names(rule["expr"]):
            where.setdefault(name, set()).add(f"recording rule {rule['record']}")
    for dashboard, title, expression in dashboard_queries():
        for name in metric_names(without_variables(expression)):
            where.setdefault(name, set()).add(f"{dashboard}: {title}")
    return where


def exposed_names(families: Iterable[tuple[str, str]]) -> set[str]:
    """The sample names a scrape of these (family name, type) pairs can contain."""
    suffixes = {
        "counter": ("_total", "_created"),
        "histogram": ("_bucket", "_count", "_sum", "_created"),
        "summary": ("_count", "_sum", "_created"),
        "gauge": ("",),
        "info": ("_info",),
    }
    names = set()
    for name, kind in families:
        for suffix in suffixes.get(kind, ("",)):
            names.add(name + suffix)
    return names


def _strict(schema: Any) -> Any:
    """A CRD's structural schema with unknown fields refused (the API server prunes them silently,
    which would hide a misspelt field): additionalProperties false wherever properties are listed."""
    if isinstance(schema, dict):
        schema = {key: _strict(value) for key, value in schema.items()}
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and "(?i)" in pattern[1:]:
            # Go's regexp takes flags anywhere; Python's only at the start.
            schema["pattern"] = "(?i)" + pattern.replace("(?i)", "")
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [_strict(value) for value in schema]
    return schema


def crd_schemas() -> dict[tuple[str, str], Any]:
    """(apiVersion, kind) -> the strict JSON schema from the vendored CRDs (crd_schemas/*.json)."""
    schemas = {}
    for path in CRD_SCHEMAS.glob("*.json"):
        vendored = json.loads(path.read_text())
        schema = _strict(vendored["schema"])
        # metadata is the API server's; the CRD schema says only "object".
        schema.setdefault("properties", {})["metadata"] = {"type": "object"}
        schemas[(vendored["apiVersion"], vendored["kind"])] = schema
    return schemas


def validate_custom_resource(document: dict[str, Any], schemas: dict[tuple[str, str], Any]) -> None:
    """Raise jsonschema.ValidationError if the custom resource does not fit its CRD; KeyError if
    no schema is vendored for its kind."""
    schema = schemas[(document["apiVersion"], document["kind"])]
    jsonschema.validate(document, schema, cls=jsonschema.Draft7Validator)
