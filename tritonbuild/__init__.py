"""tritonbuild: build Triton (and its forks) into wheels with exactly the backends you ask for.

Data flows one way: request -> resolve -> plan -> execute -> report.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
