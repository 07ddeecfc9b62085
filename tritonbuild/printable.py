"""Hostile names made safe to print (pure, base layer): a file or member name from someone else's tree or archive
is formatted into a message through ``printable``, so its control characters cannot move the cursor, clear the
screen, retitle the terminal or forge a line of the message."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` as it is when every character prints; else quoted, each control character, newline or
    undecodable byte escaped as Python writes it (``'a\\x1b[31m\\nb'``), and a backslash doubled."""
    if text.isprintable():
        return text
    escaped = "".join(ch if ch.isprintable() and ch != "\\" else repr(ch)[1:-1] for ch in text)
    return f"'{escaped}'"


def _escape_control(ch: str) -> str:
    return repr(ch)[1:-1] if (not ch.isprintable() and ch not in "\n\t") or ch == "\x7f" else ch


def printable_text(text: str) -> str:
    """A message as it is, but every control character other than newline and tab escaped as Python writes it
    (``\\x1b``): what a hostile name carries into a message cannot drive the terminal. For text that is meant to
    span lines (a compiler's error tail, a paragraph); a single name goes through ``printable``."""
    if all(ch.isprintable() or ch in "\n\t" for ch in text):
        return text
    return "".join(_escape_control(ch) for ch in text)


def quoted(text: str) -> str:
    """``text`` as one word of a command to copy (``shlex.quote``) when every character prints; else as
    ``printable`` shows it: a newline in a path must not forge a line of the message that quotes the command."""
    import shlex

    return shlex.quote(text) if text.isprintable() else printable(text)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out (a message quoting a 300 KB error)."""
    return text if len(text) <= limit else f"{text[:limit]} [... {len(text) - limit} more characters]"
