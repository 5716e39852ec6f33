"""Tests of autograd/ops (a package, so test_indexing.py does not clash with tests/carray's)."""
