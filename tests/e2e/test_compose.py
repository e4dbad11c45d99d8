"""docker-compose.yml, validated by the compose client itself (it needs no Docker engine for ``config``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"POSTGRES_PASSWORD": "pg-test-secret", "REDIS_PASSWORD": "redis-test-secret"}


def _compose() -> list[str]:
    """``docker compose`` (v2 plugin) when present, else ``docker-compose`` (Debian's package)."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    pytest.fail("no compose client: scripts/test installs Debian's docker-compose package")


def _config(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in SECRETS and not k.startswith("COMPOSE_")}
    return subprocess.run(
        [*_compose(), "-f", str(ROOT / "docker-compose.yml"), *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def resolved() -> dict[str, Any]:
    """The file as the compose client resolves it (interpolated, with the flower profile)."""
    result = _config("--profile", "flower", "config", env=SECRETS)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = yaml.safe_load(result.stdout)
    return loaded


def test_compose_validates_and_has_every_service(resolved: dict[str, Any]) -> None:
    assert set(resolved["services"]) == {"postgres", "redis", "migrate", "worker", "scheduler", "flower"}


def test_databases_have_passwords_and_publish_no_ports(resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    for name in ("postgres", "redis", "migrate", "worker", "scheduler"):
        assert "ports" not in services[name], name
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == SECRETS["POSTGRES_PASSWORD"]
    command = " ".join(services["redis"]["command"])
    assert "--requirepass redis-test-secret" in command
    assert "--appendonly yes" in command and "--maxmemory-policy noeviction" in command
    # Flower is the one exception, on loopback only.
    (port,) = services["flower"]["ports"]
    assert str(port.get("host_ip", port) if isinstance(port, dict) else port).startswith("127.0.0.1")


def test_worker_scheduler_and_migrate_are_wired(resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    env = services["worker"]["environment"]
    assert env["SLEEPCOMPACT_BROKER_URL"].startswith("redis://:redis-test-secret@redis:6379")
    assert env["SLEEPCOMPACT_DATABASE_URL"].startswith("postgresql://sleepcompact:pg-test-secret@postgres")
    assert services["migrate"]["command"] == ["init"] and services["migrate"]["restart"] == "no"
    assert services["worker"]["command"] == ["worker"]
    assert services["scheduler"]["command"] == ["scheduler"]
    assert services["scheduler"]["deploy"]["replicas"] == 1  # exactly one beat
    for name in ("worker", "scheduler"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    for name in ("postgres", "redis", "worker", "scheduler"):
        assert services[name]["healthcheck"]["test"], name
        assert services[name]["restart"] == "unless-stopped", name
    assert services["flower"]["profiles"] == ["flower"]


def test_a_missing_password_is_refused_with_its_name() -> None:
    result = _config("config", env={"REDIS_PASSWORD": "x"})
    assert result.returncode != 0 and "POSTGRES_PASSWORD" in result.stderr
