"""Stable paths (tritonbuild.resolve.pathviews): what CMake sees of the checkout, and what editors get back."""

from __future__ import annotations

from tritonbuild.resolve import pathviews

VIEWS = pathviews.views("/c/build/k", "/x/A", [("dash", "/x/A/third_party/dash"), ("p", "/y/p")])


def test_links_live_in_the_build_dir() -> None:
    assert VIEWS == (("/c/build/k/src", "/x/A"), ("/c/build/k/plugins/dash", "/x/A/third_party/dash"),
                     ("/c/build/k/plugins/p", "/y/p"))


def test_rewrite_changes_whole_paths_only() -> None:
    r = pathviews.rewrite
    assert r("/x/A", VIEWS) == "/c/build/k/src"
    assert r("/x/A/include;/x/AB/q;/x/A", VIEWS) == "/c/build/k/src/include;/x/AB/q;/c/build/k/src"
    # the plugin inside the source tree gets its own link (longest first)
    assert r("nvidia=/x/A/third_party/nvidia;dash=/x/A/third_party/dash;p=/y/p", VIEWS) == (
        "nvidia=/c/build/k/src/third_party/nvidia;dash=/c/build/k/plugins/dash;p=/c/build/k/plugins/p")
    assert r("-I/x/A/inc -DZ=/x/A/z", VIEWS) == "-I/c/build/k/src/inc -DZ=/c/build/k/src/z"
    assert r("/y/pp;/home/x/A", VIEWS) == "/y/pp;/home/x/A"


def test_a_cache_inside_the_checkout_is_rewritten_once() -> None:
    views = pathviews.views("/x/A/.cache/build/k", "/x/A", [("q", "/x/A/q")])
    assert pathviews.rewrite("/x/A/q;/x/A/lib", views) == "/x/A/.cache/build/k/plugins/q;/x/A/.cache/build/k/src/lib"


def test_editors_and_messages_get_the_checkout_back() -> None:
    db = '{"command": "g++ -I/c/build/k/src/include -c /c/build/k/plugins/p/x.cc", "file": "/c/build/k/src"}'
    assert pathviews.for_editors(db, VIEWS) == '{"command": "g++ -I/x/A/include -c /y/p/x.cc", "file": "/x/A"}'
    assert pathviews.to_real("/c/build/k/plugins/dash/lib/a.cpp", VIEWS) == "/x/A/third_party/dash/lib/a.cpp"
    assert pathviews.to_real("/c/build/k/srcx/a.cpp", VIEWS) == "/c/build/k/srcx/a.cpp"
