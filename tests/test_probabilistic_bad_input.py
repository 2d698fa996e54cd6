"""ProbabilisticStructured with bad input: clear ValueError/TypeError naming the problem, at the
estimator and at the C ABI (wrong handle kinds, freed handles, NULL pointers, corrupt bytes,
parameter strings). Ctrl-C during a fit: test_processes.py."""

from __future__ import annotations

import ctypes
import pickle
import warnings
from fractions import Fraction

import _abi
import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _capi, spaces
from combpred._core import ProbModel as _ProbModel
from numpy.testing import assert_array_equal
from sklearn.exceptions import ConvergenceWarning, NotFittedError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 6))
    Y = (X[:, :3] + rng.normal(size=(40, 3)) > 0).astype(np.int64)
    return X, Y


@pytest.fixture(scope="module")
def fitted(data):
    X, Y = data
    return ProbabilisticStructured(alpha=0.05).fit(X, Y)


# -- the estimator's methods -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        # ranges and options are the core's (capi/probparams.go), and its errors name the argument
        ({"epsilon": 0}, r'parameter epsilon="0.0": must be in \(0, 1\)'),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"epsilon": float("nan")}, r'epsilon="nan": must be finite'),
        ({"epsilon": "0.5"}, "epsilon must be a real number"),
        ({"epsilon": True}, "epsilon must be a real number"),
        # Python's unnamed OverflowError, and "epsilon=0.0" for a positive Fraction (probe 85)
        ({"epsilon": 10**400}, "^epsilon=1000.* is beyond float64's range$"),
        ({"delta": 10**400}, "^delta=1000.* is beyond float64's range$"),
        ({"epsilon": Fraction(1, 10**400)}, r"^epsilon=Fraction\(1, 1000.* rounds to 0.0 as a float64$"),
        ({"delta": 0}, "delta"),
        ({"delta": 2}, r'parameter delta="2.0": must be in \(0, 1\)'),
        ({"n_samples": 0}, r'parameter n_samples="0": must be an integer ≥ 1'),
        ({"n_samples": 2**40}, r'n_samples="1099511627776": not a 32-bit integer'),
        ({"n_samples": 2.5}, "n_samples must be an integer"),
        ({"method": "bogus"}, r'parameter method="bogus": .*want auto, exact, fpras or taylor'),
        ({"method": "sampled"}, "want auto, exact, fpras or taylor"),
        ({"method": None}, "method must be a name, got None"),
        ({"schedule": "fast"}, "want auto, adaptive or thesis"),
        # named as the argument (it said "the constant p (0)", which no caller can set)
        (
            {"method": "fpras", "schedule": "adaptive", "n_samples": 10},
            r"n_samples = 10, the sample size per stage, belongs to the thesis schedule, not the adaptive one",
        ),
        ({"sampler": "exact"}, r'parameter sampler="exact": want auto, cftp, metropolis, local or mixed'),
        ({"sampler": "gibbs"}, "want auto, cftp, metropolis, local or mixed"),
        # a name cannot smuggle other keys into the parameter string
        ({"sampler": "auto;n_samples=1"}, "sampler must be None or a name"),
        ({"schedule": "thesis;epsilon=0.9"}, "schedule must be None or a name"),
        # a NUL ended the C string there, dropping the keys after it (random_state among them)
        ({"schedule": "thesis\x00"}, "schedule must be None or a name"),
        ({"sampler": "cftp\x00"}, "sampler must be None or a name"),
        ({"method": "fpras\x00"}, "method must be a name"),
        ({"sampler": " auto"}, "sampler must be None or a name"),
    ],
)
def test_bad_log_partition_arguments(data, fitted, kwargs, match):
    X, Y = data
    with pytest.raises(ValueError, match=match):
        fitted.log_partition(X[:3], **kwargs)
    with pytest.raises(ValueError, match=match):
        fitted.score_samples(X[:3], Y[:3], **kwargs)


def test_score_samples_names_an_unknown_argument(data, fitted):
    """It named the private _log_z_params()."""
    X, Y = data
    with pytest.raises(
        TypeError, match=r"score_samples\(\) got unexpected keyword arguments \['bogus'\]; it takes \['epsilon'"
    ):
        fitted.score_samples(X[:3], Y[:3], bogus=1)
    assert fitted.score_samples(X[:3], Y[:3], max_samples=10**6, schedule="auto").shape == (3,)


