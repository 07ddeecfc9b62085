"""The wheel as a file: writing it, making it self-contained, checking, verifying and comparing it."""
