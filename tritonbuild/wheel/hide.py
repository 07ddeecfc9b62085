"""``python -m tritonbuild.wheel.hide EMPTY_DIR EMPTY_FILE PATH... -- PROGRAM ARG...``: mount the empty dir over
each hidden directory and the empty file over each hidden file, then become PROGRAM (edge).

``verify`` runs this under ``unshare --mount`` so the mounts live in a private mount namespace only: the import
test then cannot see the build's LLVM. Paths travel as separate arguments and the mounts are mount(2) calls, so
no shell ever reads them (a path may hold spaces, quotes or ``;``). With nothing after ``--`` it only mounts:
the probe of whether this machine lets us. Exit code 3 and one line on stderr when a mount fails.
"""

from __future__ import annotations

import ctypes
import os
import sys

MS_BIND = 4096
CANNOT_MOUNT = 3


def bind(source: str, target: str) -> None:
    """mount --bind SOURCE TARGET, as the mount(2) call."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), None, MS_BIND, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), target)


def main(args: list[str]) -> int:
    if "--" not in args or args.index("--") < 2:
        print("usage: python -m tritonbuild.wheel.hide EMPTY_DIR EMPTY_FILE PATH... -- PROGRAM ARG...",
              file=sys.stderr)
        return 2
    sep = args.index("--")
    empty_dir, empty_file, *hidden = args[:sep]
    command = args[sep + 1:]
    for path in hidden:
        try:
            bind(empty_dir if os.path.isdir(path) else empty_file, path)
        except OSError as exc:
            print(f"mount --bind over {path} failed: {exc.strerror}", file=sys.stderr)
            return CANNOT_MOUNT
    if not command:
        return 0
    try:
        os.execv(command[0], command)
    except OSError as exc:
        print(f"cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
