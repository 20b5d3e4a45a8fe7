"""S3 profile keys without a JVM: ``s3_*`` -> Iceberg's S3FileIO catalog properties (the secret
set only on the running session), the AWS bundle on Spark's classpath and shipped to executors,
the embedded default untouched, signed requests built as AWS documents them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.profiles import Output
from lakewide.project.profiles_file import load_output
from lakewide.spark.session import Session
from lakewide.state.s3_objects import S3Client, split_location
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PROFILE = """\
demo:
  target: team
  outputs:
    team:
      catalog: team
      catalog_type: jdbc
      uri: "jdbc:sqlite:catalog.db"
      warehouse: s3://bucket/wh
      s3_endpoint: http://127.0.0.1:9000
      s3_path_style_access: true
      s3_access_key_id: AKIDEXAMPLE
      s3_secret_access_key: "{{ env_var('LW_S3_SECRET') }}"
      jars: [JARS]
"""


def _output(tmp_path: Path, jars: str = "BUNDLE", **replace: str) -> Output:
    bundle = tmp_path / "iceberg-aws-bundle-1.10.1.jar"
    bundle.write_bytes(b"PK")
    text = PROFILE.replace("JARS", jars.replace("BUNDLE", f"'{bundle}'"))
    for old, new in replace.items():
        text = text.replace(old, new)
    root = make_project(tmp_path, {"profiles.yml": text})
    return load_output(root / "profiles.yml", "demo", project_root=root)


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LW_S3_SECRET", SECRET)


def test_s3_keys_become_s3fileio_properties_and_the_secret_stays_off_the_conf(
    tmp_path: Path,
) -> None:
    output = _output(tmp_path)
    props = output.iceberg_catalog_properties()
    assert props["io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert props["s3.endpoint"] == "http://127.0.0.1:9000"
    assert props["s3.path-style-access"] == "true"
    assert props["s3.access-key-id"] == "AKIDEXAMPLE"
    assert props["client.region"] == "us-east-1"  # an endpoint without a region
    assert output.catalog_secrets() == {"s3.secret-access-key": SECRET}
    assert SECRET in output.secret_values()
    conf = Session(output).conf()
    assert SECRET not in repr(conf)
    assert "iceberg-aws-bundle-1.10.1.jar" in conf["spark.jars"]  # shipped to executors
    assert "iceberg-aws-bundle-1.10.1.jar" in conf["spark.driver.extraClassPath"]


def test_catalog_properties_win_and_the_embedded_default_has_no_s3(tmp_path: Path) -> None:
    output = _output(
        tmp_path,
        **{"      jars:": "      catalog_properties: {client.region: eu-west-1}\n      jars:"},
    )
    assert output.iceberg_catalog_properties()["client.region"] == "eu-west-1"
    plain = Output()
    assert not plain.uses_s3()
    assert plain.s3_properties() == {}
    assert "aws" not in Session(plain).conf()["spark.jars"]


def test_missing_aws_bundle_is_refused_before_spark(tmp_path: Path) -> None:
    output = _output(tmp_path, jars="")
    with pytest.raises(ConfigError) as caught:
        Session(output).conf()
    assert caught.value.key == "demo.outputs.team.jars"
    assert "iceberg-aws-bundle" in caught.value.message
    assert "mvn dependency:get" in caught.value.message


def test_addressing_and_signature_follow_aws_sigv4(tmp_path: Path) -> None:
    path_style = S3Client("http://127.0.0.1:9000", "us-east-1", True, "AKIDEXAMPLE", SECRET)
    assert path_style.url("b", "wh/a b.json") == "http://127.0.0.1:9000/b/wh/a%20b.json"
    virtual = S3Client(None, "eu-west-1", False, "AKIDEXAMPLE", SECRET)
    assert virtual.url("b", "k") == "https://b.s3.eu-west-1.amazonaws.com/k"
    headers = path_style._headers("GET", path_style.url("b", "k"), b"")
    auth = headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/s3/aws4_request" in auth
    assert "SignedHeaders=host;x-amz-content-sha256;x-amz-date" in auth
    assert SECRET not in repr(headers)
    assert split_location("s3a://bucket/a/b") == ("bucket", "a/b")
    with pytest.raises(ValueError):
        split_location("/local/path")


@pytest.mark.parametrize(
    ("replace", "driver", "executor"),
    [
        # an S3-compatible endpoint: checksums only where an operation requires them
        ({}, "WHEN_REQUIRED", "WHEN_REQUIRED"),
        # AWS itself (no endpoint): the SDK's own default, nothing set
        ({"      s3_endpoint: http://127.0.0.1:9000\n": ""}, None, None),
        # the key wins both ways; the profile's own JVM options come after lakewide's
        (
            {"      jars:": "      s3_checksums: when_supported\n      jars:"},
            "WHEN_SUPPORTED",
            None,
        ),
        (
            {
                "      jars:": "      spark_conf: {spark.executor.extraJavaOptions: -Dx=1, "
                "spark.driver.extraJavaOptions: -Dy=2}\n      jars:"
            },
            "WHEN_REQUIRED",
            "WHEN_REQUIRED",
        ),
    ],
    ids=["endpoint", "aws", "when_supported", "with-own-options"],
)
def test_s3_checksums_reach_the_driver_and_executor_jvms(
    tmp_path: Path, replace: dict[str, str], driver: str | None, executor: str | None
) -> None:
    conf = Session(_output(tmp_path, **replace)).conf()
    driver_options = conf["spark.driver.extraJavaOptions"].split()
    executor_options = conf.get("spark.executor.extraJavaOptions", "").split()
    for options, mode in ((driver_options, driver), (executor_options, executor or driver)):
        found = [o for o in options if o.startswith("-Daws.")]
        if mode is None:
            assert found == []
        else:
            assert found == [
                f"-Daws.requestChecksumCalculation={mode}",
                f"-Daws.responseChecksumValidation={mode}",
            ]
    assert driver_options[0].startswith("-Dlog4j2.configurationFile=")
    if "-Dx=1" in executor_options:  # the profile's own options last (a later -D wins)
        assert executor_options[-1] == "-Dx=1" and driver_options[-1] == "-Dy=2"


def test_s3_checksums_takes_only_the_sdk_modes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _output(tmp_path, **{"      jars:": "      s3_checksums: never\n      jars:"})
    assert "s3_checksums" in str(caught.value)
