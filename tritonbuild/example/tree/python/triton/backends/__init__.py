"""Backend discovery: entry points of the `triton.backends` group (TRITON_BACKENDS_IN_TREE=1 skips them)."""

import importlib
import inspect
import os
from dataclasses import dataclass
from importlib.metadata import entry_points

from .compiler import BaseBackend
from .driver import DriverBase


def _find_concrete_subclasses(module, base_class):
    found = [
        attr for attr in (getattr(module, name) for name in dir(module))
        if isinstance(attr, type) and issubclass(attr, base_class) and not inspect.isabstract(attr)
    ]
    if len(found) != 1:
        raise RuntimeError(f"Found {len(found)} concrete subclasses of {base_class} in {module}: {found}")
    return found[0]


@dataclass(frozen=True)
class Backend:
    compiler: type
    driver: type


def _discover_backends():
    backends = {}
    if os.environ.get("TRITON_BACKENDS_IN_TREE", "") == "1":
        root = os.path.dirname(__file__)
        names = [n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)) and not n.startswith("__")]
        values = {n: f"triton.backends.{n}" for n in names}
    else:
        values = {ep.name: ep.value for ep in entry_points().select(group="triton.backends")}
    for name, value in values.items():
        compiler = importlib.import_module(f"{value}.compiler")
        driver = importlib.import_module(f"{value}.driver")
        backends[name] = Backend(_find_concrete_subclasses(compiler, BaseBackend),
                                 _find_concrete_subclasses(driver, DriverBase))
    return backends


backends = _discover_backends()
