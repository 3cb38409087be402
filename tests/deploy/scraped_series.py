"""The alert rules evaluated by promtool on what real processes exported, scrape by scrape.

A test scrapes running processes (or its own process's registry) at points of its choosing; each
scrape is one step of `interval` in promtool's time, as if Prometheus had scraped then. A target
that did not answer is `up 0` and exports nothing at that step; one that answered is `up 1` with its
samples, labelled `app` and `pod` as the PodMonitor labels them. Only the series the rules read are
kept (and `up`), so the input stays small. `promtool test rules` then says which alerts fire when.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.deploy.monitoring import metric_names, recording_rules, referenced_metric_names, rule_groups

Sample = tuple[str, tuple[tuple[str, str], ...], float]


def samples_of(exposition: str) -> list[Sample]:
    """(name, sorted labels, value) of every sample of a Prometheus text exposition."""
    found = []
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            found.append((sample.name, tuple(sorted(sample.labels.items())), float(sample.value)))
    return found


def scrape_url(url: str) -> list[Sample] | None:
    """One scrape of a /metrics URL; None when the target does not answer (Prometheus's up 0)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return samples_of(answer.read().decode())
    except OSError:
        return None


def scrape_this_process() -> list[Sample]:
    return samples_of(generate_latest(REGISTRY).decode())


def _read_by_rules() -> set[str]:
    names = set(referenced_metric_names()) | {"up"}
    for rule in recording_rules():
        names |= metric_names(rule["expr"])
    return names


def _series_text(name: str, labels: tuple[tuple[str, str], ...]) -> str:
    escaped = ", ".join(
        f'{key}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for key, value in labels
    )
    return f"{name}{{{escaped}}}"


@dataclass
class ScrapedSeries:
    """Scrapes of named targets, step by step (`record`), as promtool input series."""

    interval: str = "15s"
    steps: int = 0
    _values: dict[tuple[str, tuple[tuple[str, str], ...]], dict[int, float]] = field(default_factory=dict)
    _wanted: set[str] = field(default_factory=_read_by_rules)

    def record(self, scrapes: dict[str, list[Sample] | None]) -> None:
        """One step: target (its pod name, e.g. `cashier-0`; the app is the part before the last
        dash) -> its samples, or None when it did not answer."""
        step = self.steps
        for pod, samples in scrapes.items():
            app = pod.rsplit("-", 1)[0]
            target = (("app", app), ("pod", pod))
            self._put("up", target, step, 0.0 if samples is None else 1.0)
            for name, labels, value in samples or ():
                if name in self._wanted and math.isfinite(value):
                    self._put(name, tuple(sorted({**dict(labels), **dict(target)}.items())), step, value)
        self.steps += 1

    def repeat_last(self, steps: int) -> None:
        """The last step again `steps` times: the targets stay as they were last scraped."""
        last = self.steps - 1
        for values in self._values.values():
            if last in values:
                for offset in range(1, steps + 1):
                    values[last + offset] = values[last]
        self.steps += steps

    def _put(self, name: str, labels: tuple[tuple[str, str], ...], step: int, value: float) -> None:
        self._values.setdefault((name, labels), {})[step] = value

    def input_series(self) -> list[dict[str, str]]:
        series = []
        for (name, labels), values in sorted(self._values.items()):
            text = " ".join(_number(values[s]) if s in values else "_" for s in range(self.steps))
            series.append({"series": _series_text(name, labels), "values": text})
        return series

    def value(self, name: str, **labels: str) -> list[float | None]:
        """The series' value at each step (None where absent): to show what the alert saw."""
        wanted = set(labels.items())
        for (found, found_labels), values in self._values.items():
            if found == name and wanted <= set(found_labels):
                return [values.get(s) for s in range(self.steps)]
        return [None] * self.steps


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)


def run_promtool(folder: Path, series: ScrapedSeries, alert_tests: list[dict[str, Any]]) -> str:
    """`promtool test rules` of the cluster's rules on the scraped series; the output on failure."""
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is not installed (apt-get install prometheus)"
    (folder / "rules.yaml").write_text(yaml.safe_dump(rule_groups()))
    document = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": series.interval,
        "tests": [
            {
                "interval": series.interval,
                "input_series": series.input_series(),
                "alert_rule_test": alert_tests,
            }
        ],
    }
    (folder / "scraped_tests.yaml").write_text(yaml.safe_dump(document, width=10_000))
    result = subprocess.run(
        (promtool, "test", "rules", "scraped_tests.yaml"),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return "" if result.returncode == 0 else result.stdout + result.stderr
