"""The checks of a wheel (edge): one module per check, ``base`` for what they share, ``registry`` for which run at
build time and which in ``verify``."""
