"""The SIMD C target's printing (``c-simd``): ``printer`` walks the layout IR and spells each
operation through the ISA modules (gen/isa/x86.py, gen/isa/neon.py), ``driver`` lowers every
function of a variant through the layouts (gen/layouts/) and prints it with ``printer``, then
fills templates/c_simd/ (single-ISA files and the ``--isa auto`` dispatcher)."""
