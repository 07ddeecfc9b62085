"""Language extras of backends are installed as triton.language.extra.<name>."""
