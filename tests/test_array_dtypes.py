"""Every array argument of every public method, fed every dtype and layout: the result equals that of
the same values as C-contiguous float64/int64, or a clear error names the argument. Every array that
crosses the C ABI goes through one choke point (combpred._capi.f64/i64); a float32 buffer read as
double* once corrupted partial_fit (issue 11, finding 1)."""

from __future__ import annotations

import decimal
import re

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _capi, spaces

DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
    ">f8",
    ">i8",
]


def variants(a: np.ndarray, tmp_path):
    """(label, array) of a's values in every dtype and layout."""
    for dtype in DTYPES:
        yield str(np.dtype(dtype)), a.astype(dtype)
    yield "non-contiguous", np.repeat(a, 2, axis=0)[::2]
    yield "fortran", np.asfortranarray(a)
    readonly = a.copy()
    readonly.flags.writeable = False
    yield "read-only", readonly
    mm = np.memmap(tmp_path / "a.dat", dtype=a.dtype, mode="w+", shape=a.shape)
    mm[...] = a
    yield "memmap", mm


def _canonical(a: np.ndarray, kind: str) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64 if kind == "f" else np.int64)


def _results(value):
    if isinstance(value, tuple):  # log_partition: (log_z, info)
        value = (value[0],) + tuple(value[1][k] for k in sorted(value[1]))
    return [np.asarray(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def check_argument(name: str, base: np.ndarray, kind: str, call, tmp_path, names=None) -> None:
    """call(array) on every variant equals call(the same values as float64/int64), or raises naming it."""
    names = names or (name,)
    for label, variant in variants(base, tmp_path):
        with np.errstate(all="ignore"):
            values = np.asarray(variant)
            if kind == "i" and values.dtype.kind == "f":
                values = np.where(np.isfinite(values), values, 0)
            reference = _canonical(values, kind)
        try:
            expected = _results(call(reference))
        except (ValueError, TypeError) as exc:
            expected = exc  # invalid values (not a dtype matter): the variant must be refused alike
        try:
            got = _results(call(variant))
        except (ValueError, TypeError) as exc:
            same = isinstance(expected, Exception) and str(exc) == str(expected)
            assert same or any(n in str(exc) for n in names), (name, label, str(exc))
            continue
        assert not isinstance(expected, Exception), (name, label, "accepted values refused as float64/int64")
        for g, e in zip(got, expected, strict=True):
            if g.dtype.kind in "iubUS":
                np.testing.assert_array_equal(g, e, err_msg=f"{name} as {label}")
            else:
                np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"{name} as {label}")


SPACES = {
    "multilabel": (lambda: spaces.Multilabel(4), lambda rng, m: (rng.random((m, 4)) < 0.5).astype(np.int64)),
    "ksubsets": (
        lambda: spaces.KSubsets(5, 2),
        lambda rng, m: np.array([np.isin(np.arange(5), rng.choice(5, 2, replace=False)) for _ in range(m)], np.int64),
    ),
    "permutations": (
        lambda: spaces.Permutations(4),
        lambda rng, m: np.array([rng.permutation(4) + 1 for _ in range(m)], np.int64),
    ),
    "multiclass": (lambda: spaces.Multiclass(3), lambda rng, m: rng.integers(0, 3, m).astype(np.int64)),
}


def _data(space_name: str, m: int = 24, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, 3)) * 4) / 4 + 2.0  # exact in float16, positive for unsigned kinds
    Y = SPACES[space_name][1](rng, m)
    w = rng.integers(1, 4, m).astype(np.float64)
    return X, Y, w


def _probe(model, Xt):
    return [model.predict(Xt), model.decision_function(Xt)]


