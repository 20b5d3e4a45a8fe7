"""Objects of an S3 warehouse read, written and deleted without Spark or an AWS SDK.

The JVM-free metadata readers (a JDBC catalog's ``metadata.json`` on ``s3://``) and ``lakewide
debug`` (a small object written, read and deleted) need a handful of S3 requests; this module
signs them with AWS Signature Version 4 using the standard library only, so a no-op run imports
neither boto3 nor pyarrow. The profile's ``s3_*`` keys choose the endpoint (default: AWS's
regional one), the region (default us-east-1), path-style or virtual-host addressing (default:
path-style with a custom endpoint, as S3-compatible stores expect) and the key; without keys in
the profile the standard ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``
environment variables are used. No message shows the secret.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from lakewide.project.profiles import Output
from lakewide.vocabulary.errors import RuntimeSetupError

_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class S3RequestError(RuntimeSetupError):
    """An S3 request failed: ``status`` (0: no answer) and S3's error ``code``."""

    def __init__(self, message: str, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class S3Client:
    """Signed requests to one S3 endpoint (see the module docstring)."""

    endpoint: str | None
    region: str
    path_style: bool
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None

    @classmethod
    def of(cls, output: Output) -> S3Client | None:
        """The client of ``output``'s ``s3_*`` keys (else the AWS_* environment variables);
        None when neither names an access key."""
        secret = output.s3_secret_access_key
        key_id = output.s3_access_key_id
        token = None
        if key_id is None or secret is None:
            key_id = os.environ.get("AWS_ACCESS_KEY_ID")
            secret_text = os.environ.get("AWS_SECRET_ACCESS_KEY")
            token = os.environ.get("AWS_SESSION_TOKEN")
        else:
            secret_text = secret.get_secret_value()
        if not key_id or not secret_text:
            return None
        region = output.s3_region or os.environ.get("AWS_REGION") or "us-east-1"
        path_style = output.s3_path_style_access
        if path_style is None:
            path_style = output.s3_endpoint is not None
        return cls(output.s3_endpoint, region, path_style, key_id, secret_text, token)

    def url(self, bucket: str, key: str) -> str:
        """The object's URL on this endpoint (path-style or virtual-host)."""
        quoted = urllib.parse.quote(key, safe="/~")
        base = (self.endpoint or f"https://s3.{self.region}.amazonaws.com").rstrip("/")
        if self.path_style:
            return f"{base}/{bucket}/{quoted}"
        scheme, host = base.split("://", 1)
        return f"{scheme}://{bucket}.{host}/{quoted}"

    def _headers(self, method: str, url: str, payload: bytes) -> dict[str, str]:
        """SigV4 headers of one request (``Authorization`` signs host, date, payload hash)."""
        parts = urllib.parse.urlsplit(url)
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        digest = hashlib.sha256(payload).hexdigest() if payload else _EMPTY_SHA256
        headers = {"host": parts.netloc, "x-amz-content-sha256": digest, "x-amz-date": stamp}
        if self.session_token:
            headers["x-amz-security-token"] = self.session_token
        names = ";".join(sorted(headers))
        canonical = "\n".join(
            [method, parts.path or "/", _canonical_query(parts.query)]
            + [f"{name}:{headers[name]}" for name in sorted(headers)]
            + ["", names, digest]
        )
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = ("AWS4" + self.secret_access_key).encode()
        for part in (day, self.region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.access_key_id}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}"
        )
        return headers

    def request(self, method: str, location: str, payload: bytes = b"") -> bytes:
        """``method`` on the object at ``s3://bucket/key``; its body (S3RequestError)."""
        bucket, key = split_location(location)
        url = self.url(bucket, key)
        request = urllib.request.Request(
            url, data=payload if method == "PUT" else None, method=method
        )
        request.add_header("Content-Type", "application/octet-stream")  # not a form (urllib's)
        for name, value in self._headers(method, url, payload).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                body: bytes = answer.read()
                return body
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8", "replace")
            code = re.search(r"<Code>([^<]+)</Code>", text)
            raise self._error(method, location, err.code, code.group(1) if code else "") from None
        except (OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            raise S3RequestError(
                f"S3 endpoint {self.endpoint or url} did not answer ({reason}); check the "
                "profile's s3_endpoint and that the server runs",
                0,
                "",
            ) from None

    def _error(self, method: str, location: str, status: int, code: str) -> S3RequestError:
        hint = _HINTS.get(code) or _HINTS.get(str(status)) or "see the S3 error code"
        what = f"{method} {location} was refused: HTTP {status} {code}".rstrip()
        return S3RequestError(f"{what}; {hint}", status, code)


_HINTS = {
    "NoSuchBucket": "the bucket does not exist: create it or fix the profile's warehouse",
    "InvalidAccessKeyId": "the access key is unknown: check s3_access_key_id",
    "SignatureDoesNotMatch": "the secret does not match the key: check s3_secret_access_key",
    "AccessDenied": "the key may not do this: grant it s3:GetObject, s3:PutObject and "
    "s3:DeleteObject on the warehouse",
    "PermanentRedirect": "the bucket is in another region: set s3_region to the bucket's region",
    "AuthorizationHeaderMalformed": "wrong region: set s3_region to the bucket's region",
    "403": "the credentials are refused: check s3_access_key_id and s3_secret_access_key",
    "404": "no such object or bucket",
}


def _canonical_query(query: str) -> str:
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    return "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in sorted(pairs)
    )


def split_location(location: str) -> tuple[str, str]:
    """``s3://bucket/key`` (or ``s3a://``, ``s3n://``) as (bucket, key)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() not in ("s3", "s3a", "s3n") or not parts.netloc:
        raise ValueError(f"not an s3:// location: {location}")
    return parts.netloc, parts.path.lstrip("/")


def is_s3(location: str | None) -> bool:
    """Whether ``location`` is an ``s3://`` (``s3a://``, ``s3n://``) URI."""
    return bool(location) and urllib.parse.urlsplit(location or "").scheme.lower() in (
        "s3",
        "s3a",
        "s3n",
    )
