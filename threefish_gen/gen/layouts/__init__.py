"""Stage 3 -- layouts: how the description's 64-bit words map onto machine values.

``scalar`` is the identity mapping: one word per 64-bit variable or register,
the word permutation is free renaming.  SIMD layouts (one block packed over
lanes, many blocks word-sliced across lanes) are further mappings of the same
program.
"""
