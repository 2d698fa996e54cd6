"""One contract across the boundary (issue 12, item 1): every core-owned parameter's default and
range in Python come from the schema the core declares (capi/schema.go -> _schema.json), and the
Python and core checks agree at the edges of every range."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _schema, spaces
from sklearn.utils._param_validation import InvalidParameterError

ESTIMATORS = {"ridge": StructuredRidge, "prob": ProbabilisticStructured}


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_defaults_and_constraints_come_from_the_schema(key):
    cls = ESTIMATORS[key]
    signature = inspect.signature(cls.__init__).parameters
    built = _schema.constraints(key)
    for p in _schema.params(key):
        name = p["name"]
        assert name in signature, f"{cls.__name__} lacks the core parameter {name}"
        default = signature[name].default
        expected = p["default"]
        assert default == expected and type(default) is (
            float if p["type"] == "real" and expected is not None else type(expected)
        )
        # the estimator's constraint list starts with the schema's (a Python-only extra may follow)
        ours = cls._parameter_constraints[name]
        assert [str(c) for c in ours[: len(built[name])]] == [str(c) for c in built[name]], name


def _edge_values(p):
    """Values just outside a parameter's range, and its bounds inside it."""
    outside, inside = [], []
    low, high, closed = p.get("low"), p.get("high"), p.get("closed", "neither")

    def beyond(x, direction):  # the next int, or the next float (x ± 1e-9 is x itself at 4.5e307)
        return x + direction if p["type"] == "int" else float(np.nextafter(x, direction * np.inf))

    if low is not None:
        lo_in = closed in ("left", "both")
        outside.append(beyond(low, -1) if lo_in else low)
        inside.append(low if lo_in else beyond(low, 1))
    if high is not None:
        hi_in = closed in ("right", "both")
        outside.append(beyond(high, 1) if hi_in else high)
        inside.append(high if hi_in else beyond(high, -1))
    return outside, inside


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_python_refuses_just_outside_every_schema_range(key):
    cls = ESTIMATORS[key]
    X, Y = np.random.default_rng(0).normal(size=(12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    for p in _schema.params(key):
        if p["type"] not in ("real", "int"):
            continue
        outside, _ = _edge_values(p)
        for value in outside:
            if p.get("none_sentinel") is not None and value == p["none_sentinel"]:
                continue
            value = int(value) if p["type"] == "int" else float(value)
            with pytest.raises(InvalidParameterError, match=p["name"]):
                cls(**{p["name"]: value}).fit(X, Y)


@pytest.mark.parametrize("key", list(ESTIMATORS))
@pytest.mark.parametrize("flag", [True, np.True_])
def test_numbers_are_not_booleans(key, flag):
    """True is an Integral to Python: max_iter=True fitted one iteration (the spaces refused
    n_labels=True)."""
    cls = ESTIMATORS[key]
    X, Y = np.random.default_rng(0).normal(size=(12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    numbers = [p["name"] for p in _schema.params(key) if p["type"] in ("real", "int")]
    assert len(numbers) >= 3
    for name in numbers:
        with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter .* Got (np\.)?True_? instead"):
            cls(**{name: flag}).fit(X, Y)


def test_enum_options_are_the_cores():
    assert StructuredRidge._parameter_constraints["kernel"][0].options == set(_schema.options("ridge", "kernel"))
    # the fitted model names its kernel with the schema's names (cp_ridge_info)
    X, Y = np.random.default_rng(0).random((12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    for kernel in ("linear", "rbf"):
        assert StructuredRidge(space="multilabel", kernel=kernel).fit(X, Y)._model.info.kernel == kernel
    assert ProbabilisticStructured._parameter_constraints["sampler"][0].options == set(
        _schema.options("prob", "sampler")
    )
    assert StructuredRidge._parameter_constraints["solver"][0].options == set(_schema.options("ridge", "solver"))


def test_enums_statuses_and_query_defaults_are_the_cores():
    import inspect as _inspect

    from combpred import _capi, spaces
    from combpred._probabilistic import LOG_Z_METHODS

    assert list(LOG_Z_METHODS) == _schema.enum("log_z_methods")
    assert _schema.enum("fpras_schedules") == ["auto", "adaptive", "thesis"]
    assert list(spaces._DECODERS) == _schema.enum("decoder_modes")
    assert (_capi.OK, _capi.VALUE, _capi.TYPE, _capi.CANCELLED, _capi.INTERNAL, _capi.MEMORY) == (0, 1, 2, 3, 4, 5)
    sig = _inspect.signature(ProbabilisticStructured.log_partition).parameters
    assert sig["epsilon"].default == _schema.query_default("epsilon") == 0.1
    assert sig["delta"].default == _schema.query_default("delta") == 0.25
    assert sig["max_samples"].default == _schema.query_default("max_samples") == 50_000_000
    assert "max_samples : int, default=50_000_000" in ProbabilisticStructured.log_partition.__doc__


def test_auto_solver_limit_is_the_cores():
    """solver="auto" never solves a linear model exactly beyond the core's limit of unknowns,
    counting the intercept's row, and below it solves exactly only where the core's cost model
    prefers it over CG. Before
    the cost model, auto solved every model of up to 600 unknowns exactly, up to 12× slower than
    CG (Permutations(5), 5,000 rows, 40 features: 68 ms against 5.7 ms)."""
    import numpy as np

    limit = int(_schema.query_default("exact_unknowns"))
    assert f"never beyond {limit} unknowns" in " ".join(StructuredRidge.__doc__.split())
    assert "((n_features + 1) · d with" in StructuredRidge.__doc__
    rng = np.random.default_rng(0)

    def ran(n_rows, n_features, d, rate=0.5, **params):
        Y = (rng.random((n_rows, d)) < rate).astype(int)
        Y[0], Y[1] = 0, 1  # every label both on and off
        return StructuredRidge(**params).fit(rng.normal(size=(n_rows, n_features)), Y).solver_

    # a model whose exact solve is cheap at any size under the limit: one feature, one label
    # (2 unknowns with the intercept, 1 without) on few examples
    assert ran(50, 1, 1) == "exact"
    # at the limit, a shape the cost model sends to the exact solve: one feature and sparse labels
    # on many rows (2 · 300 unknowns); one label more passes the limit
    assert ran(20_000, 1, limit // 2, rate=0.01) == "exact"
    assert ran(20_000, 1, limit // 2 + 1, rate=0.01) == "cg"
    # just past the limit with the intercept, at it without: CG either way here, as the cost
    # model prefers CG for so many features
    d = 6
    assert ran(300, limit // d, d) == "cg"
    assert ran(300, limit // d, d, fit_intercept=False) == "cg"
    # 20 labels on 2,000 examples: exact with one feature, CG with 20 (420 unknowns, under the
    # limit), whose exact statistics cost (k + 1)/2 times more per example than CG's products
    assert ran(2000, 1, 20) == "exact"
    assert ran(2000, 20, 20) == "cg"


@pytest.mark.parametrize("cls", [spaces.Permutations, spaces.DirectedCycles, spaces.UndirectedCycles, spaces.Cliques])
def test_decoder_limits_are_the_cores(cls):
    """The decoder parameter's limits, stated in each space's docstring, are the core's: "exact"
    is accepted up to its limit and refused beyond, naming it."""
    auto, exact = _schema.decoder_limits(cls.kind)
    size = cls._size_name
    doc = " ".join(cls.__doc__.split())
    assert f'``"auto"``: exactly up to {size} = {auto},' in doc
    assert f"exactly at any size up to {size} = {exact}," in doc
    cls(exact, decoder="exact")
    with pytest.raises(ValueError, match=f"limited to {size} ≤ {exact}"):
        cls(exact + 1, decoder="exact")


def test_n_components_range_is_the_cores():
    """The docstring states n_components' range (it was undocumented, and checked even for the
    kernels that ignore it)."""
    (entry,) = [p for p in _schema.params("ridge") if p["name"] == "n_components"]
    assert f"between {int(entry['low'])} and {int(entry['high']):,}" in " ".join(StructuredRidge.__doc__.split())


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_every_integer_parameter_states_the_cores_32_bit_bound(key):
    """The core parses integer parameters as 32-bit: degree=2**40 passed Python's checks and was
    refused after the data were checked, as "not a 32-bit integer" (audit P)."""
    ints = [p for p in _schema.params(key) if p["type"] == "int"]
    assert ints and all(p.get("high") is not None and p["high"] <= 2**31 - 1 for p in ints)
    X, Y = np.random.default_rng(0).normal(size=(12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    name = ints[0]["name"]
    with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter .* 2147483647"):
        ESTIMATORS[key](**{name: 2**40}).fit(X, Y)


def test_the_core_resolves_gamma_none_and_ignores_n_components_without_a_map():
    """gamma=None is 1/n_features and n_components is ignored by the linear kernel: rules Python
    applied itself while the core defaulted gamma to 1 and refused n_components (audit P)."""
    from combpred import StructuredRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 7))
    Y = (X[:, :3] > 0).astype(int)
    for params in ({}, {"n_components": 20, "random_state": 0}):
        default = StructuredRidge(kernel="rbf", **params).fit(X, Y).decision_function(X)
        explicit = StructuredRidge(kernel="rbf", gamma=1 / 7, **params).fit(X, Y).decision_function(X)
        np.testing.assert_array_equal(default, explicit)
    linear = StructuredRidge(kernel="linear").fit(X, Y).decision_function(X)
    ignored = StructuredRidge(kernel="linear", n_components=20).fit(X, Y).decision_function(X)
    np.testing.assert_array_equal(linear, ignored)


def _entry(cls, name: str) -> str:
    """The numpydoc entry of parameter ``name`` in cls's docstring, on one line."""
    import inspect
    import re

    doc = inspect.getdoc(cls)  # at the margin, as Python ≥ 3.13 stores it
    start = re.search(rf"^{name} : ", doc, re.M)
    assert start, name
    end = re.search(r"\n\S", doc[start.end() :])  # the next line at the margin
    return " ".join(doc[start.start() : start.end() + (end.start() if end else len(doc))].split())


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_docstring_defaults_are_the_schemas(key):
    """Each parameter's numpydoc "default=" is the core's default, and a number the core gives to
    None (eta0's 0.5, learning_rate's 0.2) is the one the docstring states: numbers a change in Go
    would leave stale in Python's prose (audit P)."""
    import ast
    import re

    cls = ESTIMATORS[key]
    for p in _schema.params(key):
        if p.get("internal"):
            continue
        entry = _entry(cls, p["name"])
        stated = re.match(rf"{p['name']} : .*?default=(\S+?)(?: |$)", entry)
        assert stated, entry
        value = ast.literal_eval(stated.group(1))
        assert value == p["default"] and isinstance(value, bool) == isinstance(p["default"], bool), (p["name"], value)
        none = re.search(r"None: ([0-9.]+)$", p["doc"])
        if none:
            assert re.search(rf"None means (the core's default, )?{re.escape(none.group(1))}\b", entry), entry


def test_exact_inference_limits_in_the_docstrings_are_the_cores():
    """ProbabilisticStructured's docstrings state the sizes up to which inference is exact (the
    dynamic programmes' limits and the brute-force sums): numbers of the core, now in the schema
    (audit P); the limits hold at their edges."""
    limits = _schema._SCHEMA["partition_limits"]
    perm, dicycles, ucycles = limits["permutations"], limits["dicycles"], limits["ucycles"]
    assert dicycles == ucycles
    every = int(_schema.query_default("brute_force_max"))
    auto = int(_schema.query_default("auto_brute_force_max"))
    power = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    dp = f"permutations up to {perm} labels, directed and undirected cycles up to {dicycles} vertices"
    cls_doc = " ".join(ProbabilisticStructured.__doc__.split())
    exponent = {n: str(n.bit_length() - 1).translate(power) for n in (auto, every)}
    assert f"{dp}) or a sum over at most 2{exponent[auto]} structures (2{exponent[every]} with" in cls_doc
    sampler_doc = " ".join(cls_doc.split("sampler : ")[1].split("n_samples : ")[0].split())
    assert (
        f'every structure of spaces of up to 2{exponent[every]} (``"auto"`` sums only up to 2{exponent[auto]}'
        in sampler_doc
    )
    alone = _schema._SCHEMA["logz_limits"]
    log_z_alone = alone["permutations"]
    assert alone["dicycles"] == alone["ucycles"]
    log_z = " ".join(ProbabilisticStructured.log_partition.__doc__.split())
    assert (
        f"{dp}; log Z alone, without the marginals, of permutations up to {log_z_alone} labels and cycles up to "
        f"{alone['dicycles']} vertices, in up to 0.1 s per row), or enumeration up to "
        f"2{str(every.bit_length() - 1).translate(power)}"
    ) in log_z
    X = np.zeros((2, 1))
    for n, marginals, partition in ((perm, True, True), (perm + 1, False, True), (log_z_alone + 1, False, False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one iteration does not converge
            model = ProbabilisticStructured(space=spaces.Permutations(n), max_iter=1)
            model.fit(X, np.tile(np.arange(1, n + 1), (2, 1)))
        if marginals:
            model.predict_marginals(X[:1], method="exact")
        else:
            with pytest.raises(ValueError):
                model.predict_marginals(X[:1], method="exact")
        if partition:
            log_z_value, info = model.log_partition(X[:1], method="exact")
            auto_value, auto_info = model.log_partition(X[:1])  # exact too, where it sampled at 17 labels
            assert np.array_equal(log_z_value, auto_value) and list(auto_info["method"]) == ["exact"]
        else:
            with pytest.raises(ValueError):
                model.log_partition(X[:1], method="exact")


def test_solver_limits_in_the_docstrings_are_the_cores():
    """The exact solver's limit of unknowns and the largest d held densely, stated in the
    docstrings of StructuredRidge, its Dask form and DAGSubsets, are the core's (audit P)."""
    from combpred.dask import DaskStructuredRidge

    unknowns = int(_schema.query_default("max_exact_unknowns"))
    dim = int(_schema.query_default("max_dense_dim"))
    ridge = " ".join(StructuredRidge.__doc__.split())
    assert f"(at most {unknowns} unknowns)" in ridge
    assert f"Output spaces with d > {dim} " in ridge and f"needs d ≤ {dim};" in ridge
    dask = " ".join(DaskStructuredRidge.__doc__.split())
    assert f"(up to {unknowns} unknowns:" in dask and f"linear models up to {unknowns} unknowns," in dask
    assert f"at most {dim} nodes, the dense reference covariance" in " ".join(spaces.DAGSubsets.__doc__.split())


def test_thread_clamp_in_the_docstrings_is_the_cores():
    per_cpu = int(_schema.query_default("max_threads_per_cpu"))
    for cls in ESTIMATORS.values():
        assert f"Counts above {per_cpu} threads per CPU are clamped" in " ".join(cls.__doc__.split())


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_real_parameters_take_any_real_as_its_float(key):
    """A Fraction is a numbers.Real: scikit-learn's range check called np.isnan on it and failed
    with NumPy's words, naming no parameter. It is now read as the float the estimator passes on;
    a real beyond float64 (10**400) is refused by name."""
    from fractions import Fraction

    cls = ESTIMATORS[key]
    X, Y = np.random.default_rng(0).normal(size=(12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    reals = [p["name"] for p in _schema.params(key) if p["type"] == "real"]
    assert "alpha" in reals and "tol" in reals
    for name in ("alpha", "tol"):
        as_fraction = cls(**{name: Fraction(1, 8)}).fit(X, Y)
        as_float = cls(**{name: 0.125}).fit(X, Y)
        np.testing.assert_array_equal(as_fraction.coef_, as_float.coef_)
    for name in reals:
        with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter"):
            cls(**{name: 10**400}).fit(X, Y)
    # positive as a long double, 0 as the float passed on (ProbabilisticStructured's alpha=0 is None)
    for name in ("alpha", "tol"):
        with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter"):
            cls(**{name: np.longdouble("1e-330")}).fit(X, Y)


@pytest.mark.parametrize("key", list(ESTIMATORS))
def test_alpha_bound_is_refused_by_name_before_the_data(key):
    """alpha's upper bound is the core's (check.MaxAlpha), stated in the schema: 1e308 was
    accepted by the range check and refused by the core after the data were validated."""
    cls = ESTIMATORS[key]
    bound = next(p for p in _schema.params(key) if p["name"] == "alpha")["high"]
    assert bound == np.finfo(np.float64).max / 4
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        cls(alpha=1e308).fit(np.full((3, 2), np.nan), np.eye(3, dtype=int))  # X would be refused next


@pytest.mark.parametrize("key", list(ESTIMATORS))
@pytest.mark.parametrize("flag", [True, np.False_])
def test_n_jobs_is_not_a_boolean(key, flag):
    """n_jobs=True fitted on one thread without a word."""
    X, Y = np.random.default_rng(0).normal(size=(12, 3)), np.eye(3, dtype=int)[np.arange(12) % 3]
    with pytest.raises(InvalidParameterError, match="'n_jobs' parameter"):
        ESTIMATORS[key](n_jobs=flag).fit(X, Y)


def test_marginal_scale_limit_in_the_docstring_is_the_cores():
    """predict_marginals states the largest scale factor, the core's (ridge.MaxScaleFactor), and a
    larger one is refused naming scale (the core said "the factor of the marginals' scale", probe BU)."""
    limit, low = _schema.query_default("max_marginal_scale"), _schema.query_default("min_marginal_scale")
    doc = " ".join(StructuredRidge.predict_marginals.__doc__.split())
    stated = f"(from {low:.1e}, the smallest normal float64, to {limit:.0e}, which keeps c·S u(x) finite)"
    assert stated.replace("e+", "e") in doc
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    model = StructuredRidge().fit(X, (rng.random((20, 3)) < 0.5).astype(int))
    assert np.isfinite(model.predict_marginals(X[:2], scale=limit)).all()
    with pytest.raises(ValueError, match=r"^scale=1e\+101: the marginals' scale factor must be a positive number from"):
        model.predict_marginals(X[:2], scale=1e101)
    assert np.isfinite(model.predict_marginals(X[:2], scale=low)).all()
    with pytest.raises(ValueError, match=r"^scale=1e-309: .*smallest normal"):
        model.predict_marginals(X[:2], scale=1e-309)


@pytest.mark.parametrize("cls", [StructuredRidge, ProbabilisticStructured])
def test_cached_validation_decides_as_scikit_learns(cls):
    # the estimators validate against constraint objects made once per class (issue 18: making
    # them, and reading the signature, at every fit cost a twentieth of a yeast-sized linear fit);
    # every parameter at odd values is admitted or refused exactly as scikit-learn's
    # validate_parameter_constraints decides, and a refusal is scikit-learn's, also when the value
    # is checked again (admitted values are remembered by type and value: True after 1, 1.0 after 1)
    from combpred.dask import DaskProbabilisticStructured, DaskStructuredRidge
    from sklearn.utils._param_validation import validate_parameter_constraints

    odd = [
        0,
        1,
        1.0,
        -1,
        0.5,
        2**63,
        1e308,
        float("nan"),
        float("inf"),
        True,
        False,
        None,
        "x",
        "auto",
        [1],
        np.int64(3),
    ]
    for klass in (cls, DaskStructuredRidge if cls is StructuredRidge else DaskProbabilisticStructured):
        assert klass._get_param_names() == sorted(inspect.signature(klass.__init__).parameters.keys() - {"self"})
        for name in klass._get_param_names():
            for value in odd:
                est = klass(**{name: value})
                try:
                    validate_parameter_constraints(
                        klass._parameter_constraints, est.get_params(deep=False), caller_name=klass.__name__
                    )
                    expected = None
                except InvalidParameterError as exc:
                    expected = str(exc)
                for attempt in ("first", "again"):  # again: from the values admitted before
                    try:
                        est._validate_params()
                        got = None
                    except InvalidParameterError as exc:
                        got = str(exc)
                    assert got == expected, (klass.__name__, name, value, attempt)


def test_cached_validation_follows_subclasses_and_edited_constraints(monkeypatch):
    # the constraint objects are cached per class (issue 18); a subclass that extends
    # _get_param_names has its own parameters validated, and a constraint set on the class after a
    # fit applies to the next one (probe CM: both were skipped)
    from numbers import Real

    from sklearn.utils._param_validation import Interval, StrOptions

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 4)), (rng.normal(size=(40, 3)) > 0).astype(int)

    class Extended(StructuredRidge):
        _parameter_constraints = {**StructuredRidge._parameter_constraints, "bar": [StrOptions({"x"})]}
        bar = "y"

        @classmethod
        def _get_param_names(cls):
            return sorted([*StructuredRidge._get_param_names(), "bar"])

    with pytest.raises(InvalidParameterError, match="'bar' parameter of Extended must be a str among"):
        Extended().fit(X, Y)
    StructuredRidge(alpha=1.0).fit(X, Y)
    monkeypatch.setitem(StructuredRidge._parameter_constraints, "alpha", [Interval(Real, 10, None, closed="left")])
    with pytest.raises(
        InvalidParameterError, match=r"'alpha' parameter of StructuredRidge must be a float in the range \[10"
    ):
        StructuredRidge(alpha=1.0).fit(X, Y)
    monkeypatch.undo()
    StructuredRidge(alpha=1.0).fit(X, Y)


def test_admitted_values_are_not_checked_again(monkeypatch):
    # a refit with the same parameter values asks no constraint again (issue 18: half of a
    # yeast-sized fit's validation); a value of another type, a new value, or constraints made
    # anew are checked
    from combpred import _estimator_base
    from combpred._schema import Number

    asked = []
    original = Number.is_satisfied_by
    monkeypatch.setattr(Number, "is_satisfied_by", lambda self, val: asked.append(val) or original(self, val))
    est = StructuredRidge(alpha=2.5)
    est._validate_params()
    assert 2.5 in asked
    asked.clear()
    est._validate_params()
    assert asked == []
    est.set_params(alpha=3.5)
    est._validate_params()
    assert asked == [3.5]
    asked.clear()
    StructuredRidge(max_iter=1)._validate_params()
    with pytest.raises(InvalidParameterError, match="'max_iter' parameter"):
        StructuredRidge(max_iter=True)._validate_params()  # True == 1, but not an iteration count
    _estimator_base._SATISFIED.clear()
    est._validate_params()
    assert 3.5 in asked
    # a bounded memory: many values are forgotten, not kept
    for k in range(_estimator_base._SATISFIED_MAX + 10):
        StructuredRidge(alpha=1.0 + k)._validate_params()
    assert len(_estimator_base._SATISFIED) <= _estimator_base._SATISFIED_MAX


def test_constraints_replaced_twice_or_edited_in_place_apply(monkeypatch):
    # the cached constraints are compared by identity with the table's entries and their items:
    # a list replaced twice between fits (the second may take the freed first's address, which a
    # key of id()s took for the old one), or an item replaced in place, applies at the next fit
    # (probe CN)
    from numbers import Real

    from sklearn.utils._param_validation import Interval

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.3).astype(int)
    StructuredRidge(alpha=0.5).fit(X, Y)
    table = StructuredRidge._parameter_constraints
    monkeypatch.setitem(table, "alpha", [Interval(Real, 1, None, closed="left")])
    monkeypatch.setitem(table, "alpha", [Interval(Real, 1, None, closed="left")])
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        StructuredRidge(alpha=0.5).fit(X, Y)
    monkeypatch.undo()
    StructuredRidge(alpha=0.5).fit(X, Y)
    monkeypatch.setitem(table, "alpha", list(table["alpha"]))
    StructuredRidge(alpha=0.5).fit(X, Y)
    table["alpha"][0] = Interval(Real, 1, None, closed="left")  # the list monkeypatch restores
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        StructuredRidge(alpha=0.5).fit(X, Y)


def test_a_validation_on_replaced_constraints_admits_nothing_later(monkeypatch):
    # a validation still running on the old constraints when they are made anew (another thread)
    # admits its value for that run only: the next fit checks it against the new ones (probe CN)
    import threading
    from numbers import Real

    from combpred import _estimator_base
    from sklearn.utils._param_validation import Interval

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.3).astype(int)
    entered, release = threading.Event(), threading.Event()

    class SlowInterval(Interval):
        def is_satisfied_by(self, val):
            entered.set()
            release.wait(10)
            return super().is_satisfied_by(val)

    table = StructuredRidge._parameter_constraints
    monkeypatch.setitem(table, "alpha", [SlowInterval(Real, 0, None, closed="neither")])
    worker = threading.Thread(target=lambda: StructuredRidge(alpha=0.5).fit(X, Y))
    worker.start()
    assert entered.wait(10)
    monkeypatch.setitem(table, "alpha", [Interval(Real, 1, None, closed="left")])
    _estimator_base._made_constraints(StructuredRidge)
    release.set()
    worker.join(10)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter"):
        StructuredRidge(alpha=0.5).fit(X, Y)
