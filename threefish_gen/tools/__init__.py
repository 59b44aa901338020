"""The application layer below cli.py: what the commands beyond render and verify do (bench/,
tune, explore, regalloc, check DIR, prove, placing render's files).  It imports gen/ and verify/;
neither imports it (tests/test_layering.py)."""
