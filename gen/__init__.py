"""threefish-gen: a code generator for verified, optimized Threefish implementations.

Pipeline (one module or folder per stage):
    spec.py -> dsl.py + threefish.py -> layouts/ -> regalloc -> printers (templates/) -> verify/
"""
__version__ = "0.1.0"
