"""safegit: which URLs and refs reach git, and the config that neutralises a repository's own programs (#35)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.system import safegit
from tritonbuild.urls import url_problem


@pytest.mark.parametrize("url", [
    "https://github.com/triton-lang/triton.git", "http://example.com/x", "ssh://git@example.com/x.git",
    "git://example.com/x", "file:///srv/git/triton", "file://localhost/srv/x", "git@github.com:org/repo.git",
    "ssh://[::1]/repo"])
def test_urls_git_may_clone(url: str) -> None:
    assert url_problem(url) is None
    safegit.check_url(url, "--source")


@pytest.mark.parametrize(("url", "why"), [
    ("ext::sh -c touch% /tmp/x", "remote helper"), ("ext::x.git", "remote helper"), ("fd::17", "remote helper"),
    ("-uhostile.git", "starts with '-'"), ("--upload-pack=touch /tmp/x", "starts with '-'"),
    ("ssh://-oProxyCommand=touch%20x/repo", "starts with '-'"), ("https://example.com/a b", "whitespace"),
    ("https://example.com/a\nb", "whitespace"), ("ftp://example.com/x", "is not one of"), ("x.git", "is not one of"),
    ("https:///path-only", "no host"), ("", "empty"), ("https://[::1/x.git", "cannot be read as a URL"),
    ("https://example.com:http/x.git", "cannot be read as a URL")])
def test_urls_refused_before_git_runs(url: str, why: str) -> None:
    assert why in (url_problem(url) or "")
    with pytest.raises(UserError, match="is not a git URL tritonbuild clones"):
        safegit.check_url(url, "--source")


@pytest.mark.parametrize("ref", ["main", "v3.4.0", "release/3.4.x", "d8da7c9985d1", "refs/pull/12/head", "a_b+c"])
def test_plain_refs_pass(ref: str) -> None:
    safegit.check_ref(ref, "--ref")


@pytest.mark.parametrize("ref", ["--upload-pack=touch x", "-b", "main..dev", "a:b", "HEAD~1", "x^{tree}", "a b",
                                 "main.lock", "x/", "@{-1}", "a//b", ""])
def test_refs_that_are_options_refspecs_or_ranges_are_refused(ref: str) -> None:
    with pytest.raises(UserError, match="is not a ref tritonbuild fetches"):
        safegit.check_ref(ref, "--ref")


def test_config_pairs_go_after_the_callers_own_and_keep_equals_signs() -> None:
    env = safegit.with_config({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"},
                              [("filter.x=y.clean", "")])
    assert env["GIT_CONFIG_COUNT"] == "2" and env["GIT_CONFIG_KEY_0"] == "a.b"
    assert env["GIT_CONFIG_KEY_1"] == "filter.x=y.clean" and env["GIT_CONFIG_VALUE_1"] == ""


def test_config_listing_is_read_with_scopes() -> None:
    listing = "system\0credential.helper\ncache\0local\0core.bare\0local\0filter.a=b.clean\ntouch x\n y\0"
    assert safegit.parse_config(listing) == [("system", "credential.helper", "cache"), ("local", "core.bare", ""),
                                             ("local", "filter.a=b.clean", "touch x\n y")]


def test_only_repository_scopes_are_neutralised() -> None:
    entries = [("global", "filter.lfs.process", "git-lfs filter-process"), ("worktree", "filter.w.smudge", "x"),
               ("local", "diff.d.command", "x"), ("command", "core.askpass", "mine"), ("local", "core.askpass", "x"),
               ("local", "core.sshcommand", "x"), ("local", "user.name", "x")]
    got = safegit.overrides(entries)
    assert got[:len(safegit.BASE)] == list(safegit.BASE)
    assert got[len(safegit.BASE):] == [("filter.w.smudge", ""), ("diff.d.command", ""), ("core.askpass", "mine"),
                                       ("core.sshcommand", "ssh")]
    assert safegit.network_keys([("global", "credential.helper", "x"), ("local", "remote.origin.uploadpack", "x"),
                                 ("local", "remote.origin.url", "x"), ("local", "http.sslverify", "false")]) == \
        ["remote.origin.uploadpack", "http.sslverify"]


CONTROL = st.characters(codec="utf-8", categories=["Cc"])  # C0, DEL and C1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["main", "v3.4.0", "HEAD", "d8da7c9985d1", "git@github.com:o/r.git",
                        "https://example.com/x.git"]), CONTROL, st.sampled_from(["end", "start", "middle"]))
def test_a_control_character_anywhere_in_a_name_keeps_it_from_git(name: str, ch: str, where: str) -> None:
    """A newline at the end used to pass (a regex ``$`` matches before a final newline): refs, URLs, ranges and
    every argument git is given are refused with one control character anywhere (#44)."""
    from tritonbuild.gather.commits import parse_range

    bad = {"end": name + ch, "start": ch + name, "middle": name[:2] + ch + name[2:]}[where]
    with pytest.raises(UserError):
        safegit.check_ref(bad, "--ref")
    assert url_problem(bad) is not None
    with pytest.raises(UserError, match="--range"):
        parse_range(f"{bad}..HEAD")
    with pytest.raises(UserError, match="--range"):
        parse_range(f"HEAD~2..{bad}")
    with pytest.raises(UserError, match="holds a control character"):
        safegit.check_args(("rev-parse", "--end-of-options", bad))


def test_the_range_of_the_report_is_refused() -> None:
    from tritonbuild.gather.commits import parse_range

    with pytest.raises(UserError, match="is not a commit name tritonbuild gives git"):
        parse_range("HEAD\n..HEAD")
    assert parse_range("main~20..main") == ("main~20", "main")
