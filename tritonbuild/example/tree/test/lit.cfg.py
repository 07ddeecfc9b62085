import os

import lit.formats

config.name = "TRITON-FIXTURE"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.triton_obj_root, "test")
config.environment["PATH"] = os.pathsep.join(
    [config.triton_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
