"""The one JSON contract of every ``--json``: an envelope that says which schema, which tritonbuild and which command
made it, the command's payload under stable keys, and the exit code; a failure under ``--json`` is the same envelope
with an ``error`` object. ``SCHEMA`` is bumped on every breaking change of any command's output (a key removed or
renamed, a type or a meaning changed); adding a key is not one. The JSON Schemas of each command's output ship in
``tritonbuild/schemas/<command>.schema.json``.

Pure: it builds values and text; the CLI prints them.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any, Literal

from tritonbuild import __version__

SCHEMA = 2  # 1: plan --json alone carried a schema; 2: every --json is this envelope (#46)
ENVELOPE_KEYS = ("schema", "tritonbuild_version", "command", "exit")
# what went wrong, for a script: the kinds of error ``cli.main`` maps to exit codes
ErrorKind = Literal["bad input", "host", "build failed", "bad wheel", "failed", "interrupted", "terminated"]
# every command with --json, and the file name of its schema (``schemas/<name>.schema.json``)
COMMANDS = {"plan": "plan", "build": "build", "status": "status", "compare": "compare", "backends": "backends",
            "verify": "verify", "doctor": "doctor", "llvm status": "llvm-status", "llvm compat": "llvm-compat",
            "check-llvm": "check-llvm"}


def envelope(command: str, payload: Mapping[str, Any], exit_code: int = 0) -> dict[str, Any]:
    """``{"schema", "tritonbuild_version", "command", "exit", **payload}``; a payload key may not shadow those."""
    clash = set(ENVELOPE_KEYS) & set(payload)
    if clash:
        raise ValueError(f"the payload of {command} has the envelope's key(s) {sorted(clash)}")
    return {"schema": SCHEMA, "tritonbuild_version": __version__, "command": command, "exit": exit_code, **payload}


def dumps(command: str, payload: Mapping[str, Any], exit_code: int = 0) -> str:
    """The envelope as the text ``--json`` prints: indented, keys sorted."""
    return json.dumps(envelope(command, payload, exit_code), indent=2, sort_keys=True)


def error(command: str | None, message: str, kind: ErrorKind, exit_code: int, log: str | None = None) -> str:
    """The text a failed ``--json`` run prints on stdout: the envelope with ``error`` (message, kind, and the log
    that holds the details when there is one)."""
    found: dict[str, Any] = {"message": message, "kind": kind}
    if log:
        found["log"] = log
    return dumps(command or "", {"error": found}, exit_code)


def iso_time(timestamp: float) -> str:
    """A POSIX time as ISO 8601 in UTC with its zone, to the second: ``2026-05-01T12:00:00+00:00``."""
    return datetime.datetime.fromtimestamp(int(timestamp), tz=datetime.UTC).isoformat()
