"""threefish-gen: a code generator for verified, optimized Threefish implementations.

Pipeline (one module or folder per stage; docs/architecture.md):
    spec.py -> dsl.py + threefish.py -> layouts/ -> asm/ (assembly targets) -> printers/ (templates/)
each target's passes declared by its descriptor in targets/; verify/ checks what they emit.
"""
__version__ = "0.1.0"
