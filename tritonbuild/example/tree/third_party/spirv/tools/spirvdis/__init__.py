def disassemble(blob: bytes) -> str:
    return f"; {len(blob)} bytes of SPIR-V"