@pytest.mark.parametrize("space_name", sorted(SPACES))
def test_ridge_every_array_argument(space_name, tmp_path):
    X, Y, w = _data(space_name)
    Xt = X[:7].copy()
    space = SPACES[space_name][0]()
    make = lambda: StructuredRidge(space=space, solver="exact")  # noqa: E731
    check_argument("X", X, "f", lambda a: _probe(make().fit(a, Y, w), Xt), tmp_path)
    check_argument("y", Y, "i", lambda a: _probe(make().fit(X, a, w), Xt), tmp_path, ("y", "Y", "label"))
    check_argument("sample_weight", w, "f", lambda a: _probe(make().fit(X, Y, a), Xt), tmp_path)

    def first_then_second(X1=X, Y1=Y, w1=w, X2=X, Y2=Y, w2=w):
        model = make().partial_fit(X1[:12], Y1[:12], w1[:12])
        return [model.partial_fit(X2[12:], Y2[12:], w2[12:]).coef_] + _probe(model, Xt)

    for key, base, kind, names in [("X", X, "f", None), ("Y", Y, "i", ("y", "Y", "label")), ("w", w, "f", None)]:
        for call in ("1", "2"):  # the first call of partial_fit, then the second
            check_argument(
                "sample_weight" if key == "w" else key,
                base,
                kind,
                lambda a, arg=key + call: first_then_second(**{arg: a}),
                tmp_path,
                names,
            )
    model = make().fit(X, Y)
    check_argument("X", Xt, "f", model.predict, tmp_path)
    check_argument("X", Xt, "f", model.decision_function, tmp_path)
    check_argument("X", X, "f", lambda a: model.score(a, Y, w), tmp_path)
    check_argument("sample_weight", w, "f", lambda a: model.score(X, Y, a), tmp_path)
    check_argument("y", Y, "i", lambda a: model.score(X, a, w), tmp_path, ("y", "Y", "label"))


@pytest.mark.parametrize("space_name", ["multilabel", "permutations", "multiclass"])
def test_probabilistic_every_array_argument(space_name, tmp_path):
    X, Y, w = _data(space_name)
    Xt = X[:5].copy()
    space = SPACES[space_name][0]()
    make = lambda: ProbabilisticStructured(space=space, max_iter=300, random_state=0)  # noqa: E731
    check_argument("X", X, "f", lambda a: _probe(make().fit(a, Y, w), Xt), tmp_path)
    check_argument("y", Y, "i", lambda a: _probe(make().fit(X, a, w), Xt), tmp_path, ("y", "Y", "label"))
    check_argument("sample_weight", w, "f", lambda a: _probe(make().fit(X, Y, a), Xt), tmp_path)
    model = make().fit(X, Y)
    for method in (
        model.predict,
        model.decision_function,
        model.predict_marginals,
        lambda a: model.sample(a, 3, random_state=0),
        lambda a: model.log_partition(a, method="exact"),
        lambda a: model.score_samples(a, Y[:5]),
    ):
        check_argument("X", Xt, "f", method, tmp_path)
    check_argument("Y", Y[:5], "i", lambda a: model.score_samples(Xt, a), tmp_path, ("y", "Y", "label"))
    check_argument("sample_weight", w, "f", lambda a: model.score(X, Y, a), tmp_path)


@pytest.mark.parametrize("space_name", sorted(SPACES))
def test_space_every_array_argument(space_name, tmp_path):
    space = SPACES[space_name][0]()
    _, Y, _ = _data(space_name)
    rng = np.random.default_rng(3)
    U = np.round(rng.normal(size=(6, space.dim)) * 4) / 4 + 0.125
    check_argument("Y", Y, "i", space.embed, tmp_path)
    check_argument("Y", Y, "i", lambda a: space.validate(a) or 0, tmp_path)
    check_argument("U", U, "f", space.decode, tmp_path)
    check_argument("v", U[0], "f", space.covariance_dot, tmp_path)
    check_argument("Y_true", Y, "i", lambda a: space.score(a, Y), tmp_path, ("Y_true", "Y"))


@pytest.mark.parametrize("bad", [np.array([1 + 2j]), np.array(["a"]), np.array([object()], dtype=object)])
def test_choke_point_refuses_unsafe_kinds_naming_the_argument(bad):
    for convert in (_capi.f64, _capi.i64):
        with pytest.raises(TypeError, match="my_arg"):
            convert(bad, (1,), "my_arg")


