"""One module per allocation strategy; ``common`` and ``fixed`` are shared."""
