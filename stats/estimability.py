"""When a controlled estimate can be trusted at small n: pure numpy, no Django.

Style-controlled Bradley-Terry (stats/style.py) and the length-controlled win rate
(stats/length_control.py) remove the effect of a covariate (length, markdown) from a model's
score. That is only possible when the covariate varies within each model's votes: when a model's
answers are always the long ones, "this model" and "long answers" cannot be told apart, the fit
trades one for the other, and small samples give wild numbers (59 votes once moved the weakest
model up two places and the strongest down two; a candidate with a raw win rate of 50 % read
5.04 % [0.0, 86.1] length-controlled). Two checks say so instead of printing those numbers:

- Not estimable: the fit is singular, or a covariate is nearly collinear with model identity,
  measured by its variance inflation factor VIF = 1 / (1 - R^2) with R^2 from regressing the
  covariate on the other columns of the design (model identity and the other covariates; no
  intercept, as the models have none). VIF is how many times the covariate's coefficient's
  variance is inflated against a design where it is independent of the rest. Above MAX_VIF the
  result is "not estimable" with the covariate named.
- Too few: below MIN_VOTES_PER_PARAMETER votes per fitted parameter (style control) or MIN_ITEMS
  judgments (length control) the figures are computed but flagged, for the page to grey out.

The thresholds come from bench/bench_small_n.py, a simulation across seeds (bench/README.md has
the table). Style control, four models: a fit is "reversed" when the strongest model's estimate is
not above the weakest's, "uninformative" when the 95 % interval of their difference is wider than
their whole true spread. Length control: a rate is "wild" when it is more than 0.25 from the true
0.5 or its interval is wider than 0.5. What goes wrong depends on both the VIF and the number of
votes: at VIF 10-30 style control reversed 18-24 % of data sets up to 120 votes but 0 % at 500;
beyond VIF 30 it reversed 22-45 % at every size tried, up to 500 votes. Hence two rules:
- MAX_VIF = 30: above it, not estimable whatever the number of votes.
- Too few below MIN_VOTES_PER_PARAMETER = 30 votes per fitted parameter (style control) or
  MIN_ITEMS = 30 judgments (length control), each times the VIF when it is above 1 (a VIF of v
  leaves the covariate's coefficient as uncertain as 1/v of the votes would). Style, VIF 2-5:
  intervals uninformative in every data set at 15 votes per parameter, in 22 % at 30, none at 60.
  Length, VIF under 2: 28 % of rates wild at 20 items, 3 % at 30, none from 60; VIF 2-5: 93 %
  at 30 items, 14 % at 60, 2 % at 120; VIF 10-30: wild at every size up to 120 items (the rule
  asks 300 or more).
"""

import numpy as np
from numpy.typing import ArrayLike

# A Gram matrix as ill-conditioned as the fit refuses is singular here too.
from stats.logistic import MAX_CONDITION

MAX_VIF = 30.0
MIN_VOTES_PER_PARAMETER = 30
MIN_ITEMS = 30


def variance_inflation(gram: np.ndarray, columns: ArrayLike) -> np.ndarray:
    """VIF of the given columns of a design whose Gram matrix X'X is `gram` (full rank assumed
    in the parametrisation given): (X'X)^-1_jj * (X'X)_jj. Infinite where X'X is singular."""
    gram = np.asarray(gram, dtype=float)
    columns = np.asarray(columns, dtype=int)
    if not columns.size:
        return np.zeros(0)
    if not np.all(np.isfinite(gram)) or np.linalg.cond(gram) > MAX_CONDITION:
        return np.full(columns.size, np.inf)
    inverse = np.linalg.inv(gram)
    return np.diag(inverse)[columns] * np.diag(gram)[columns]


def intercept_inflation(feature: ArrayLike) -> float:
    """VIF between an intercept and one covariate x (the length-controlled win rate's design
    [1, x]): mean(x^2) / var(x), infinite when x does not vary. Large when x is nearly constant,
    for example when the candidate's answers are always much longer than the reference's."""
    x = np.asarray(feature, dtype=float)
    variance = float(np.var(x))
    if variance <= 0:
        return float("inf")
    return float(np.mean(x * x) / variance)
