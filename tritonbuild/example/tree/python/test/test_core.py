"""The example tree's Python tests (run by `tritonbuild test python`)."""


def test_core_value():
    from triton._C import libtriton

    assert libtriton.ir.core_value() == 42
