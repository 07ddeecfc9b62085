"""The example tree's compiler driver, shaped like Triton's ``triton.compile``: find the backend that supports the
target, let it add its stages, run them in order. The first IR is the kernel's signature with the launcher's
specialisations (the example tree has no frontend), so every stage sees what a real pipeline would be given."""

from dataclasses import dataclass, field


class ASTSource:
    """A kernel to compile (Triton 3.3+'s calling convention): attrs by argument path, constexprs by name."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        self.fn = fn
        self.name = getattr(fn, "__name__", "kernel")
        self.signature = dict(signature)
        self.constants = {(list(self.signature).index(k),) if isinstance(k, str) else k: v
                          for k, v in (constexprs or {}).items()}
        self.attrs = dict(attrs or {})

    def make_ttir(self):
        args = []
        for index, (name, ty) in enumerate(self.signature.items()):
            if ty == "constexpr":
                args.append(f"{name} = {self.constants.get((index,))} : constexpr")
                continue
            mlir = f"!tt.ptr<{ty[1:]}>" if ty.startswith("*") else ty
            attrs = ", ".join(f"{key} = {value} : i32" for key, value in self.attrs.get((index,), []))
            args.append(f"%{name}: {mlir}" + (f" {{{attrs}}}" if attrs else ""))
        return f"tt.func public @{self.name}({', '.join(args)})"


@dataclass
class CompiledKernel:
    name: str
    asm: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


def compile(src, target=None, options=None):  # noqa: A001 - Triton's name
    from triton.backends import backends

    found = [b.compiler for b in backends.values() if b.compiler.supports_target(target)]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} backends support {target}")
    backend = found[0](target)
    stages = {}
    backend.add_stages(stages, dict(options or {}), "triton")
    metadata = {"name": src.name, "target": target}
    module, asm = src.make_ttir(), {}
    for ext, lower in stages.items():
        module = lower(module, metadata)
        asm[ext] = module
    return CompiledKernel(metadata["name"], asm, metadata)
