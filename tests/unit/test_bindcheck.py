from __future__ import annotations

from tritonbuild.resolve.binding_calls import bad_calls, parse_bindings

IR_CC = """
  py::class_<PassManager>(m, "pass_manager", py::module_local())
      .def(py::init<MLIRContext *>())
      .def("enable_debug",
           [](PassManager &self) -> bool { return true; })
      .def(
          "run",
          [](PassManager &self, ModuleOp &mod, std::string repro_pipeline_tag) {
            if (a(b, c)) { return; }
          });
  py::class_<OpBuilder>(m, "builder", py::module_local(), py::dynamic_attr())
      .def("get_int_attr", [](OpBuilder &self, std::map<std::string, int> attrs, int v) { return v; })
      .def("get_int_attr", [](OpBuilder &self, int v) { return v; })
      .def("create_op", &OpBuilder::createOp)
      .def("with_default", [](OpBuilder &self, int v) { return v; }, py::arg("v") = 1);
  m.def("load_dialects", [](MLIRContext &context) {});
"""


def test_lambdas_are_read_and_what_cannot_be_read_is_left_unknown() -> None:
    b = parse_bindings([IR_CC])
    assert b["pass_manager"]["run"] == frozenset({2}) and b["pass_manager"]["enable_debug"] == frozenset({0})
    assert b["builder"]["get_int_attr"] == frozenset({1, 2})  # overloads; a template's commas kept whole
    assert b["builder"]["create_op"] is None  # a member pointer: no guess
    assert b["builder"]["with_default"] is None  # py::arg defaults: no guess


def test_a_call_the_old_way_is_reported_with_its_line() -> None:
    b = parse_bindings([IR_CC])
    backend = (
        "from triton._C.libtriton import ir\n"
        "def make_ttir(mod, metadata, opt):\n"
        "    pm = ir.pass_manager(mod.context)\n"
        "    pm.enable_debug()\n"
        "    pm.run(mod)\n"
        "    pm.run(mod, 'make_ttir')\n"
        "    pm.run(*args)\n"
        "    pm.run(mod, tag='x')\n"
        "    return mod\n"
        "def other(pm):\n"
        "    pm.run(1, 2, 3)\n"  # not made here from a bound class: not known
    )
    assert bad_calls(backend, b) == [(5, "pass_manager", "run", 1, frozenset({2}))]
    assert bad_calls("def broken(:\n", b) == []
