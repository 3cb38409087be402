"""The overlays as the cluster gets them: `kubectl kustomize` output, or a loud skip without kubectl."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.summary import SUMMARY

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def render(overlay: str) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        SUMMARY["kubectl"] = (
            "KUBERNETES MANIFEST CHECKS SKIPPED: kubectl is not installed (kubectl kustomize renders them)"
        )
        pytest.skip(str(SUMMARY["kubectl"]))
    result = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY / "k8s" / "overlays" / overlay)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]
