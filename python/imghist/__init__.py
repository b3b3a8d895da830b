"""imghist: image histograms and histogram equalization on the CPU and on
CUDA GPUs, for NumPy arrays, PyTorch tensors and CuPy arrays.

NumPy arrays are computed on the CPU with every core; PyTorch and CuPy
arrays on a GPU are computed on that GPU with no copy, queued on the
array's current stream, and the results stay there. A leading batch
dimension, (N, H, W), is one batched call.

    >>> import numpy as np, imghist
    >>> img = np.zeros((4, 5), np.uint8)
    >>> imghist.histogram(img)[:2]
    array([20,  0])

Functions: histogram, equalize, histogram2d, mutual_information, load,
entropy, percentile, otsu (of a histogram), cuda_available, device_count. Errors of the library raise ImghistError
(ImghistArgumentError, also a ValueError, for refused arguments) with the
library's message; bad arguments found in Python raise ValueError or
TypeError. The library is the bundled libimghist.so.2, or the file named by
the environment variable IMGHIST_LIBRARY.
"""
from ._lib import ImghistArgumentError, ImghistError
from ._lib import library_path as _library_path
from ._lib import version_string as __version__
from ._api import (cuda_available, device_count, entropy, equalize, histogram, histogram2d,
                   clahe, load, match_histograms, match_lut, mutual_information, otsu, percentile)

__all__ = ["histogram", "equalize", "histogram2d", "mutual_information", "load",
           "entropy", "percentile", "otsu", "match_lut", "match_histograms", "clahe",
           "cuda_available", "device_count", "ImghistError", "ImghistArgumentError",
           "__version__"]
