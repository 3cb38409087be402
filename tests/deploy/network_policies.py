"""A small evaluator of Kubernetes NetworkPolicies, enough to ask "who can reach this port".

It follows the API's semantics for what the manifests use: a pod selected by any policy of a type
is isolated for that direction and accepts only what some rule of those policies allows; a rule with
no `from`/`to` allows every peer, one with no `ports` every port; a peer with only `podSelector`
means pods of the same namespace; `namespaceSelector: {}` means any namespace. All pods here are
assumed to be in the policies' namespace unless they are "elsewhere".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Labels = Mapping[str, str]


@dataclass(frozen=True)
class Pod:
    name: str
    labels: Labels
    elsewhere: bool = False  # in another namespace


EXTERNAL = Pod("external", {}, elsewhere=True)  # an address outside the cluster (a managed database)


def selects(selector: Mapping[str, Any] | None, labels: Labels) -> bool:
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _peer_matches(peer: Mapping[str, Any], pod: Pod) -> bool:
    if "ipBlock" in peer:
        return pod is EXTERNAL
    if pod is EXTERNAL:
        return False
    if "namespaceSelector" in peer:
        # Only `{}` (every namespace) is used; a pod of this namespace matches it too.
        if peer["namespaceSelector"] not in ({}, None):
            return False
    elif pod.elsewhere:
        return False
    return selects(peer.get("podSelector"), pod.labels)


def _port_matches(rule: Mapping[str, Any], port: int) -> bool:
    ports = rule.get("ports")
    return not ports or any(p.get("port") == port and p.get("protocol", "TCP") == "TCP" for p in ports)


def _allowed(
    policies: Sequence[Mapping[str, Any]], subject: Pod, peer: Pod, port: int, direction: str
) -> bool:
    kind, rules_key, peers_key = (
        ("Ingress", "ingress", "from") if direction == "in" else ("Egress", "egress", "to")
    )
    isolating = [
        p
        for p in policies
        if kind in p["spec"].get("policyTypes", ["Ingress"])
        and selects(p["spec"].get("podSelector"), subject.labels)
    ]
    if subject is EXTERNAL or subject.elsewhere or not isolating:
        return True
    for policy in isolating:
        for rule in policy["spec"].get(rules_key) or []:
            peers = rule.get(peers_key)
            if _port_matches(rule, port) and (not peers or any(_peer_matches(p, peer) for p in peers)):
                return True
    return False


def can_connect(policies: Sequence[Mapping[str, Any]], source: Pod, target: Pod, port: int) -> bool:
    return _allowed(policies, source, target, port, "out") and _allowed(policies, target, source, port, "in")
