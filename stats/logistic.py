"""Weighted logistic regression by maximum likelihood: pure numpy and scipy, no Django.

The one fitter behind style-controlled Bradley-Terry (stats/style.py), the judge's
length bias (stats/diagnostics.py) and the length-controlled win rate
(stats/length_control.py).

Model: P(y = 1 | x) = sigmoid(x . c) with coefficients c = B f, where f are the free
parameters and B a fixed basis (the identity by default; style.py passes sum-to-zero
contrasts so that the model strengths add up to zero). Outcomes may be fractional: a tie is
y = 0.5, half a win and half a loss, as in stats/ranking.py. Weights are frequency
weights, so a bootstrap round passes the resample counts instead of copying rows.

Minimised objective, with P a penalty matrix on c (none by default):

    sum_i w_i [log(1 + exp(x_i . c)) - y_i x_i . c] + 1/2 c' P c

gradient X' (w (p - y)) + P c, Hessian X' diag(w p (1 - p)) X + P (both mapped through B).
It is convex, so scipy's trust-region Newton method with the exact Hessian converges to the
maximum in a few iterations. Standard errors are the square roots of the diagonal of the
inverse Hessian at the optimum (the observed information; with a penalty, of the penalised one).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.optimize import linprog, minimize
from scipy.special import expit

GRADIENT_TOL = 1e-9
MAX_ITER = 200
POLISH_STEPS = 8
DECREMENT_TOL = 1e-20
CONVERGED_DECREMENT = 1e-12
# |x . c| beyond this means fitted probabilities within 1e-15 of 0 or 1: the data are (quasi-)
# separated and the unpenalised maximum lies at infinity.
SEPARATION_ETA = 35.0
MAX_CONDITION = 1e12


class SeparationError(ValueError):
    """The outcomes are perfectly predicted by the covariates: no finite maximum-likelihood estimate."""


SEPARATION_MESSAGE = (
    "The outcomes are perfectly predicted (for example a side that wins every time): "
    "the maximum-likelihood estimate is infinite."
)


def is_separated(design: np.ndarray, y: np.ndarray, weights: np.ndarray) -> bool:
    """True when the unpenalised likelihood has no finite maximum (Albert and Anderson's
    complete or quasi-complete separation), by Konis's linear-programming test.

    The likelihood grows without bound along a direction d exactly when d never lowers the fit of
    any outcome and raises that of some: s_i x_i . d >= 0 for wins (s = +1) and losses (s = -1),
    x_i . d = 0 for ties (pulled both ways), and some inequality strict. So maximise the mean of
    s_i x_i . d over the box [-1, 1]^p: the optimum is 0 when no such direction exists.
    """
    active = weights > 0
    rows = np.asarray(design)[active]
    outcome = y[active]
    sign = np.where(outcome == 1, 1.0, np.where(outcome == 0, -1.0, 0.0))
    decisive = sign != 0
    if not decisive.any():
        return False
    signed = rows[decisive] * sign[decisive, None]
    ties = rows[~decisive]
    p = rows.shape[1]
    result = linprog(
        -signed.mean(axis=0),
        A_ub=-signed,
        b_ub=np.zeros(len(signed)),
        A_eq=ties if len(ties) else None,
        b_eq=np.zeros(len(ties)) if len(ties) else None,
        bounds=[(-1.0, 1.0)] * p,
        method="highs",
    )
    scale = max(1.0, float(np.mean(np.abs(signed))))
    return result.status == 0 and -result.fun > 1e-9 * scale


@dataclass
class LogisticFit:
    """Coefficients c = B f, their covariance (inverse observed information) and standard errors."""

    coef: np.ndarray
    covariance: np.ndarray
    se: np.ndarray
    free: np.ndarray
    loglik: float
    iterations: int


def fit_logistic(
    X: Any,
    y: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    penalty: ArrayLike | None = None,
    basis: ArrayLike | None = None,
    initial: np.ndarray | None = None,
    gram: Callable[[np.ndarray], np.ndarray] | None = None,
) -> LogisticFit:
    """Maximum-likelihood (or L2-penalised) logistic regression.

    X: (n, p) array or scipy sparse matrix; y: n outcomes in [0, 1]; weights: n non-negative
    frequency weights (default ones); penalty: (p, p) matrix or length-p vector of L2 weights on
    the coefficients (default none); basis: (p, q) matrix B with c = B f (default identity);
    initial: q starting free parameters (warm starts in bootstrap rounds); gram: optional function
    d -> X' diag(d) X as a dense (p, p) array, for designs whose structure gives it faster than a
    sparse product (style.py's: one +1 and one -1 per row plus a few dense columns).

    Raises SeparationError when the unpenalised fit has no finite maximum (checked before fitting,
    see is_separated), ValueError on shapes or outcomes out of range or a singular information
    matrix, RuntimeError if the optimiser fails to converge.
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but there are {n} outcomes.")
    if np.any((y < 0) | (y > 1)) or np.any(np.isnan(y)):
        raise ValueError("Outcomes must lie in [0, 1] (1 win, 0 loss, 0.5 tie).")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or np.any(w < 0):
        raise ValueError("Weights must be one non-negative number per outcome.")
    p = X.shape[1]
    B = np.eye(p) if basis is None else np.asarray(basis, dtype=float)
    if penalty is None:
        P = None
    else:
        P = np.asarray(penalty, dtype=float)
        P = np.diag(P) if P.ndim == 1 else P
    is_sparse = sparse.issparse(X)
    # X' diag(d) X in the full coefficient space; sparse X stays sparse until the small product.
    if is_sparse:
        X = sparse.csr_matrix(X)

    def generic_gram(d: np.ndarray) -> np.ndarray:
        if is_sparse:
            return (X.T @ sparse.diags(d) @ X).toarray()
        return X.T @ (X * d[:, None])

    gram = generic_gram if gram is None else gram

    def objective(free: np.ndarray) -> tuple[float, np.ndarray]:
        coef = B @ free
        eta = X @ coef
        value = float(np.sum(w * (np.logaddexp(0, eta) - y * eta)))
        residual = w * (expit(eta) - y)
        gradient = X.T @ residual
        if P is not None:
            value += 0.5 * float(coef @ P @ coef)
            gradient = gradient + P @ coef
        return value, B.T @ np.asarray(gradient).ravel()

    def hessian(free: np.ndarray) -> np.ndarray:
        eta = X @ (B @ free)
        mu = expit(eta)
        full = gram(w * mu * (1 - mu))
        if P is not None:
            full = full + P
        return B.T @ full @ B

    if P is None and is_separated(X @ B, y, w):
        raise SeparationError(SEPARATION_MESSAGE)
    start = np.zeros(B.shape[1]) if initial is None else np.asarray(initial, dtype=float)
    result = minimize(
        objective,
        start,
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": GRADIENT_TOL, "maxiter": MAX_ITER},
    )
    # Near the optimum the objective (a sum over thousands of votes) changes below its rounding
    # error and the trust region can stop early; plain Newton steps, judged by the scale-free Newton
    # decrement g' H^-1 g (twice the remaining gain in log-likelihood), finish the job.
    free = result.x
    decrement = np.inf
    for _ in range(POLISH_STEPS):
        gradient = objective(free)[1]
        try:
            step = np.linalg.solve(hessian(free), gradient)
        except np.linalg.LinAlgError:
            break
        decrement = float(gradient @ step)
        if not np.isfinite(decrement) or decrement < DECREMENT_TOL:
            break
        free = free - step
    coef = B @ free
    eta = X @ coef
    # A backstop: the linear programme above decides separation, this catches what rounding lets by.
    if P is None and np.max(np.abs(eta[w > 0]), initial=0.0) > SEPARATION_ETA:
        raise SeparationError(SEPARATION_MESSAGE)
    information = hessian(free)
    if np.linalg.cond(information) > MAX_CONDITION:
        raise ValueError(
            "The information matrix is singular: covariates that are constant or collinear, or outcomes "
            "that the covariates predict perfectly."
        )
    if not decrement < CONVERGED_DECREMENT:
        raise RuntimeError(f"The logistic fit did not converge (Newton decrement {decrement:.3g}): {result.message}")
    inverse = np.linalg.inv(information)
    covariance = B @ inverse @ B.T
    loglik = -float(np.sum(w * (np.logaddexp(0, eta) - y * eta)))
    return LogisticFit(
        coef=coef,
        covariance=covariance,
        se=np.sqrt(np.clip(np.diag(covariance), 0, None)),
        free=free,
        loglik=loglik,
        iterations=int(result.nit),
    )
