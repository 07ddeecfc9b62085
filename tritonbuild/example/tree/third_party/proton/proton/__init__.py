"""Proton, installed as triton.profiler."""

PROFILER = "proton"
