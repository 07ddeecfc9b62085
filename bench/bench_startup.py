"""Start-up cost: `tritonbuild --help` and `tritonbuild plan --json` on the example tree (best of 5).

    python bench/bench_startup.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import best_of, table
from tritonbuild import example


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    try:
        tree = example.write_tree(base / "triton")
        py = [sys.executable, "-m", "tritonbuild"]
        table([
            ("python -c pass", f"{best_of(5, [sys.executable, '-c', 'pass'], cwd=base):6.3f} s"),
            ("tritonbuild --help", f"{best_of(5, [*py, '--help'], cwd=base):6.3f} s"),
            ("tritonbuild plan --json",
             f"{best_of(5, [*py, 'plan', '--json', '--source', str(tree)], cwd=base):6.3f} s"),
        ])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
