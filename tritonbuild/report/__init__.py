"""Report to people and machines: rendered plans, the build summary, the doctor's table."""