def test_score_samples_names_its_argument_y():
    """Its argument is Y (fit's is y): the core's check of its rows and the check of class labels
    both said y, the latter with NumPy's reprs (np.str_('z'))."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (X > 0).astype(int)
    with pytest.raises(ValueError, match=r"^Y: row 0: label 0 has value 2, want 0 or 1$"):
        ProbabilisticStructured().fit(X, Y).score_samples(X[:2], Y[:2] * 2)
    labelled = ProbabilisticStructured(space="multiclass").fit(X, np.array(list("abc"))[np.arange(40) % 3])
    with pytest.raises(ValueError, match=r"^Y contains label 'z' at row 1, which is not in classes \['a', 'b', 'c'\]$"):
        labelled.score_samples(X[:2], ["a", "z"])


def test_bad_sampling_arguments(data, fitted):
    X, _ = data
    for n in (0, -3):
        with pytest.raises(ValueError, match=f"n_samples must be ≥ 1, got {n}"):
            fitted.sample(X[:2], n)
        with pytest.raises(ValueError, match=f'parameter n_samples="{n}": must be an integer ≥ 1'):
            fitted.predict_marginals(X[:2], n_samples=n)
    for n in (1.5, True, None):
        with pytest.raises(ValueError, match="n_samples must be an integer"):
            fitted.sample(X[:2], n)
    for n in (1.5, True):
        with pytest.raises(ValueError, match="n_samples must be an integer"):
            fitted.predict_marginals(X[:2], n_samples=n)
    for sampler in ("exact", "gibbs"):
        with pytest.raises(ValueError, match=f'parameter sampler="{sampler}": want auto, cftp, metropolis'):
            fitted.sample(X[:2], 2, sampler=sampler)
        with pytest.raises(ValueError, match=f'parameter sampler="{sampler}": want auto, cftp, metropolis'):
            fitted.predict_marginals(X[:2], sampler=sampler)
    for sampler in (3, "cftp;n_samples=1"):
        with pytest.raises(ValueError, match="sampler must be None or a name"):
            fitted.sample(X[:2], 2, sampler=sampler)
        with pytest.raises(ValueError, match="sampler must be None or a name"):
            fitted.predict_marginals(X[:2], sampler=sampler)
    assert fitted.sample(X[:2], np.int32(3)).shape[:2] == (2, 3)  # NumPy integers are integers
    y = np.arange(len(X)) % 3
    multiclass = ProbabilisticStructured(space="multiclass").fit(X, y)
    with pytest.raises(ValueError, match="sampler=local: the multiclass space has no local chain"):
        multiclass.sample(X[:2], 2, sampler="local")


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"sampler": "gibbs"}, "sampler"),
        ({"n_samples": 0}, "n_samples"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": 1.0}, "tol"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters(data, params, match):
    X, Y = data
    with pytest.raises(ValueError, match=match):
        ProbabilisticStructured(**params).fit(X, Y)


def test_samplers_the_space_cannot_use(data):
    X, Y = data
    y = Y[:, 0] + Y[:, 1]
    with pytest.raises(ValueError, match="sampler=local: the multiclass space has no local chain"):
        ProbabilisticStructured(space="multiclass", sampler="local").fit(X, y)
    with pytest.raises(ValueError, match="sampler=mixed: the multiclass space has no local chain"):
        ProbabilisticStructured(space="multiclass", sampler="mixed").fit(X, y)
    perms = spaces.Permutations(17)  # beyond the subset programme (16 labels)
    with pytest.raises(ValueError, match="sampler=exact: the permutations space .* has no exact inference"):
        ProbabilisticStructured(space=perms, sampler="exact").fit(X, perms.sample(len(X), random_state=0))


def test_bad_targets_and_inputs(data, fitted):
    X, Y = data
    Y2 = Y.copy()
    Y2[5, 2] = 3
    with pytest.raises(ValueError, match="row 5: label 2 has value 3"):
        ProbabilisticStructured().fit(X, Y2)
    with pytest.raises(ValueError, match=r"Y must have shape \(n_samples, 3\)"):
        fitted.score_samples(X[:2], Y[:2, :2])
    with pytest.raises(ValueError, match="row 1: label 0 has value 2"):
        fitted.score_samples(X[:2], np.array([[0, 1, 1], [2, 0, 0]]))
    with pytest.raises(ValueError, match="X has 3 rows but Y has 2"):
        fitted.score_samples(X[:3], Y[:2])
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict_proba(np.where(np.eye(6, dtype=bool), np.nan, X[:6]))
    with pytest.raises(ValueError, match="5 features.*expecting 6"):
        fitted.sample(X[:, :5], 2)
    with pytest.raises(ValueError, match="non-zero"):
        ProbabilisticStructured().fit(X, Y, sample_weight=np.zeros(len(X)))
    with pytest.raises(NotFittedError):
        ProbabilisticStructured().log_partition(X)


def test_taylor_out_of_range_is_flagged_not_raised(data, fitted):
    X, _ = data
    logz, info = fitted.log_partition(X * 100, method="taylor")
    assert np.all(np.isfinite(logz)) and not info["valid"].any() and np.all(info["bound"] > 0.3)


def test_fpras_work_bound_is_an_error_not_a_hang(data, fitted):
    X, _ = data
    with pytest.raises(ValueError, match="work bound|above the bound"):
        fitted.log_partition(X[:1] * 1e4, method="fpras", epsilon=0.01, schedule="thesis")
    # the adaptive schedule's cost does not grow with the scores, only as ε⁻²: ε = 10⁻⁴ asks for
    # about 10⁹ samples
    with pytest.raises(ValueError, match="work bound|above the bound"):
        fitted.log_partition(X[:1] * 1e4, method="fpras", epsilon=1e-4)


def test_fpras_work_bound_is_max_samples(data, fitted):
    """The bound is the user's ``max_samples`` (it was settable only from Go, yet the message told
    Python users to raise it), and the plan is printed compactly (ε = 1e-300 printed its run
    count as a 300-digit integer)."""
    X, _ = data
    est, info = fitted.log_partition(X[:1], method="fpras", random_state=0)
    used = int(info["samples"][0] + info["steps"][0])  # the structures drawn, which the bound counts
    with pytest.raises(ValueError, match=r"above the bound 10: raise epsilon or max_samples") as error:
        fitted.log_partition(X[:1], method="fpras", random_state=0, max_samples=10)
    assert len(str(error.value)) < 400
    # a bound above the plan (which overestimates the draw: 1,510 planned, 1,361 drawn) changes nothing
    again, _ = fitted.log_partition(X[:1], method="fpras", random_state=0, max_samples=used)
    assert again[0] == est[0]
    with pytest.raises(ValueError, match=r"\(1\.04e\+301 runs") as error:
        fitted.log_partition(X[:1], method="fpras", epsilon=1e-300)
    assert len(str(error.value)) < 400
    for bad in (0, -1, 2**63, 1.5):
        with pytest.raises(ValueError, match="max_samples"):
            fitted.log_partition(X[:1], method="fpras", max_samples=bad)


# -- the C ABI ---------------------------------------------------------------------------------------


def test_handles_of_the_wrong_kind(data, fitted):
    X, Y = data
    ridge = StructuredRidge().fit(X, Y)
    lib = _capi.lib()
    out = np.empty((len(X), 3))
    with pytest.raises(TypeError, match="not a prob model handle"):
        _capi.check(lib.cp_prob_decision(ridge._model.value, _abi.f64(X), *X.shape, _abi.f64(out), 3))
    with pytest.raises(TypeError, match="not a model handle"):
        _capi.check(lib.cp_ridge_decision(fitted._model.value, _abi.f64(X), *X.shape, _abi.f64(out), 3))
    with pytest.raises(TypeError, match="not a prob model handle"):
        _capi.check(lib.cp_prob_free(ridge._model.value))
    with pytest.raises(TypeError, match="not a model handle"):
        _capi.check(lib.cp_ridge_free(fitted._model.value))
    space = spaces.Multilabel(3)
    with pytest.raises(TypeError, match="not a space handle"):
        _capi.check(
            lib.cp_prob_fit(
                fitted._model.value,
                _abi.f64(X),
                *X.shape,
                _abi.i64(Y),
                3,
                None,
                b"",
                0,
                _capi.PROGRESS(),
                None,
                _capi.out_i64(),
            )
        )
    with pytest.raises(TypeError, match="not a prob model handle"):  # a warm start from a ridge model
        _capi.check(
            lib.cp_prob_fit(
                space._h(),
                _abi.f64(X),
                *X.shape,
                _abi.i64(Y),
                3,
                None,
                b"",
                ridge._model.value,
                _capi.PROGRESS(),
                None,
                _capi.out_i64(),
            )
        )
    with pytest.raises(TypeError, match="not a prob model handle"):
        _capi.check(lib.cp_prob_to_bytes(space._h(), None, 0, _capi.out_i64()))
    assert fitted.predict(X).shape == (len(X), 3) and ridge.predict(X).shape == (len(X), 3)


def test_freed_and_never_issued_handles(data):
    X, Y = data
    model = ProbabilisticStructured().fit(X, Y)
    handle = model._model.value
    lib = _capi.lib()
    _capi.check(lib.cp_prob_free(handle))
    for h in (handle, 0, -1, 2**62):
        with pytest.raises(ValueError, match="prob model handle .* invalid or already freed"):
            _capi.check(
                lib.cp_prob_marginals(
                    h,
                    _abi.f64(X),
                    *X.shape,
                    None,
                    _abi.f64(np.empty((40, 3))),
                    3,
                    _abi.i64(np.empty((40, 2), dtype=np.int64)),
                )
            )
    with pytest.raises(ValueError, match="invalid or already freed"):
        model.predict_proba(X)
    del model  # __del__ frees again: the error status is ignored


def test_null_pointers_and_sizes(data, fitted):
    X, Y = data
    lib = _capi.lib()
    h = fitted._model.value
    out = np.empty((len(X), 3))
    iout = np.empty((len(X), 3), dtype=np.int64)
    report = np.empty((len(X), 2), dtype=np.int64)  # the chain report of cp_prob_marginals and cp_prob_sample
    space = spaces.Multilabel(3)
    sh = space._h()
    q = len(X)
    cases = [
        (lambda: lib.cp_prob_decision(h, None, q, 6, _abi.f64(out), 3), "X is a NULL pointer"),
        (lambda: lib.cp_prob_predict(h, _abi.f64(X), q, 6, None, 3), "NULL pointer"),
        (lambda: lib.cp_prob_marginals(h, _abi.f64(X), q, 6, None, None, 3, _abi.i64(report)), "NULL pointer"),
        (lambda: lib.cp_prob_marginals(h, _abi.f64(X), q, 6, None, _abi.f64(out), 4, _abi.i64(report)), "columns"),
        (
            lambda: lib.cp_prob_marginals(h, _abi.f64(X), q, 6, None, _abi.f64(out), 3, None),
            "chain report .*NULL pointer",
        ),
        (lambda: lib.cp_prob_sample(h, _abi.f64(X), q, 6, 1, None, None, 3, _abi.i64(report)), "NULL pointer"),
        (
            lambda: lib.cp_prob_sample(h, _abi.f64(X), q, 6, 0, None, _abi.i64(iout), 3, _abi.i64(report)),
            "n_samples must be ≥ 1",
        ),
        (lambda: lib.cp_prob_sample(h, _abi.f64(X), q, 6, 1, None, _abi.i64(iout), 2, _abi.i64(report)), "columns"),
        (
            lambda: lib.cp_prob_sample(h, _abi.f64(X), q, 6, 1, None, _abi.i64(iout), 3, None),
            "chain report .*NULL pointer",
        ),
        (
            lambda: lib.cp_prob_score_samples(h, _abi.f64(X), q, 6, None, 3, None, _abi.f64(out), _abi.i64(iout)),
            "Y is a NULL",
        ),
        (
            lambda: lib.cp_prob_score_samples(
                h, _abi.f64(X), q, 6, _abi.i64(np.asarray(Y, dtype=np.int64)), 3, None, _abi.f64(out), None
            ),
            "validity output .*NULL pointer",
        ),
        (lambda: lib.cp_prob_log_partition(h, _abi.f64(X), q, 6, None, None, None, None), "NULL pointer"),
        (lambda: lib.cp_prob_log_partition(h, _abi.f64(X), -1, 6, None, _abi.f64(out), None, None), "negative"),
        (lambda: lib.cp_prob_coef(h, _abi.f64(out), 5, 3, None), "coef output"),
        (lambda: lib.cp_prob_info(h, None, 10, None), "NULL"),
        (lambda: lib.cp_prob_info(h, None, -1, _capi.out_i64()), "capacity -1 is negative"),
        (lambda: lib.cp_prob_fit_plan(sh, 0, b"", None, 0, _capi.out_i64()), "at least one example"),
        (lambda: lib.cp_prob_fit_plan(sh, q, b"sampler=bogus", None, 0, _capi.out_i64()), "sampler"),
        (lambda: lib.cp_prob_fit_plan(sh, q, b"", None, 0, None), "NULL"),
        (lambda: lib.cp_prob_fit_plan(0, q, b"", None, 0, _capi.out_i64()), "handle"),
        (lambda: lib.cp_prob_to_bytes(h, None, 10**6, None), "NULL pointer"),
        (lambda: lib.cp_prob_from_bytes(None, 100, _capi.out_i64()), "NULL pointer"),
        (lambda: lib.cp_prob_from_bytes((ctypes.c_uint8 * 4)(), -4, _capi.out_i64()), "bad length"),
        (
            lambda: lib.cp_prob_fit(
                sh, None, q, 6, _abi.i64(Y), 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "X is",
        ),
        (
            lambda: lib.cp_prob_fit(sh, _abi.f64(X), q, 6, _abi.i64(Y), 3, None, b"", 0, _capi.PROGRESS(), None, None),
            "NULL",
        ),
        (
            lambda: lib.cp_prob_fit(
                sh, _abi.f64(X), 0, 6, None, 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "sample",
        ),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())
    _capi.check(lib.cp_prob_decision(h, None, 0, 6, None, 3))  # zero rows may come as NULL


@pytest.mark.parametrize(
    "function, params, match",
    [
        ("fit", b"alpha=-1", "alpha"),
        ("fit", b"colour=red", "unknown parameter"),
        ("fit", b"n_samples=0", "n_samples"),
        ("fit", b"sampler=gibbs", "sampler"),
        ("fit", b"sampler=cftp;solver=lbfgs", "L-BFGS needs exact inference"),
        ("log_partition", b"epsilon=0", "epsilon"),
        ("log_partition", b"method=fpras;delta=1", "delta"),
        ("log_partition", b"n_samples=0", "n_samples"),
        ("log_partition", b"method=gibbs", "method"),
        ("marginals", b"method=fpras", "method"),
        ("marginals", b"sampler=local;method=sampled", None),  # fine: multilabel has a local chain
        ("sample", b"epsilon=0.1", "unknown parameter"),
    ],
)
def test_parameter_strings(data, fitted, function, params, match):
    X, Y = data
    lib = _capi.lib()
    h, q = fitted._model.value, len(X)
    out = np.empty((q, 3))
    space = spaces.Multilabel(3)  # keeps the handle alive during the call
    calls = {
        "fit": lambda: lib.cp_prob_fit(
            space._h(),
            _abi.f64(X),
            q,
            6,
            _abi.i64(Y),
            3,
            None,
            params,
            0,
            _capi.PROGRESS(),
            None,
            _capi.out_i64(),
        ),
        "log_partition": lambda: lib.cp_prob_log_partition(h, _abi.f64(X), q, 6, params, _abi.f64(out), None, None),
        "marginals": lambda: lib.cp_prob_marginals(
            h, _abi.f64(X), q, 6, params, _abi.f64(out), 3, _abi.i64(np.empty((q, 2), dtype=np.int64))
        ),
        "sample": lambda: lib.cp_prob_sample(
            h,
            _abi.f64(X),
            q,
            6,
            1,
            params,
            _abi.i64(np.empty((q, 3), dtype=np.int64)),
            3,
            _abi.i64(np.empty((q, 2), dtype=np.int64)),
        ),
    }
    if match is None:
        _capi.check(calls[function]())
        return
    with pytest.raises(ValueError, match=match):
        _capi.check(calls[function]())


# -- model bytes -------------------------------------------------------------------------------------


def test_corrupt_bytes(fitted):
    data = fitted._model.to_bytes()
    assert data[:4] == b"CPPM"
    for i in range(0, len(data), 7):
        flipped = bytearray(data)
        flipped[i] ^= 0x20
        with pytest.raises(ValueError, match="corrupt"):
            _ProbModel.from_bytes(bytes(flipped))
    for n in range(0, len(data), 11):
        with pytest.raises(ValueError, match="corrupt"):
            _ProbModel.from_bytes(data[:n])
    with pytest.raises(ValueError, match="corrupt"):
        _ProbModel.from_bytes(data + b"\x00")
    ridge_bytes = StructuredRidge().fit(np.eye(4), np.eye(4, dtype=int)[:, :3])._model.to_bytes()
    with pytest.raises(ValueError, match="bad magic"):
        _ProbModel.from_bytes(ridge_bytes)  # the kinds do not mix
    with pytest.raises(TypeError, match="must be bytes"):
        _ProbModel.from_bytes("CPPM")


def test_corrupt_pickle(data, fitted):
    X, _ = data
    blob = pickle.dumps(fitted)
    start = blob.index(b"CPPM")
    corrupt = bytearray(blob)
    corrupt[start + 30] ^= 0xFF
    with pytest.raises(ValueError, match="corrupt"):
        pickle.loads(bytes(corrupt))
    assert_array_equal(pickle.loads(blob).predict(X), fitted.predict(X))


def test_data_sums_and_fit_sums_refuse_bad_arguments(data):
    """The calls of the distributed fit (cp_prob_data_sums per partition, cp_prob_fit_sums with a
    callback adding them up) refuse bad shapes, NULL pointers and callbacks that fail or return
    sums no data could give, with the reason; an exception in the callback is raised as itself."""
    X, Y = data
    lib = _capi.lib()
    space = spaces.Multilabel(3)
    sh = space._h()
    q = len(X)
    W = np.zeros((7, 3))
    grad = np.empty((7, 3))
    loss, weight = _capi.out_f64_cell(), _capi.out_f64_cell()

    def sums(*args, centre=None, exponent=0):  # args as the ABI's without weight_exponent and centre
        return lib.cp_prob_data_sums(sh, *args[:6], exponent, args[6], centre, *args[7:])

    valid = (_abi.f64(X), q, 6, _abi.i64(Y), 3, None, 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad))

    cases = [
        (
            lambda: sums(
                _abi.f64(X), q, 6, _abi.i64(Y), 3, None, 1, _abi.f64(W[:6]), 6, 3, loss, weight, _abi.f64(grad)
            ),
            "coef is 6×3, but X's 6 features need 7×3",
        ),
        (
            lambda: sums(_abi.f64(X), q, 6, _abi.i64(Y), 3, None, 0, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)),
            "need 6×3",
        ),
        (
            lambda: sums(_abi.f64(X), q, 6, _abi.i64(Y), 3, None, 1, None, 7, 3, loss, weight, _abi.f64(grad)),
            "coef is a NULL",
        ),
        (
            lambda: sums(*valid, centre=_abi.f64(np.full(6, np.inf))),
            "centre",
        ),
        (
            lambda: sums(_abi.f64(X), q, 6, _abi.i64(Y), 3, None, 1, _abi.f64(W), 7, 3, None, weight, _abi.f64(grad)),
            "output loss",
        ),
        (
            lambda: sums(*valid, exponent=2**40),
            "weight_exponent must be in",
        ),
        (
            lambda: sums(_abi.f64(X), q, 6, _abi.i64(Y), 3, None, 1, _abi.f64(W), 7, 3, loss, weight, None),
            "grad is a NULL",
        ),
        (
            lambda: sums(None, q, 6, _abi.i64(Y), 3, None, 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)),
            "X is a NULL",
        ),
        (
            lambda: sums(
                _abi.f64(X), q, 2**62, _abi.i64(Y), 3, None, 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)
            ),
            "at least one feature",
        ),
        (
            lambda: sums(
                _abi.f64(X), q, 6, _abi.i64(2 * Y), 3, None, 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)
            ),
            "label 1 has value 2, want 0 or 1",
        ),
        (
            lambda: sums(
                _abi.f64(X),
                q,
                6,
                _abi.i64(Y),
                3,
                _abi.f64(-np.ones(q)),
                1,
                _abi.f64(W),
                7,
                3,
                loss,
                weight,
                _abi.f64(grad),
            ),
            "weight",
        ),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())
    # an empty part, and a part that weighs nothing, have zero sums
    _capi.check(sums(None, 0, 6, None, 3, None, 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)))
    assert loss.value == weight.value == 0 and not grad.any()
    _capi.check(
        sums(
            _abi.f64(X), q, 6, _abi.i64(Y), 3, _abi.f64(np.zeros(q)), 1, _abi.f64(W), 7, 3, loss, weight, _abi.f64(grad)
        )
    )
    assert loss.value == weight.value == 0 and not grad.any()

    def fit_with(callback, n=6, params=b"", space_handle=sh, psi_moments=None, boundary=None, boundary_len=None):
        cb = _capi.SUMS(callback) if callback is not None else ctypes.cast(None, _capi.SUMS)
        if boundary_len is None:
            boundary_len = 0 if boundary is None else len(boundary)
        return lib.cp_prob_fit_sums(
            space_handle,
            n,
            params,
            None,
            _abi.f64(np.ones(n)),
            psi_moments,
            None if boundary is None else _abi.f64(boundary),
            boundary_len,
            0,
            cb,
            _capi.PROGRESS(),
            None,
            _capi.out_i64(),
        )

    def writing(total_loss, total_weight):
        def callback(coef, rows, d, _exponent, loss, weight, grad, _ctx):
            np.ctypeslib.as_array(grad, shape=(rows, d))[...] = 0
            loss[0], weight[0] = total_loss, total_weight
            return 0

        return callback

    for call, match in [
        (lambda: fit_with(None), "sums callback is a NULL"),
        (lambda: fit_with(writing(1.0, 1.0), n=0), "n_features must be in"),
        (lambda: fit_with(lambda *args: 7), "sums callback failed \\(status 7\\)"),
        (lambda: fit_with(writing(float("nan"), 1.0)), "data term's sum is NaN"),
        (lambda: fit_with(writing(1.0, 0.0)), "positive finite sum"),
        (lambda: fit_with(writing(1.0, 1.0), params=b"sampler=metropolis"), "exact inference"),
        (lambda: fit_with(writing(1.0, 1.0), params=b"tol=2"), "tol"),
        (
            lambda: fit_with(writing(1.0, 1.0), psi_moments=_abi.f64(np.full(2 * space.dim + 1, -1.0))),
            r"psi_moments: the moments of ψ weigh -1 in all; the weights' sum cannot be negative",
        ),
        (lambda: fit_with(writing(1.0, 1.0), boundary=np.ones(7), boundary_len=6), "boundary holds 6 values"),
        (lambda: fit_with(writing(1.0, 1.0), boundary=np.ones(6)), "boundary holds 6 values, .* counts 7"),
        (
            lambda: fit_with(writing(1.0, 1.0), boundary=np.array([2.0, 3, 0, 0, 0, 0, 0])),
            r"boundary counts: value 1 is 3, want a whole number of rows in \[0, 2\]",
        ),
    ]:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())

    def raising(W, weight_exponent):
        raise ZeroDivisionError("from a worker")

    call = _ProbModel.fit_sums_call(space._handle(), 6, b"", None, raising)
    with pytest.raises(ZeroDivisionError, match="from a worker"):
        call(_capi.PROGRESS(), _capi.out_i64())


def test_boundary_counts_refuse_bad_arguments(data, fitted):
    """cp_prob_boundary_counts says how many values the space needs, refuses another length, NULL
    pointers, bad structures and weights with the reason, and counts an empty part as zero rows."""
    X, Y = data
    lib = _capi.lib()
    space = spaces.Multilabel(3)  # kept alive: its handle is freed with it
    sh = space._h()
    q = len(Y)
    need = _capi.out_i64()

    def counts_call(ys=None, m=q, w=3, weights=None, out=None, length=7, out_len=need, handle=sh):
        ys = _abi.i64(Y) if ys is None else ys
        return lib.cp_prob_boundary_counts(handle, ys, m, w, weights, out, length, out_len)

    _capi.check(counts_call())
    assert need.value == 1 + 2 * 3
    out = np.full(7, -1.0)
    for call, match in [
        (
            lambda: counts_call(out=_abi.f64(out), length=6),
            "counts holds 6 values, the multilabel space's boundary counts 7",
        ),
        (lambda: counts_call(out_len=None), "out_len"),
        (lambda: counts_call(ys=_abi.i64(2 * Y), out=_abi.f64(out)), "y: row 0: label 1 has value 2, want 0 or 1"),
        (lambda: counts_call(w=2, out=_abi.f64(out)), "Y has 2 columns"),
        (lambda: counts_call(ys=None, out=_abi.f64(out), m=-1), "Y must have between 0"),
        (lambda: counts_call(weights=_abi.f64(-np.ones(q)), out=_abi.f64(out)), r"sample_weight\[0\]"),
        (lambda: counts_call(handle=fitted._model.value, out=_abi.f64(out)), "space"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            _capi.check(call())
    _capi.check(counts_call(out=_abi.f64(out)))
    on = (Y != 0).sum(axis=0)
    assert_array_equal(out, np.concatenate([[q], on, q - on]))
    _capi.check(counts_call(ys=None, m=0, out=_abi.f64(out)))
    assert not out.any()


def test_fit_sums_takes_only_a_space_handle(data, fitted):
    cb = _capi.SUMS(lambda *args: 1)
    with pytest.raises(TypeError):
        _capi.check(
            _capi.lib().cp_prob_fit_sums(
                fitted._model.value, 6, b"", None, None, None, None, 0, 0, cb, _capi.PROGRESS(), None, _capi.out_i64()
            )
        )


def test_a_diverging_learning_rate_is_named():
    # The overflow of the scores used to be reported against an input row ("row 15: score u[0] =
    # -Inf is not finite"), as if the data were at fault.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    space = spaces.Permutations(18)  # sampled inference: the Adam solver
    with pytest.raises(
        ValueError, match=r"Adam diverged at iteration \d+ with learning_rate = 1e\+308: .*lower learning_rate"
    ):
        ProbabilisticStructured(space=space, learning_rate=1e308, max_iter=20).fit(X, space.sample(30, random_state=0))


def test_huge_alpha_fits_the_intercept():
    # alpha = 1e20 dwarfs the data term: the line search halved its first step 60 times, to 1e-18,
    # found no decrease and stopped at the start (intercept 0, where it is the logit of the label
    # rates), and the warning said "increase max_iter", which changed nothing. It then stepped by
    # the quadratic model, and alpha = 1e200 ended in a warning to rescale; since the solvers work
    # in coordinates scaled by each feature's spread and √(2·alpha), any alpha fits in a few steps.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    Y = (X[:, :3] > 0).astype(int)
    rates = Y.mean(axis=0)
    for alpha in (1e20, 1e200, 1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model = ProbabilisticStructured(alpha=alpha, max_iter=1000).fit(X, Y)
        np.testing.assert_allclose(model.intercept_, np.log(rates / (1 - rates)), atol=1e-6)
        # W is of the order of ∇(data term)/(2·alpha), |∇| ≤ max|X|: the coefficients' share of J's
        # gradient is below tol there, so their digits beyond that order are not resolved
        assert np.abs(model.coef_ * alpha).max() <= 10 * np.abs(X).max()
    with pytest.warns(ConvergenceWarning, match=r"stopped after 2 iterations .*; increase max_iter$"):
        ProbabilisticStructured(alpha=1e-3, max_iter=2).fit(X, Y)


def test_predictions_refuse_scores_beyond_their_precision():
    """An input far outside the training scale (x = 10¹⁴ here) gave Permutations(5) marginals off by
    0.06 and log p(mode) = +0.03; at 10³⁰⁷ a marginal had the wrong sign. Such scores are refused,
    naming the row; a space whose marginals stay exact at any scale (multilabel) still answers.
    Cliques' enumeration was taken as exact at any scale: 0.4 off at ‖u‖₁ = 2.7e16 (probe EB)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    big = np.array([[1.0, 0.0, 0.0], [1e14, 0.0, 0.0]])
    for space in (spaces.Permutations(5), spaces.DirectedCycles(5), spaces.Cliques(4)):
        model = ProbabilisticStructured(space=space).fit(X, space.sample(20, random_state=0))
        assert np.all(np.isfinite(model.predict_marginals(big[:1])))
        with pytest.raises(
            ValueError,
            match=r"X row 1: its scores have ‖u‖₁ = .*loses its precision.*predict_marginals\(X, method=\"sampled\"\)",
        ):
            model.predict_marginals(big)
        # the error's advice works: at such scores p(·|x) is a point mass at the mode, which the
        # default sampler's chains find (CFTP's exact samples would hit their work bound)
        sampled = model.predict_marginals(big, method="sampled", n_samples=50, random_state=0)
        assert_array_equal(sampled[1], space.embed(model.predict(big[1:]))[0])
        with pytest.raises(ValueError, match=r"X row 1: .*log p\(y \| x\)"):
            model.score_samples(big, model.predict(big))
        assert model.predict(big).shape == (2, space.width)  # the mode needs no sums
    space = spaces.Multilabel(4)
    model = ProbabilisticStructured(space=space).fit(X, space.sample(20, random_state=0))
    assert_array_equal(model.predict_marginals(big)[1], space.embed(model.predict(big[1:]))[0])


