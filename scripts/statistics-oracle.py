#!/usr/bin/python3
"""An independent oracle for Vexil's experiment statistics: textbook SciPy and statsmodels functions fed the same
inputs. Reads {"cases": [...]} as JSON on stdin and writes {"results": [...]} in the same order.

Run with Debian's python3 (`apt-get install python3-scipy python3-statsmodels`); test/unit/experiment-statistics-oracle.test.ts
starts it and compares every figure to 1e-9 relative.
"""
import json
import sys

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests


def t_quantile(p, df):
    """SciPy's t quantile, polished by Newton steps on SciPy's own t.cdf: Debian 12's SciPy 1.10 t.ppf is off by up to
    ~1e-9 relative at fractional degrees of freedom (checked against mpmath at 40 digits), its t.cdf is not."""
    x = stats.t.ppf(p, df)
    for _ in range(2):
        x -= (stats.t.cdf(x, df) - p) / stats.t.pdf(x, df)
    return x


def welch(case):
    a, b, alpha = case["a"], case["b"], case["alpha"]
    # A proportion's standard deviation is sqrt(p(1 - p)), with no n - 1, as the engine defines it.
    t, p = stats.ttest_ind_from_stats(b["mean"], b["sd"], b["n"], a["mean"], a["sd"], a["n"], equal_var=False)
    va, vb = a["sd"] ** 2 / a["n"], b["sd"] ** 2 / b["n"]
    df = (va + vb) ** 2 / (va**2 / (a["n"] - 1) + vb**2 / (b["n"] - 1))
    se = np.sqrt(va + vb)
    half_width = t_quantile(1 - alpha / 2, df) * se
    # The relative lift (b - a)/|a|, its delta-method standard error, and the same t machinery.
    rel = (b["mean"] - a["mean"]) / abs(a["mean"])
    rel_se = np.sqrt(vb / a["mean"] ** 2 + va * b["mean"] ** 2 / a["mean"] ** 4)
    rel_p = 2 * stats.t.sf(abs(rel / rel_se), df)
    rel_half_width = t_quantile(1 - alpha / 2, df) * rel_se
    return {
        "t": float(t),
        "p": float(p),
        "df": float(df),
        "se": float(se),
        "halfWidth": float(half_width),
        "relative": float(rel),
        "relativeSe": float(rel_se),
        "relativeP": float(rel_p),
        "relativeHalfWidth": float(rel_half_width),
        "greaterP": float(stats.t.sf(t, df)),
        "lesserP": float(stats.t.cdf(t, df)),
    }


def bayes(case):
    mu, sigma, alpha = case["mean"], case["sd"], case["alpha"]
    below = stats.norm.cdf(0, mu, sigma)
    above = stats.norm.sf(0, mu, sigma)
    mean_above = stats.truncnorm.mean((0 - mu) / sigma, np.inf, loc=mu, scale=sigma)
    mean_below = stats.truncnorm.mean(-np.inf, (0 - mu) / sigma, loc=mu, scale=sigma)
    lower, upper = stats.norm.ppf([alpha / 2, 1 - alpha / 2], mu, sigma)
    return {
        "chanceToWin": float(above),
        "lower": float(lower),
        "upper": float(upper),
        "riskOfControl": float(above * mean_above),
        "riskOfTreatment": float(-below * mean_below),
    }


def srm(case):
    observed = np.array(case["units"], dtype=float)
    weights = np.array(case["weights"], dtype=float)
    taking = weights > 0
    observed, weights = observed[taking], weights[taking]
    expected = weights / weights.sum() * observed.sum()
    return {"p": float(stats.chisquare(observed, expected).pvalue)}


def corrections(case):
    p = np.array(case["pValues"])
    return {
        "holm": multipletests(p, method="holm")[1].tolist(),
        "benjaminiHochberg": multipletests(p, method="fdr_bh")[1].tolist(),
    }


def cuped(case):
    arms = [(np.array(arm["y"]), np.array(arm["x"])) for arm in (case["a"], case["b"])]
    y = np.concatenate([arm[0] for arm in arms])
    x = np.concatenate([arm[1] for arm in arms])
    theta = np.cov(y, x, ddof=1)[0, 1] / np.var(x, ddof=1)
    adjusted = []
    variances = []
    for arm_y, arm_x in arms:
        adjusted.append(float(arm_y.mean() - theta * arm_x.mean()))
        covariance = np.cov(arm_y, arm_x, ddof=1)
        variances.append(float(covariance[0, 0] + theta**2 * covariance[1, 1] - 2 * theta * covariance[0, 1]))
    return {"theta": float(theta), "adjustedMeans": adjusted, "adjustedVariances": variances}


def quantiles(case):
    return {
        "normal": float(stats.norm.ppf(case["p"])),
        "t": float(t_quantile(case["p"], case["df"])),
        "chiSquareSf": float(stats.chi2.sf(case["x"], case["chiDf"])),
    }


KINDS = {"welch": welch, "bayes": bayes, "srm": srm, "corrections": corrections, "cuped": cuped, "quantiles": quantiles}

if __name__ == "__main__":
    cases = json.load(sys.stdin)["cases"]
    json.dump({"results": [KINDS[case["kind"]](case) for case in cases]}, sys.stdout)
