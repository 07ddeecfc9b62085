"""Secrets out of what tritonbuild prints and writes: the password, token user name and secret query values of the
URLs in a text or a JSON-like value. A base value below the plan, the settings model and every edge that words a
URL, so that none of them imports another for it."""

from __future__ import annotations

import re
from typing import Any

# Secrets inside URL-like values (a ccache remote, a mirror, an index, a git URL): the password of user:password@,
# a user name that is a token, and query or attribute values named like secrets. Everything tritonbuild prints or
# writes of a plan (plan.json, the manifest, plan --json, plan --settings) goes through ``redact``; the plan itself
# keeps the real values for the programs that need them (ccache's CCACHE_REMOTE_STORAGE).
# a password may hold an unescaped '@' (users write them so): the userinfo runs to the authority's last '@'
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@:\s|]*)(?::(?P<pw>[^/\s|]*))?@")
_SECRET_PARAM = re.compile(r"(?P<key>(?<=[?&|;#])[\w.-]*(?:token|key|password|passwd|secret|sig|signature|"
                           r"credential|auth)[\w.-]*=)[^&|#\s]*", re.IGNORECASE)
# ccache's http storage takes headers as attributes: |header=Authorization=Bearer TOKEN (the value may hold spaces)
_SECRET_HEADER = re.compile(r"(?P<key>\|header=[\w-]*(?:auth|token|key|secret|passw|cookie)[\w-]*=)[^|]*",
                            re.IGNORECASE)
_TOKEN_USER = re.compile(r"^(gh[pousr]_|github_pat_|glpat-|x-access-token|oauth2)|^.{20,}$", re.IGNORECASE)
REDACTED = "***"


def redact_text(text: str) -> str:
    """``text`` with the secrets of the URLs in it replaced by ``***``: ``user:***@host``, a token given as the user
    name (``***@host``), ``?token=***``; the rest (scheme, host, path) stays readable."""

    def userinfo(m: re.Match[str]) -> str:
        user = m.group("user")
        if m.group("pw") is not None:
            return f"{m.group('scheme')}{user}:{REDACTED}@"
        return f"{m.group('scheme')}{REDACTED if _TOKEN_USER.search(user) else user}@"

    if "@" in text:
        text = _USERINFO.sub(userinfo, text)
    if "=" in text:
        text = _SECRET_HEADER.sub(lambda m: m.group("key") + REDACTED, text)
        text = _SECRET_PARAM.sub(lambda m: m.group("key") + REDACTED, text)
    return text


def redact(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, strings) with ``redact_text`` applied to every string in it."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v) for v in value)
    return value
