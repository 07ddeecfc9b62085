"""What the nvidia backend needs next to libtriton, and where it comes from.

Triton's setup.py downloads NVIDIA's redistributables into ``third_party/nvidia/backend`` before building:
CUDA runtime and CRT headers (``include/``, which the nvidia driver compiles ``cuda_utils.c`` and every kernel
launcher against at run time), CUPTI headers and libraries (proton: ``include/``, ``lib/cupti``), and ptxas,
ptxas-blackwell, cuobjdump, nvdisasm (``bin/``). tritonbuild never writes into the source: it finds the same
files (Triton's ``TRITON_*_PATH`` variables, a CUDA toolkit, or NVIDIA's wheels on PyPI, cached) and installs
them where setup.py would have put them.

The pure halves sit beside the other pure choices, in ``resolve/``: ``resolve.nvidia_parts`` (the fact types, the
tree's version pins, PyPI names, the include closure parser) and ``resolve.nvidia`` (which files a plan installs and
from where), as LLVM's choice is ``resolve.llvm`` and its provisioning ``tritonbuild.llvm``. This package is the edge:

- ``discover``: what this machine has (edge: reads the tree, toolkits, the cache).
- ``pypi``: fetch and unpack an NVIDIA wheel into the cache (edge: network).
- ``probe``: what a bundled or host NVIDIA tool really is (edge: reads ELF headers, runs ``--version``).
- ``stage``: copy the planned files into the build dir for the install step (edge).
"""
