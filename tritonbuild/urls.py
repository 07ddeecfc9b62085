"""URLs from hostile places (flags, recipes, the environment, index pages) split without exceptions: the standard
library raises ValueError on some text (``http://[::1``, an out-of-range port), and a bad URL is a finding for the
caller to word, never a traceback; and which URLs tritonbuild gives git (``url_problem``: ``safegit`` refuses the
others before git runs, the pure LLVM choice words the same refusal)."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urljoin, urlsplit

PROTOCOLS = ("https", "http", "ssh", "git", "file")  # the git transports tritonbuild allows
_SCP = re.compile(r"[A-Za-z0-9._~+-]+@[A-Za-z0-9][A-Za-z0-9.-]*:(?!-)[^\s]+")  # fullmatch
_BAD_CHARS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def split_url(text: str) -> SplitResult | None:
    """``text``'s parts, or None where it cannot be read as a URL at all."""
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is not a number, or out of range, raises here
    except ValueError:
        return None
    return parts


def join_url(base: str, href: str) -> str | None:
    """``href`` resolved against ``base``, or None where either cannot be read as a URL."""
    if split_url(base) is None or split_url(href) is None:
        return None
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a git URL tritonbuild clones (None: it is one)."""
    if re.match(r"[A-Za-z0-9+.-]*::", url):
        return "it names a git remote helper (transport::address, such as ext:: or fd::), which can run programs"
    if not url or url.startswith("-"):
        return "it starts with '-' (git would read it as an option)" if url else "it is empty"
    if _BAD_CHARS.search(url):
        return "it contains whitespace or control characters"
    if _SCP.fullmatch(url):
        return None
    parts = split_url(url)
    if parts is None:
        return ("it cannot be read as a URL (an unclosed '[' of an IPv6 host, or a port that is not a number from 0 "
                "to 65535)")
    if parts.scheme not in PROTOCOLS:
        return f"its scheme {parts.scheme + '://' if parts.scheme else '(none)'} is not one of " + \
            ", ".join(f"{p}://" for p in PROTOCOLS) + " (or user@host:path)"
    host = parts.netloc.rpartition("@")[2]
    if parts.scheme != "file" and not host:
        return "it names no host"
    if host.startswith("-") or parts.path.startswith("-"):
        return "a part of it starts with '-' (ssh would read it as an option)"
    return None
