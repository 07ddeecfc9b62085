"""Resolve settings and facts into a Plan (pure: no module here reads the disk or runs a program)."""
