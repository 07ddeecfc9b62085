"""LLVM pin files of a Triton source (pure parsers).

G1/G2 trees keep ``cmake/llvm-hash.txt`` (one 40-hex line); G3 trees keep ``cmake/llvm-info.json``
(``llvm_hash``, ``build_number``, ``sha256sum`` per host suffix).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tritonbuild.errors import UserError

_HASH = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class LLVMPin:
    kind: str  # "llvm-hash.txt" or "llvm-info.json"
    path: str
    llvm_hash: str
    build_number: int | None = None
    sha256: dict[str, str] = field(default_factory=dict)

    @property
    def short(self) -> str:
        return self.llvm_hash[:8]

    def archive_name(self, suffix: str) -> str:
        """Triton's prebuilt archive name for this pin and host suffix."""
        if self.build_number is None:
            return f"llvm-{self.short}-{suffix}.tar.gz"
        return f"llvm-{self.short}-{suffix}-{self.build_number}.tar.gz"


def parse_llvm_hash_txt(text: str, path: str) -> LLVMPin:
    value = text.strip()
    if not _HASH.fullmatch(value):
        raise UserError(
            f"The LLVM pin {path} should hold one 40-character lowercase hex LLVM commit, but it holds "
            f"{value[:60]!r}. Restore it from the Triton repository (git checkout -- cmake/llvm-hash.txt)."
        )
    return LLVMPin(kind="llvm-hash.txt", path=path, llvm_hash=value)


def parse_llvm_info_json(text: str, path: str) -> LLVMPin:
    fix = "Restore it from the Triton repository (git checkout -- cmake/llvm-info.json)."
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"The LLVM pin {path} is not valid JSON ({exc}). {fix}") from None
    if not isinstance(data, dict):
        raise UserError(f"The LLVM pin {path} should be a JSON object with 'llvm_hash'. {fix}")
    llvm_hash = data.get("llvm_hash")
    if not isinstance(llvm_hash, str) or not _HASH.fullmatch(llvm_hash):
        raise UserError(f"The LLVM pin {path} has no valid 'llvm_hash' (40 lowercase hex): {llvm_hash!r}. {fix}")
    build_number = data.get("build_number")
    if build_number is not None and (not isinstance(build_number, int) or isinstance(build_number, bool)
                                     or build_number < 0):
        raise UserError(f"The LLVM pin {path} has a 'build_number' that is not a whole number: {build_number!r}. {fix}")
    sums = data.get("sha256sum", {})
    if not isinstance(sums, dict):
        raise UserError(f"The LLVM pin {path} has a 'sha256sum' that is not an object. {fix}")
    for suffix, digest in sums.items():
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise UserError(f"The LLVM pin {path} has a malformed sha256 for {suffix!r}: {digest!r}. {fix}")
    return LLVMPin(
        kind="llvm-info.json", path=path, llvm_hash=llvm_hash, build_number=build_number, sha256=dict(sums)
    )


def same_commit(a: str | None, b: str | None) -> bool | None:
    """Whether two (possibly abbreviated, at least 7 chars) commit hashes name the same commit."""
    if not a or not b:
        return None
    a, b = a.strip().lower(), b.strip().lower()
    n = min(len(a), len(b))
    if n < 7:
        return None
    return a[:n] == b[:n]
