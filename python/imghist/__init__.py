"""imghist: image histograms and histogram equalization on the CPU and on
CUDA GPUs, for NumPy arrays, PyTorch tensors and CuPy arrays.

NumPy arrays are computed on the CPU with every core; PyTorch and CuPy
arrays on a GPU are computed on that GPU with no copy, queued on the
array's current stream, and the results stay there. Leading dimensions
are a batch, counted in one call; colour is a channel axis (by default the
last axis of a 3-D or 4-D array with 3 or 4 elements).

    >>> import numpy as np, imghist
    >>> img = np.zeros((4, 5), np.uint8)
    >>> imghist.histogram(img)[:2]
    array([20,  0])

Functions:
  histogram, histogram2d, mutual_information   counting
  histogramdd, cvt_color, backproject           N-d histograms of channels, colour spaces
  equalize, clahe, match_histograms, match_lut  contrast
  entropy, percentile, otsu                     statistics of a histogram
  compare, compare_all                          comparing histograms (cv2.compareHist)
  load                                          image files as arrays
  histogram_files, total_files                  whole folders, on the library's threads
  numpy.histogram                               a drop-in numpy.histogram
  cuda_available, device_count                  the GPUs
Errors of the library raise ImghistError subclasses carrying the library's
message: ImghistArgumentError and ImghistLimitError (also ValueErrors),
ImghistIOError and ImghistDecodeError (also OSErrors), ImghistMemoryError,
ImghistNoGPUError, ImghistCudaError, ImghistUnsupportedError,
ImghistCanceledError. Bad arguments
found in Python raise ValueError or TypeError.
"""
from ._lib import (ImghistArgumentError, ImghistBufferError, ImghistCudaError,
                   ImghistDecodeError, ImghistEncodeError, ImghistError, ImghistFaultedError,
                   ImghistIOError, ImghistLimitError, ImghistMemoryError, ImghistNoGPUError,
                   ImghistUnsupportedError, ImghistCanceledError)
from ._lib import version_string as __version__
from ._api import (cuda_available, device_count, entropy, equalize, histogram, histogram2d,
                   clahe, load, match_histograms, match_lut, mutual_information, otsu, percentile)
from ._compare import compare, compare_all
from ._files import FilesHistogram, histogram_files, total_files
from ._ndhist import backproject, cvt_color, histogramdd
from . import numpy

__all__ = ["histogram", "equalize", "histogram2d", "mutual_information", "load",
           "entropy", "percentile", "otsu", "compare", "compare_all", "match_lut", "match_histograms", "clahe",
           "cuda_available", "device_count", "numpy", "histogram_files", "total_files",
           "FilesHistogram", "histogramdd", "cvt_color", "backproject", "ImghistError", "ImghistArgumentError",
           "ImghistBufferError", "ImghistMemoryError", "ImghistIOError", "ImghistDecodeError",
           "ImghistEncodeError", "ImghistLimitError", "ImghistNoGPUError", "ImghistCudaError",
           "ImghistUnsupportedError", "ImghistFaultedError", "ImghistCanceledError", "__version__"]
