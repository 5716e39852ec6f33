# Vendored subset: only _2025_12 is kept (see bench/array-api-tests/VENDORED.md).
