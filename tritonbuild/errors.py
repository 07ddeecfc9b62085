"""Typed errors. Library code raises these; only ``cli.main`` turns them into exit codes.

Exit codes (documented in the README):
  0  success
  1  the build (or a test run) failed: compiler errors, a failing import smoke test
  2  bad input: the request, the source tree, a plugin, the LLVM, or a recipe is wrong
  3  the environment is missing something (a tool, a lock held by another run)
  141  stdout was closed by its reader (``tritonbuild plan | head -1``): quietly, as a program SIGPIPE stops
"""

from __future__ import annotations


class TritonBuildError(Exception):
    """Base class. ``str(err)`` is one paragraph: what is wrong, where, how to fix it."""

    exit_code = 1


class UserError(TritonBuildError):
    """Bad input: a flag, an environment variable, a source tree, a plugin or a recipe."""

    exit_code = 2


class InputMissing(UserError):
    """Input the user gave lacks something one step needs (a --submodule clone without the commit a tested commit
    records): the request's fault, never a finding about the source, so never cached as one."""


class BuildFailed(TritonBuildError):
    """A subprocess of the build (cmake, ninja, the compiler, the smoke test) failed."""

    exit_code = 1

    def __init__(self, message: str, log_path: str | None = None, tail: str = "") -> None:
        super().__init__(message)
        self.log_path = log_path
        self.tail = tail


class DiskProblem(BuildFailed):
    """The build stopped on a full or read-only disk: the host's problem, not the source's (exit code 3)."""

    exit_code = 3


class EnvironmentProblem(TritonBuildError):
    """The host lacks something the request needs, or another run holds a lock."""

    exit_code = 3


class StdoutClosed(Exception):
    """The reader of stdout went away (``tritonbuild plan | head -1``). ``cli.main`` exits quietly with 141
    (rich's console and click would exit 1, which means "the build failed")."""