def test_adam_overshooting_advises_a_lower_learning_rate():
    """learning_rate = 1e12 left coefficients of 1e6, a gradient 1e5 times the start's, and the
    advice "increase max_iter"; queries then blamed X alone for the scores' size."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (X @ rng.normal(size=(3, 3)) > 0).astype(int)
    for rate in (1e12, 1e30):
        with pytest.warns(
            ConvergenceWarning, match="larger than at W = 0: Adam's steps overshoot; lower learning_rate"
        ):
            model = ProbabilisticStructured(sampler="metropolis", learning_rate=rate, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="or the coefficients are that large .*lower learning_rate"):
        model.score_samples(X, Y)
    # a small rate leaves the gradient near its start's: raise it (probe FK: "increase max_iter")
    with pytest.warns(
        ConvergenceWarning, match="moved the coefficients too little \\(raise learning_rate\\)"
    ) as record:
        ProbabilisticStructured(sampler="metropolis", learning_rate=0.01, random_state=0).fit(X, Y)
    assert not any("overshoot" in str(w.message) for w in record)


def test_inference_refuses_scores_whose_sums_overflow():
    """At scores near the float64 limit exact log Z of Permutations was below the best structure's
    score and the chains' samples were not the mode, without an error (probe S); the mode itself
    is still predicted."""
    space = spaces.Permutations(4)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    model = ProbabilisticStructured(space=space, alpha=0.01).fit(X, space.sample(30, random_state=0))
    Xt = rng.normal(size=(2, 3))
    Xt[1] *= 1e307
    for call in (
        lambda: model.log_partition(Xt, method="exact"),
        lambda: model.sample(Xt, 3, sampler="local", random_state=0),
        lambda: model.predict_marginals(Xt, method="sampled", sampler="local", random_state=0),
    ):
        with pytest.raises(ValueError, match=r"^X row 1: its scores have ‖u‖₁ = .* overflow float64"):
            call()
    scores = model.decision_function(Xt[1:])
    assert_array_equal(model.predict(Xt[1:]), space.decode(scores))


def test_lbfgs_at_max_iter_without_intercept_names_centring():
    # without an intercept, columns of X far from 0 condition the problem badly and L-BFGS runs to
    # max_iter (X + 1e6 took 200 iterations where X took 8): the warning says to centre X besides
    # raising max_iter; with an intercept, which absorbs the offset, it says only the latter
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    Y = (X[:, :3] + rng.normal(size=(300, 3)) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match=r"increase max_iter, or centre the columns of X \(StandardScaler\)"):
        ProbabilisticStructured(space="multilabel", fit_intercept=False, max_iter=20).fit(X + 1e6, Y)
    with pytest.warns(ConvergenceWarning, match=r"; increase max_iter$"):
        ProbabilisticStructured(space="multilabel", max_iter=2).fit(X + 1e6, Y)


@pytest.mark.parametrize("n_samples", [-(2**64) + 3, 2**64 + 3, 2**63])
def test_n_samples_beyond_int64_is_refused_before_ctypes_wraps_it(n_samples):
    """ctypes passes a Python int to an int64 argument modulo 2**64: sample(n_samples=-2**64 + 3)
    sized its output for no samples and the core, handed 3, wrote past its end (a segfault later,
    probe DA). Every integer a query takes is range-checked by name; the process goes on."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        f"""
        import numpy as np
        from combpred import ProbabilisticStructured, spaces
        rng = np.random.default_rng(0)
        X, Y = rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.5).astype(int)
        model = ProbabilisticStructured(space=spaces.Multilabel(4)).fit(X, Y)
        Xq = rng.normal(size=(2000, 3))
        for call in (
            lambda: model.sample(Xq, n_samples={n_samples}),
            lambda: model.predict_marginals(Xq[:2], n_samples={n_samples}),
            lambda: model.log_partition(Xq[:2], n_samples={n_samples}),
            lambda: model._model.sample(Xq, {n_samples}, b""),
        ):
            try:
                call()
                print("no error")
            except ValueError as exc:
                print(exc)
        guards = [np.full(64, 7) for _ in range(200)]
        print(sum(int((g != 7).any()) for g in guards))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    *messages, changed = done.stdout.strip().splitlines()
    assert changed == "0"
    for message in messages:
        assert message == f"n_samples must be an integer within the 64-bit range (|n_samples| < 2**63), got {n_samples}"


def test_score_samples_names_labels_of_another_kind():
    """Integer labels against string classes read "label 0 ... is not in classes ['0', '1', '2']"
    in score_samples, where score named their dtype (probe FJ)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), np.array(["0", "1", "2"] * 10)
    model = ProbabilisticStructured(space="multiclass").fit(X, y)
    with pytest.raises(ValueError, match=r"Y holds labels of dtype int64, which are not comparable with classes"):
        model.score_samples(X, np.array([0, 1, 2] * 10))


def test_score_samples_warning_names_the_thesis_schedule_below_its_sample_size():
    """A thesis-schedule FPRAS with n_samples below its printed size has no guarantee; the warning
    named only the Taylor and Markov-chain cases, neither of which applied (probe FI)."""
    sp = spaces.Permutations(4)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    model = ProbabilisticStructured(space=sp).fit(X, sp.sample(20, random_state=0))
    with pytest.warns(UserWarning, match="the thesis schedule with n_samples below its printed sample size"):
        model.score_samples(X[:2], method="fpras", schedule="thesis", n_samples=10, random_state=0)
