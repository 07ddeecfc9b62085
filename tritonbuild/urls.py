"""URLs from hostile places (flags, recipes, the environment, index pages) split without exceptions: the standard
library raises ValueError on some text (``http://[::1``, an out-of-range port), and a bad URL is a finding for the
caller to word, never a traceback."""

from __future__ import annotations

from urllib.parse import SplitResult, urljoin, urlsplit


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
