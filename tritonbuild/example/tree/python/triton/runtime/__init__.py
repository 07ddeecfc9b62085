"""Driver selection: TRITON_DEFAULT_BACKEND names one; otherwise exactly one driver must be active."""

import os


def active_backends():
    from triton.backends import backends

    chosen = os.environ.get("TRITON_DEFAULT_BACKEND")
    if chosen:
        return [chosen]
    return [name for name, b in backends.items() if b.driver.is_active()]


def stages(name, target, language="ttir"):
    """The stage names a backend's compiler adds for ``target`` (Triton's compiler calls add_stages like this)."""
    from triton.backends import backends

    compiler = backends[name].compiler(target)
    found = {}
    compiler.add_stages(found, {"hash": compiler.hash()}, language)
    return list(found)
