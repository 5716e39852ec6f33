"""Pickles made before carray's layout by role name `carray._array._reconstruct`; it lives in
carray.core._array now. This module keeps those pickles loading."""

from carray.core._array import _reconstruct  # noqa: F401