def test_choke_point_checks_integers_and_shape():
    with pytest.raises(ValueError, match="my_arg must hold integers"):
        _capi.i64(np.array([1.5]), (1,), "my_arg")
    with pytest.raises(ValueError, match="my_arg holds .*, outside the 64-bit signed integers"):
        _capi.i64(np.array([2**64 - 1], dtype=np.uint64), (1,), "my_arg")
    with pytest.raises(ValueError, match=r"my_arg must have shape \(3,\), got \(2,\)"):
        _capi.f64(np.zeros(2), (3,), "my_arg")
    # a long double holds int64's maximum exactly: read as it, where Python floats refused it and
    # named entry 0 (probe 85); 2⁶³ itself is named at its place
    top = np.longdouble(2**63) - 1
    if top != np.longdouble(2**63):  # an 80-bit long double (float64 on some platforms)
        a, _ = _capi.i64(np.array([1, top], dtype=np.longdouble), (2,), "my_arg")
        assert a.tolist() == [1, 2**63 - 1]
    with pytest.raises(ValueError, match=r"^my_arg holds .*, outside the 64-bit signed integers at row 1$"):
        _capi.i64(np.array([1, 2**63], dtype=np.longdouble), (2,), "my_arg")
    with pytest.raises(ValueError, match=r"outside the 64-bit signed integers at row 1$"):
        _capi.i64(np.array([1, 2**63 - 1], dtype=np.float64), (2,), "my_arg")  # rounds to 2⁶³
    a, _ = _capi.f64(np.arange(6, dtype=">i4").reshape(2, 3)[:, ::2], (2, 2), "my_arg")
    assert a.dtype == np.float64 and a.flags.c_contiguous and a.dtype.isnative


def test_long_double_is_rounded_wherever_fit_rounds_it():
    # the choke point refused long double ("would lose precision") where fit, predict and
    # sample_weight round it to float64: one rule for every argument now (probe CB)
    a, _ = _capi.f64(np.array([1.5, -2.25], dtype=np.longdouble), (2,), "my_arg")
    assert a.dtype == np.float64 and a.tolist() == [1.5, -2.25]
    space = spaces.Multilabel(4)
    U = np.array([[0.5, -1.0, 2.0, -0.25]])
    np.testing.assert_array_equal(space.decode(U.astype(np.longdouble)), space.decode(U))


@pytest.mark.parametrize(
    "raw",
    [
        lambda out: out.ctypes.data_as(_capi.POINTER(_capi.c_double)),  # a pointer of the right C type
        lambda out: out.ctypes.data,  # an address
        lambda out: out,  # the array itself
        lambda out: _capi.c_double(),  # a cell not of the checked type
        lambda out: _capi.i64(np.zeros(3, np.int64), (3,), "a")[1],  # a checked buffer of another dtype
    ],
    ids=["pointer", "address", "array", "cell", "int64-buffer"],
)
def test_c_abi_refuses_raw_pointers(raw):
    """No array can reach Go without the choke point: the signature admits only checked buffers."""
    out = np.empty(3)
    with pytest.raises(Exception, match="expected LP_CheckedFloat64 instance"):
        _capi.lib().cp_space_mean(spaces.Multilabel(3)._h(), raw(out), 3)
    buffer = _capi.f64(out, (3,), "out", writable=True)[1]
    _capi.check(_capi.lib().cp_space_mean(spaces.Multilabel(3)._h(), buffer, 3))
    np.testing.assert_array_equal(out, 0.5)


