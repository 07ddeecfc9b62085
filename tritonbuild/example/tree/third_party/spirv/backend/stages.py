"""The spirv backend's stages: ttir -> llir (an OpenCL-flavoured LLVM IR kernel) -> spv (SPIR-V binary, emitted by
LLVM's SPIRV target inside libtriton). The example tree has no Triton frontend, so ``ttir`` names a kernel the
backend knows how to lower: ``vector_add`` (out[i] = x[i] + y[i] for i < n), or is the signature the example's
``triton.compile`` writes (``tt.func public @name(%x: !tt.ptr<fp16> {...}, %n: i32, ...)``), lowered to a kernel
with those parameters and an empty body."""

import re

_TYPES = {"fp32": "float", "fp16": "half", "fp64": "double"}

_VECTOR_ADD = """\
declare spir_func i64 @_Z13get_global_idj(i32)

define spir_kernel void @{name}(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %out, i32 %n) {{
entry:
  %gid = call spir_func i64 @_Z13get_global_idj(i32 0)
  %i = trunc i64 %gid to i32
  %inside = icmp slt i32 %i, %n
  br i1 %inside, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds {ty}, ptr addrspace(1) %x, i64 %idx
  %py = getelementptr inbounds {ty}, ptr addrspace(1) %y, i64 %idx
  %po = getelementptr inbounds {ty}, ptr addrspace(1) %out, i64 %idx
  %a = load {ty}, ptr addrspace(1) %px, align 4
  %b = load {ty}, ptr addrspace(1) %py, align 4
  %sum = fadd {ty} %a, %b
  store {ty} %sum, ptr addrspace(1) %po, align 4
  br label %exit
exit:
  ret void
}}
"""


def _signature_kernel(src: str, name: str) -> str:
    """A spir_kernel with the parameters of a ``tt.func`` signature (constexprs are compiled in, not passed)."""
    args = src[src.index("(") + 1: src.rindex(")")]
    params = []
    for arg in re.split(r", (?=%|\w+ = )", args):
        found = re.match(r"%(\w+): (\S+)", arg.strip())
        if found:
            ty = "ptr addrspace(1)" if found.group(2).startswith("!tt.ptr") else found.group(2)
            params.append(f"{ty} %{found.group(1)}")
    return f"define spir_kernel void @{name}({', '.join(params)}) {{\nentry:\n  ret void\n}}\n"


def make_llir(src: str, metadata: dict) -> str:
    from triton._C.libtriton import ir

    if src.startswith("tt.func"):
        return ir.pass_manager().run(_signature_kernel(src, metadata["name"]), "make_llir")
    kernel, _, dtype = src.strip().partition(":")
    if kernel != "vector_add" or (dtype or "fp32") not in _TYPES:
        raise ValueError(f"the example spirv backend lowers 'vector_add[:{'|'.join(_TYPES)}]', not {src!r}")
    metadata["name"] = metadata.get("name", "add_kernel")
    pm = ir.pass_manager()  # as real backends run their pipelines (the example's passes nothing)
    return pm.run(_VECTOR_ADD.format(name=metadata["name"], ty=_TYPES[dtype or "fp32"]), "make_llir")


def make_spv(src: str, metadata: dict) -> bytes:
    from triton._C.libtriton import spirv

    return spirv.translate_to_spirv(src)


def add(stages: dict) -> None:
    stages.pop("spirv", None)  # the template's placeholder stage: this backend's last stage is spv
    stages["llir"] = make_llir
    stages["spv"] = make_spv
