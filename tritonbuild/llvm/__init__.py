"""LLVM: what a plan needs (requirement), what a prefix has (probe), and the providers that supply it."""