def test_partial_fit_second_call_float32_weights_regression():
    """Issue 11 finding 1: the second partial_fit read float32 weights as double."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(80, 4)), (rng.random((80, 5)) < 0.4).astype(int)
    w = rng.integers(1, 4, 40).astype(np.float64)

    def coef(dtype):
        model = StructuredRidge(space="multilabel", solver="exact").partial_fit(X[:40], Y[:40])
        return model.partial_fit(X[40:], Y[40:], sample_weight=w.astype(dtype)).coef_

    np.testing.assert_allclose(coef(np.float32), coef(np.float64), rtol=1e-12, atol=1e-12)


def test_pandas_nullable_targets_are_taken_wherever_fit_takes_them():
    # fit read an Int64 frame through scikit-learn's check_array; score, validate and embed read
    # it by np.asarray, an object array, and refused it ("y must hold integers, got dtype object")
    pd = pytest.importorskip("pandas")
    from combpred import StructuredRidge, spaces

    space = spaces.Permutations(4)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = space.sample(60, random_state=0)
    frame = pd.DataFrame(Y).astype("Int64")
    model = StructuredRidge(space=space).fit(X, frame)
    assert model.score(X, frame) == model.score(X, Y)
    space.validate(frame)
    np.testing.assert_array_equal(space.embed(frame), space.embed(Y))
    labels = pd.DataFrame(Y < 3).astype("boolean")  # a nullable boolean frame as a multilabel Y
    np.testing.assert_array_equal(spaces.Multilabel(4).embed(labels), spaces.Multilabel(4).embed(Y < 3))
    frame.iloc[3, 1] = pd.NA
    # named with its place, as an object array's None is (probe 84)
    with pytest.raises(
        ValueError, match=r"^Y holds a missing value \(pd.NA\) at row 3, column 1: drop its rows or fill it$"
    ):
        space.validate(frame)
    with pytest.raises(
        ValueError, match=r"^y holds a missing value \(pd.NA\) at row 3, column 1: drop its rows or fill it$"
    ):
        model.score(X, frame)
    labels.iloc[5, 2] = pd.NA  # without the hint for label sets, which is not what is wrong
    with pytest.raises(
        ValueError, match=r"^y holds a missing value \(pd.NA\) at row 5, column 2: drop its rows or fill it$"
    ):
        StructuredRidge(space="multilabel").fit(X, labels)


def test_masked_arrays_that_mask_an_entry_are_refused_by_name():
    """NumPy's conversions drop a mask (probe U): a masked-out row trained at full weight, and a
    masked weight counted as its underlying value. An array that masks nothing is an array."""
    from combpred import metrics
    from combpred.baselines import KNNBordaRanker

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = (X[:, :3] > 0).astype(int)
    mask = np.zeros(X.shape, bool)
    mask[3, 1] = True
    model = StructuredRidge().fit(X, Y)
    np.testing.assert_array_equal(StructuredRidge().fit(np.ma.array(X), np.ma.array(Y)).coef_, model.coef_)
    refused = {
        "X": lambda: StructuredRidge().fit(np.ma.array(X, mask=mask), Y),
        "X ": lambda: model.predict(np.ma.array(X, mask=mask)),
        "y": lambda: ProbabilisticStructured().fit(X, np.ma.array(Y, mask=mask[:, :3])),
        "sample_weight": lambda: model.fit(X, Y, sample_weight=np.ma.array(np.ones(40), mask=np.arange(40) < 5)),
        "X  ": lambda: KNNBordaRanker().fit(np.ma.array(X, mask=mask), np.argsort(X[:, :3], axis=1)),
        "Y_true": lambda: metrics.kendall_tau(np.ma.array(np.argsort(X, axis=1), mask=mask), np.argsort(X, axis=1)),
    }
    for name, call in refused.items():
        with pytest.raises(ValueError, match=rf"^{name.strip()} is a masked array that masks \d+ of its entries"):
            call()


def test_sample_weight_takes_numbers_held_as_objects_and_names_what_is_not_one():
    """scikit-learn takes object weights that are numbers; ours said 'got dtype object', also for
    a generator, which now names itself (probe U). A string is still refused, not parsed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = (X[:, :3] > 0).astype(int)
    w = np.linspace(1, 3, 40)
    expected = StructuredRidge().fit(X, Y, sample_weight=w).coef_
    np.testing.assert_array_equal(StructuredRidge().fit(X, Y, sample_weight=w.astype(object)).coef_, expected)
    for one in (np.array(2.0, dtype=object), np.array([2.0] * 40, dtype=object)):
        np.testing.assert_array_equal(
            StructuredRidge().fit(X, Y, sample_weight=one).coef_, StructuredRidge().fit(X, Y, sample_weight=2.0).coef_
        )
    np.testing.assert_allclose(
        StructuredRidge().fit(X, Y, sample_weight=[decimal.Decimal(str(v)) for v in w]).coef_, expected, rtol=1e-12
    )
    for bad, found in (
        (np.array(["1.0"] * 40, dtype=object), "str"),
        ((1.0 for _ in range(40)), "generator"),
        ([1.0] * 39 + [None], "NoneType"),  # None was read as NaN, and named as one
    ):
        with pytest.raises(ValueError, match=f"^sample_weight must hold real numbers, found {found}$"):
            StructuredRidge().fit(X, Y, sample_weight=bad)
    with pytest.raises(ValueError, match="^sample_weight holds a number too large for a float64$"):
        StructuredRidge().fit(X, Y, sample_weight=[10**400] * 40)  # was a bare OverflowError


