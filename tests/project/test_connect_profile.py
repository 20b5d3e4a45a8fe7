"""A profile naming a Spark Connect server: bad values exit 2 naming profiles.yml and the key,
before anything connects; the token never shows (tests/connect/ runs a real server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.connect_profile import connect_address
from tests.features.test_bad_inputs import assert_clean_failure, run_main
from tests.vocabulary.test_faults import project_with

SECRET = "sekr1t-token-value"


@pytest.mark.parametrize(
    "case",
    [
        ({"connect_url": "'http://host:15002'"}, "connect_url", "sc://HOST:PORT"),
        ({"connect_url": "'sc://'"}, "connect_url", "sc://HOST:PORT"),
        ({"connect_url": "'sc://h:1/;token=" + SECRET + "'"}, "connect_url", "connect_token"),
        ({"connect_url": "'sc://h:1/;bogus=1'"}, "connect_url", "accepted: use_ssl"),
        ({}, "connect_token", "set `connect_url`"),
        ({"connect_use_ssl": "true"}, "connect_use_ssl", "set `connect_url`"),
        ({"connect_url": "'sc://h:1'", "master": "'local[2]'"}, "master", "Connect server"),
        ({"connect_url": "'sc://h:1'", "jars": "[a.jar]"}, "jars", "Connect server"),
        (
            {"connect_url": "'sc://h:1'", "catalog_type": "hive", "uri": "thrift://h:9083"},
            "catalog_type",
            "rest or jdbc",
        ),
        (
            {"connect_url": "'sc://h:1'", "warehouse": "s3://bucket/wh"},
            "catalog_type",
            "local folder",
        ),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["run"], ["build"], ["compile"], ["ls"], ["test"], ["docs", "generate"]],
    ids=" ".join,
)
def test_bad_connect_settings_exit_2_naming_the_key(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    case: tuple[dict[str, str], str, str],
    command: list[str],
) -> None:
    """Each refused before a connection is tried, without the token's value, by every command
    that loads the profile."""
    settings, key, says = case
    monkeypatch.setenv("LW_CONNECT_TOKEN", SECRET)
    token = "\"{{ env_var('LW_CONNECT_TOKEN') }}\""
    if "connect_url" in settings or not settings:
        settings = {**settings, "connect_token": token}
    root = project_with(tmp_path, **settings)
    out = run_main(monkeypatch, capsys, "--project-dir", str(root), *command)
    assert_clean_failure(*out, "profiles.yml", f"[demo.outputs.dev.{key}]", says)
    assert SECRET not in out[1]
    assert not (root / "warehouse").exists()


def test_the_token_joins_the_address_only_where_the_client_dials() -> None:
    from lakewide.project.profiles import Output

    output = Output(connect_url="sc://h:15002", connect_token=SECRET, connect_use_ssl=True)
    assert connect_address(output) == f"sc://h:15002/;use_ssl=true;token={SECRET}"
    assert SECRET not in repr(output) and SECRET in output.secret_values()
    with_params = Output(connect_url="sc://h:15002/;user_id=me", connect_token=SECRET)
    assert connect_address(with_params) == f"sc://h:15002/;user_id=me;token={SECRET}"


def test_threads_over_connect_are_refused_before_anything_connects(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = project_with(tmp_path, connect_url="'sc://127.0.0.1:1'")
    for command in ("run", "build"):
        out = run_main(monkeypatch, capsys, "--project-dir", str(root), command, "--threads", "2")
        assert_clean_failure(*out, "--threads above 1 is not supported over Spark Connect")
        assert "connecting" not in out[1]
