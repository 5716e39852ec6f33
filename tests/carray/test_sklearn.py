"""scikit-learn's array API dispatch on carray arrays (issue 13 item 5): PCA, linear discriminant
analysis, ridge regression and the scalers fit and predict on carray arrays on cpu and gpu,
return carray arrays on the same device, and match scikit-learn's results on NumPy arrays; and
SciPy's array-API-aware functions take carray arrays. (SCIPY_ARRAY_API=1, which both need, is
set by tests/carray/conftest.py before anything imports SciPy.)"""

import numpy as np
import pytest

import carray as ca

sklearn = pytest.importorskip("sklearn")
pytest.importorskip("array_api_compat")

from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.preprocessing import MinMaxScaler, StandardScaler  # noqa: E402


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6)) * np.array([3, 1, 0.5, 2, 1, 4]) + 1
    y = rng.integers(0, 3, 80)
    X[y == 1] += 1.5
    return X, y, X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(80)


def _fit(make, method, X, *ys, predict=False):
    with sklearn.config_context(array_api_dispatch=True):
        model = make()
        out = getattr(model, method)(X, *ys)
        if predict:
            out = model.predict(X)
    return model, out


def _check(ours, ref, device, dtype, rtol):
    assert isinstance(ours, ca.Array), type(ours)
    assert ours.device == device and ours.dtype == dtype
    np.testing.assert_allclose(np.asarray(ours.to("cpu")), ref, rtol=rtol, atol=rtol)


CASES = [
    ("PCA", lambda: PCA(n_components=3, svd_solver="full"), "fit_transform", False, False),
    ("LDA", lambda: LinearDiscriminantAnalysis(), "fit", True, True),
    ("Ridge", lambda: Ridge(alpha=1.0, solver="svd"), "fit", True, False),
    ("StandardScaler", StandardScaler, "fit_transform", False, False),
    ("MinMaxScaler", MinMaxScaler, "fit_transform", False, False),
]


@pytest.mark.parametrize("name, make, method, predict, classes", CASES,
                         ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_estimators_on_carray_match_numpy(device, data, name, make, method, predict, classes,
                                          dtype):
    X, y, yr = data
    X = X.astype(dtype)
    target = (y,) if classes else (yr.astype(dtype),) if predict else ()
    _, ref = _fit(make, method, X, *target, predict=predict)
    Xc = ca.asarray(X).to(device)
    tc = tuple(ca.asarray(t).to(device) for t in target)
    model, ours = _fit(make, method, Xc, *tc, predict=predict)
    rtol = 1e-8 if dtype == "float64" else 2e-4
    if name == "PCA":       # components are defined up to sign: align each column
        got = np.asarray(ours.to("cpu"))
        ours = ca.asarray(got * np.sign(np.sum(got * ref, axis=0))).to(device)
    if name == "LDA":       # class labels: equal as values
        assert ours.device == device
        np.testing.assert_array_equal(np.asarray(ours.to("cpu")), ref)
        return
    _check(ours, ref, device, dtype, rtol)


def test_scipy_array_api_functions_take_carray(device):
    special = pytest.importorskip("scipy.special")
    x = np.random.default_rng(1).standard_normal((4, 5))
    out = special.logsumexp(ca.asarray(x).to(device), axis=1)
    assert isinstance(out, ca.Array) and out.device == device
    np.testing.assert_allclose(np.asarray(out.to("cpu")), special.logsumexp(x, axis=1),
                               rtol=1e-12)
