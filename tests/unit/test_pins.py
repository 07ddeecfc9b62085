from __future__ import annotations

import json

import pytest

from tritonbuild.errors import UserError
from tritonbuild.resolve.pins import parse_llvm_hash_txt, parse_llvm_info_json, same_commit

H = "2eb709b95d8f521aa15401e159fac0729d56a677"


def test_llvm_hash_txt() -> None:
    pin = parse_llvm_hash_txt(H + "\n", "cmake/llvm-hash.txt")
    assert pin.llvm_hash == H and pin.short == "2eb709b9" and pin.build_number is None
    assert pin.archive_name("ubuntu-x64") == "llvm-2eb709b9-ubuntu-x64.tar.gz"


@pytest.mark.parametrize("bad", ["", "2eb709b9", H.upper(), H + "0", "not a hash"])
def test_llvm_hash_txt_rejects(bad: str) -> None:
    with pytest.raises(UserError, match="40-character"):
        parse_llvm_hash_txt(bad, "p")


def test_llvm_info_json() -> None:
    text = json.dumps({"llvm_hash": H, "build_number": 2, "sha256sum": {"ubuntu-x64": "a" * 64}})
    pin = parse_llvm_info_json(text, "cmake/llvm-info.json")
    assert pin.build_number == 2 and pin.sha256 == {"ubuntu-x64": "a" * 64}
    assert pin.archive_name("ubuntu-x64") == "llvm-2eb709b9-ubuntu-x64-2.tar.gz"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ("{", "not valid JSON"),
        (json.dumps([H]), "JSON object"),
        (json.dumps({"llvm_hash": "abc"}), "llvm_hash"),
        (json.dumps({"llvm_hash": H, "build_number": "2"}), "build_number"),
        (json.dumps({"llvm_hash": H, "build_number": True}), "build_number"),
        (json.dumps({"llvm_hash": H, "sha256sum": {"ubuntu-x64": "xyz"}}), "malformed sha256"),
        (json.dumps({"llvm_hash": H, "sha256sum": "a"}), "not an object"),
    ],
)
def test_llvm_info_json_rejects(data: str, match: str) -> None:
    with pytest.raises(UserError, match=match):
        parse_llvm_info_json(data, "cmake/llvm-info.json")


def test_same_commit() -> None:
    assert same_commit(H, H[:8]) is True
    assert same_commit(H, "1234567890") is False
    assert same_commit(None, H) is None
    assert same_commit("abc", H) is None  # too short to tell
