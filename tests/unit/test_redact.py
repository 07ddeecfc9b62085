"""URL secrets never leave tritonbuild in what it prints or writes of a plan, yet reach the program that needs them
(#35): ccache's CCACHE_REMOTE_STORAGE gets the real remote, plan --json, plan.json, the manifest and the
settings table get ``user:***@host``."""

from __future__ import annotations

import io
import json

import pytest

from tests.helpers import plan_for
from tritonbuild.errors import UserError
from tritonbuild.plan import compute_key
from tritonbuild.redact import redact, redact_text
from tritonbuild.resolve.compilercache import build_env

SECRET = "PASSW0RD"
REMOTE = f"redis://user:{SECRET}@127.0.0.1:6379"


@pytest.mark.parametrize(("given", "shown"), [
    (REMOTE, "redis://user:***@127.0.0.1:6379"),
    (f"redis://:{SECRET}@h:1|connect-timeout=5", "redis://:***@h:1|connect-timeout=5"),
    (f"http://h/x?token={SECRET}&a=1", "http://h/x?token=***&a=1"),
    (f"https://h/p?X-Amz-Signature={SECRET}&sig={SECRET}", "https://h/p?X-Amz-Signature=***&sig=***"),
    (f"redis://h:6379|password={SECRET}", "redis://h:6379|password=***"),
    (f"https://ghp_{SECRET}@github.com/x/y.git", "https://***@github.com/x/y.git"),  # a token as the user name
    (f"https://u:{SECRET}@h/a https://v:{SECRET}@k/b", "https://u:***@h/a https://v:***@k/b"),  # each URL
])
def test_secrets_in_urls_are_replaced_and_the_rest_stays_readable(given: str, shown: str) -> None:
    assert redact_text(given) == shown


@pytest.mark.parametrize("kept", [
    "git@github.com:triton-lang/triton.git", "ssh://git@host/repo", "https://pypi.org/simple", "/a/path@2/x",
    "-DTRITON_KEY=1", "redis://127.0.0.1:6379", "key=value",
])
def test_what_holds_no_secret_is_left_alone(kept: str) -> None:
    assert redact_text(kept) == kept


def test_redact_walks_nested_data_and_keeps_other_types() -> None:
    data = {"a": [REMOTE, ("x", REMOTE)], "n": 3, "b": None, "t": True}
    assert redact(data) == {"a": ["redis://user:***@127.0.0.1:6379", ("x", "redis://user:***@127.0.0.1:6379")],
                            "n": 3, "b": None, "t": True}


def test_the_plan_keeps_the_real_remote_for_ccache_and_shows_it_redacted(tree) -> None:
    p = plan_for(tree(), {"ccache_remote": REMOTE})
    assert dict(p.cmake.env)["CCACHE_REMOTE_STORAGE"] == REMOTE  # the build's environment: ccache gets it
    assert p.settings.ccache_remote == REMOTE
    text = p.to_json()  # plan --json, <build dir>/plan.json, the manifest's "plan"
    assert SECRET not in text
    data = json.loads(text)
    assert data["settings"]["ccache_remote"]["value"] == "redis://user:***@127.0.0.1:6379"
    assert dict(map(tuple, data["cmake"]["env"]))["CCACHE_REMOTE_STORAGE"] == "redis://user:***@127.0.0.1:6379"


def test_the_env_made_for_ccache_carries_the_real_remote() -> None:
    env = dict(build_env("ccache", "/work", remote=REMOTE, distcc=None, distcc_hosts=None, log_dir="/b"))
    assert env["CCACHE_REMOTE_STORAGE"] == REMOTE


def test_the_settings_table_and_notes_show_no_password(tree) -> None:
    from rich.console import Console

    from tritonbuild.report.render import print_plan, print_settings

    p = plan_for(tree(), {"ccache_remote": REMOTE})
    out = Console(file=io.StringIO(), width=300)
    print_settings(p, out)
    print_plan(p, out)
    shown = out.file.getvalue()  # type: ignore[attr-defined]
    assert "redis://user:***@127.0.0.1:6379" in shown and SECRET not in shown


def test_the_build_dir_key_hashes_the_redacted_value() -> None:
    def key(arg: str) -> str:
        return compute_key(source_root="/s", python="/p", defines=(("A", "1"),), extra_args=(arg,),
                           build_type="Release", targets=())

    assert key(f"-DMIRROR=https://u:{SECRET}@h/x") == key("-DMIRROR=https://u:other@h/x")  # no hash of a password
    assert key("-DMIRROR=https://u:p@h/x") != key("-DMIRROR=https://u:p@k/x")  # the rest still counts


def test_a_password_with_an_at_sign_and_a_secret_in_a_fragment_are_redacted_whole() -> None:
    # a reviewer's findings: the split at the first '@' leaked the password's tail; '#key=' was not looked at
    assert redact_text("redis://u:pa@ss@h:1") == "redis://u:***@h:1"
    assert redact_text("redis://u:p@h:1|redis://v:q@@w/x") == "redis://u:***@h:1|redis://v:***@w/x"
    assert redact_text("https://h/x#key=s3cr3t") == "https://h/x#key=***"
    assert redact_text("https://h/a@b/c") == "https://h/a@b/c"  # an '@' in the path is no userinfo
    assert redact_text("http://u:pw@h/path/with@at") == "http://u:***@h/path/with@at"


def test_a_secret_header_of_ccache_http_storage_is_redacted_and_validation_errors_show_no_secret() -> None:
    from tritonbuild.settings.model import resolve_settings

    assert redact_text("http://h/|header=Authorization=Bearer s3cr3t") == "http://h/|header=Authorization=***"
    assert redact_text("http://h/|header=X-Api-Key=abc|connect-timeout=5") == \
        "http://h/|header=X-Api-Key=***|connect-timeout=5"
    assert redact_text("http://h/|header=Accept=json") == "http://h/|header=Accept=json"
    # a reviewer's finding: a mistyped secret was printed by the setting's own error
    for env in ({"TRITONBUILD_LLVM_MIRROR": "http://u:s3cr3t@h:99999/"},
                {"TRITONBUILD_CCACHE_REMOTE": "HTTP://U:s3cr3t@h/"},
                {"TRITONBUILD_CCACHE_REMOTE": "http://h/|header=Authorization=Bearer s3cr3t"},
                {"TRITONBUILD_CCACHE_REMOTE": "redis://u:s3cr3t@h:abc"}):
        with pytest.raises(UserError) as err:
            resolve_settings({}, env)
        assert "s3cr3t" not in str(err.value), str(err.value)
