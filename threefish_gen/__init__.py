"""threefish-gen: the generator library (threefish_gen.gen), its verifier (threefish_gen.verify)
and the application layer (CLI, bench, reports) beside them."""
