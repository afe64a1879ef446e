"""Classical peers every family carries beside VN and the networks (BenchModel interface).

* GappyPCA: principal components of the clean ID training signals with a Gaussian prior on the
  coefficients (variance = each component's training variance); a sample's coefficients are the
  posterior mean given its visible entries only, the prediction is mean + components @
  coefficients. Each entry's error variance is the family's noise level plus that entry's
  training variance left outside the k components (a diagonal residual, as in factor analysis):
  with the noise alone, a k too small for the data (MNIST digits at k = 25-100) trusts the
  components at every visible pixel and fills holes worse than the training mean. Linear, closed
  form, one k x k solve per mask pattern.
* DictLasso: scikit-learn's MiniBatchDictionaryLearning with VN's number of atoms K, then a
  Lasso on the visible entries only (sparse_encode with the dictionary's visible columns): the
  same energy as a one-layer VN, learnt by a standard solver instead of Atomic-Hebb.
* Smoothing: the reconstruction floor. 1D signals: hidden entries filled by linear
  interpolation, then a Savitzky-Golay filter (cubic, odd window). Images: a normalised Gaussian
  convolution (blur(m x) / blur(m)), so hidden pixels take a weighted average of the visible
  neighbours (the training mean where none is near). It knows nothing of the signal family.
"""

from __future__ import annotations

import warnings

import numpy as np

MIN_WEIGHT = 1e-3  # normalised convolution: below this visible weight, use the training mean


def mask_groups(observed: np.ndarray):
    """Yield (visible (d,) bool, row indices) for every distinct mask pattern."""
    patterns, inverse = np.unique(observed > 0, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for p, visible in enumerate(patterns):
        yield visible, np.flatnonzero(inverse == p)


class GappyPCA:
    """PCA with a Gaussian prior, fitted on visible entries only (see module docstring)."""

    kind = "classical"
    has_codes = False  # predict_with_codes gives its codes (evaluate.py)

    def __init__(self, components: int, noise: float):
        self.k, self.noise = components, noise
        self.mean = self.basis = self.prior_var = self.error_var = None

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        self.mean = train.mean(axis=0)
        _, s, vt = np.linalg.svd(train - self.mean, full_matrices=False)
        k = min(self.k, vt.shape[0])
        self.basis = vt[:k].T  # (d, k)
        self.prior_var = np.maximum(s[:k] ** 2 / max(train.shape[0] - 1, 1), 1e-12)
        explained = (self.basis**2) @ self.prior_var  # each entry's variance inside the span
        residual = np.maximum(train.var(axis=0, ddof=1) - explained, 0.0)
        self.error_var = np.maximum(self.noise**2 + residual, 1e-6 * float(self.prior_var[0]))

    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        for visible, rows in mask_groups(observed):
            P = self.basis[visible]
            weighted = P / self.error_var[visible, None]
            A = P.T @ weighted + np.diag(1.0 / self.prior_var)
            rhs = (x[np.ix_(rows, visible)] - self.mean[visible]) @ weighted
            out[rows] = self.mean + np.linalg.solve(A, rhs.T).T @ self.basis.T
        return out

    def n_params(self) -> int:
        d = self.basis.shape[0] if self.basis is not None else 0
        return int(d * (self.basis.shape[1] + 1) + self.basis.shape[1]) if d else 0

    def describe(self) -> dict:
        return {"kind": "classical", "method": "gappy PCA", "components": self.k}


class DictLasso:
    """scikit-learn dictionary learning + masked Lasso (see module docstring)."""

    kind = "classical"
    has_codes = False  # predict_with_codes gives its codes (evaluate.py)

    def __init__(self, atoms: int, alpha: float, epochs: int = 20):
        self.atoms, self.alpha, self.epochs = atoms, alpha, epochs
        self.dictionary: np.ndarray | None = None  # (K, d), unit rows

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        from sklearn.decomposition import MiniBatchDictionaryLearning
        from sklearn.exceptions import ConvergenceWarning

        learner = MiniBatchDictionaryLearning(
            n_components=self.atoms,
            alpha=self.alpha,
            batch_size=64,
            max_iter=self.epochs,
            random_state=seed,
            fit_algorithm="cd",
        )
        with warnings.catch_warnings():  # inner Lasso steps stop at their iteration cap
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.dictionary = learner.fit(train).components_

    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        from sklearn.exceptions import ConvergenceWarning

        codes = np.zeros((x.shape[0], self.atoms))
        with warnings.catch_warnings():  # the Lasso stops at max_iter; its gap is tiny here
            warnings.simplefilter("ignore", ConvergenceWarning)
            return self._encode(x, observed, codes) @ self.dictionary

    def _encode(self, x: np.ndarray, observed: np.ndarray, codes: np.ndarray) -> np.ndarray:
        from sklearn.decomposition import sparse_encode

        for visible, rows in mask_groups(observed):
            codes[rows] = sparse_encode(
                x[np.ix_(rows, visible)],
                self.dictionary[:, visible],
                algorithm="lasso_cd",
                alpha=self.alpha,
                max_iter=2000,
            )
        return codes

    def n_params(self) -> int:
        return int(self.dictionary.size) if self.dictionary is not None else 0

    def describe(self) -> dict:
        return {
            "kind": "classical",
            "method": "dictionary learning + masked Lasso",
            "atoms": self.atoms,
            "alpha": self.alpha,
            "epochs": self.epochs,
        }


class Smoothing:
    """Savitzky-Golay (1D) or normalised Gaussian convolution (2D): the reconstruction floor."""

    kind = "classical"
    has_codes = False  # predict_with_codes gives its codes (evaluate.py)

    def __init__(self, shape: tuple[int, ...], width: float):
        self.shape, self.width = shape, width
        self.mean: np.ndarray | None = None

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        self.mean = train.mean(axis=0)

    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        if len(self.shape) == 1:
            return self._savgol(x, observed)
        return self._normalised_blur(x, observed)

    def _savgol(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        from scipy.signal import savgol_filter

        filled = x.copy()
        idx = np.arange(x.shape[1])
        for i in np.flatnonzero((observed == 0).any(axis=1)):
            seen = observed[i] > 0
            filled[i, ~seen] = np.interp(idx[~seen], idx[seen], x[i, seen])
        window = int(self.width) | 1  # odd
        return savgol_filter(filled, window, min(3, window - 1), axis=1, mode="interp")

    def _normalised_blur(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        from scipy.ndimage import gaussian_filter

        n = x.shape[0]
        img, m = (x * observed).reshape(n, *self.shape), observed.reshape(n, *self.shape)
        sigma = (0.0, self.width, self.width)
        num, den = gaussian_filter(img, sigma), gaussian_filter(m.astype(float), sigma)
        blurred = (num / np.maximum(den, MIN_WEIGHT)).reshape(n, -1)
        return np.where(den.reshape(n, -1) > MIN_WEIGHT, blurred, self.mean)

    def n_params(self) -> int:
        """1D: none; images: the training mean that fills pixels with no visible neighbour."""
        return 0 if len(self.shape) == 1 else int(np.prod(self.shape))

    def describe(self) -> dict:
        method = "Savitzky-Golay" if len(self.shape) == 1 else "normalised Gaussian blur"
        return {"kind": "classical", "method": method, "width": self.width}
