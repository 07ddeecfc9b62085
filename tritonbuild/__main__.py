from __future__ import annotations

from tritonbuild.cli.main import main

if __name__ == "__main__":
    main()
