"""Gather the facts a plan is resolved from (edge: reads the disk, runs git and llvm-config)."""
