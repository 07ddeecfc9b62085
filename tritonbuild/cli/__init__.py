"""The command line: one module per command group, registered on the root group."""
