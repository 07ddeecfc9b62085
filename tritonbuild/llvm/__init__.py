"""LLVM at the edge: what a prefix has (probe), the cache, and the providers that supply the pinned one (the choice
is pure: ``tritonbuild.resolve.llvm``)."""