def test_metrics_refuse_dates_and_durations():
    """policy_cosine read timedelta64 values as their counts of seconds (probe U)."""
    from combpred import metrics

    with pytest.raises(ValueError, match="^W_true must hold real numbers, got dtype timedelta64"):
        metrics.policy_cosine(np.ones((3, 3)).astype("m8[s]"), np.ones((3, 3)))


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_dates_and_durations_in_X_are_refused_by_column(estimator):
    """A datetime64[D] X was read as days and the same dates as datetime64[s] as seconds: a model
    fitted on one predicted the other with other features and no warning (probe DL)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    dates = np.datetime64("2020-01-01") + rng.integers(0, 1000, size=(30, 1)).astype("m8[D]")
    y = np.arange(30) % 2
    frame = pd.DataFrame({"x": rng.normal(size=30), "when": dates.ravel()})
    for X, where in (
        (dates, r"X has dtype datetime64\[D\]"),
        (dates - dates.min(), r"X has dtype timedelta64\[D\]"),
        (frame, r"X column 'when' has dtype datetime64"),
        (frame.assign(when=frame["when"].dt.tz_localize("UTC")), r"X column 'when' has dtype datetime64\[.*, UTC\]"),
        (frame.assign(when=frame["when"].dt.to_period("M")), r"X column 'when' has dtype period\[M\]"),
    ):
        with pytest.raises(ValueError, match=rf"^{where}.*: dates, times and durations are not features"):
            estimator(space="multiclass").fit(X, y)
    model = estimator(space="multiclass").fit(frame[["x"]].to_numpy(), y)
    with pytest.raises(ValueError, match=r"^X has dtype datetime64"):
        model.predict(dates)
    # scikit-learn's "Complex data not supported" named no argument and printed the array (probe DO)
    with pytest.raises(
        ValueError, match=r"^X must hold real numbers, got dtype complex128: Complex data not supported$"
    ):
        model.predict(frame[["x"]].to_numpy() + 1j)
    with pytest.raises(
        ValueError, match=r"^X column 'x' must hold real numbers, got dtype complex128: Complex data not supported$"
    ):
        estimator(space="multiclass").fit(frame[["x"]] + 1j, y)


def test_X_that_is_no_array_of_numbers_is_named():
    """scikit-learn's float() of a generator, a dict or an int beyond float64 named neither X nor
    what to pass (probe DL)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.arange(20) % 2
    model = StructuredRidge(space="multiclass").fit(X, y)
    with pytest.raises(TypeError, match=r"^X must be an array of rows \(2-D\), got a generator; pass np.asarray"):
        StructuredRidge(space="multiclass").fit((row for row in X), y)
    with pytest.raises(TypeError, match=r"^X must be an array of rows \(2-D\), got a dict; pass pandas.DataFrame"):
        model.predict({"a": X[:, 0], "b": X[:, 1]})
    with pytest.raises(TypeError, match=r"^X must hold real numbers: float\(\) argument .* not 'iterator'"):
        StructuredRidge(space="multiclass").fit([iter(row) for row in X], y)
    with pytest.raises(OverflowError, match="^X must hold real numbers: int too large to convert to float"):
        StructuredRidge(space="multiclass").fit(np.array([[10**400, 1]] + [[1, 1]] * 19, dtype=object), y)


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_class_labels_are_read_one_way_and_missing_ones_named(estimator):
    """Integer labels in an object array (a pandas column after dropna) were "not class labels" to
    fit, "not comparable" to score and taken by partial_fit; a missing label was scikit-learn's
    "Input contains NaN" or pandas' "boolean value of NA is ambiguous" (probe DL)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.arange(30) % 3
    expected = estimator(space="multiclass").fit(X, y)
    model = estimator(space="multiclass").fit(X, y.astype(object))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))
    assert model.score(X, pd.Series(y).astype(object)) == expected.score(X, y)
    strings = pd.Series(y.astype(str)).astype("string")
    strings[4] = pd.NA
    labels = y.astype(object)
    labels[7] = np.nan
    for bad, shown, row in ((strings, "<NA>", 4), (labels, "nan", 7), (pd.Series(labels).astype("category"), "nan", 7)):
        for call in (estimator(space="multiclass").fit, expected.score):
            with pytest.raises(ValueError, match=rf"^y holds a missing class label \({shown}\) at row {row}: drop"):
                call(X, bad)
    if hasattr(estimator, "partial_fit"):
        with pytest.raises(ValueError, match=r"^y holds a missing class label \(<NA>\) at row 4"):
            estimator(space="multiclass").partial_fit(X, strings, classes=["0", "1", "2"])


@pytest.mark.parametrize("odd", [None, "NA", "4", [1]])
def test_an_object_target_that_is_not_a_number_is_named_where_it_is(odd):
    """Object targets are read as their numbers; one entry that is none (None, pd.NA, a string) was
    refused as "got dtype object", which object arrays are not refused for, without its place
    (probe 81). A missing value is a ValueError, another object a TypeError, by space and by fit."""
    pd = pytest.importorskip("pandas") if odd == "NA" else None
    value = pd.NA if odd == "NA" else odd
    space = spaces.Permutations(4)
    Y = np.array([[1, 2, 3, 4], [4, 3, 2, 1]], dtype=object)
    Y[1, 2] = value
    missing = value is None or odd == "NA"
    kind = ValueError if missing else TypeError
    said = (
        rf"holds a missing value \({re.escape(repr(value))}\) at row 1, column 2: drop"
        if missing
        else (rf"must hold integers, found {re.escape(repr(value))} \({type(value).__name__}\) at row 1, column 2")
    )
    with pytest.raises(kind, match="^Y " + said):
        space.validate(Y)
    for model in (StructuredRidge(space=space), ProbabilisticStructured(space=space)):
        with pytest.raises(kind, match="^y " + said):
            model.fit(np.zeros((2, 2)), Y)


def test_python_integers_beyond_int64_are_named_by_value():
    # NumPy holds 2**70 in no integer dtype: the object (or float) array it made was refused as
    # "got dtype object", or a parent array as not an integer array (probe CE)
    space = spaces.Multilabel(3)
    with pytest.raises(
        ValueError, match=r"^Y holds 1180591620717411303424, outside the 64-bit signed integers at row 0"
    ):
        space.embed([[2**70, 0, 0]])
    with pytest.raises(ValueError, match=r"^Y holds -18446744073709551616, outside .* at row 1, column 1$"):
        space.validate([[0, 0, 0], [0, -(2**64), 0]])
    with pytest.raises(
        TypeError, match=r"^Y must hold integers, found 'a' \(str\) at row 0, column 0$"
    ):  # a kind error
        space.embed(np.array([["a", 0, 0]], dtype=object))
    # fit's targets, and a float beyond int64 named as Python prints it, where it is (probe CH)
    with pytest.raises(ValueError, match=r"^y holds 1180591620717411303424, outside .* at row 2$"):
        StructuredRidge(space=spaces.Multiclass(3)).fit(np.zeros((3, 2)), [0, 1, 2**70])
    with pytest.raises(ValueError, match=r"^Y holds 1e\+19, outside the 64-bit signed integers at row 1, column 0$"):
        space.embed(np.array([[0.0, 0, 0], [1e19, 0, 0]]))
    for parent in ([-1, 2**63], (-1, 0, -(2**70)), np.array([-1, 2**64], dtype=object)):
        for cls in (spaces.HierarchyPaths, spaces.Subtrees):
            with pytest.raises(ValueError, match=r"^parent holds the node id -?\d{19,}, out of range"):
                cls(parent)
