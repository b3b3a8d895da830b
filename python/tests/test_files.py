"""imghist.histogram_files and total_files: a folder of real photographs and
bad files against load + histogram file by file, on the library's threads."""
import os
import shutil

import numpy as np
import pytest

import imghist


@pytest.fixture
def folder(tmp_path, samples):
    d = tmp_path / "photos"
    sub = d / "sub"
    sub.mkdir(parents=True)
    names = sorted(n for n in os.listdir(samples) if n.endswith((".png", ".jpg", ".tif", ".bmp")))
    assert names, samples
    for n in names[:6]:
        shutil.copy(os.path.join(samples, n), d / n)
    shutil.copy(os.path.join(samples, names[0]), sub / ("deep " + names[0]))
    shutil.copy(os.path.join(samples, names[0]), d / ".hidden.png")
    (d / "text.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a PNG after all")
    jpgs = [n for n in names if n.endswith(".jpg")]
    if jpgs:
        data = open(os.path.join(samples, jpgs[0]), "rb").read()
        (d / "cut.jpg").write_bytes(data[: len(data) // 2])
    (d / "notes.txt").write_text("not an image")
    return d


def test_folder_against_load(folder):
    r = imghist.histogram_files(folder)
    assert r.counts.dtype == np.uint64 and r.counts.shape == (len(r.files), 256)
    assert r.files == sorted(r.files)
    assert not any("/sub/" in f for f in r.files)  # not recursive
    assert any(f.endswith(".hidden.png") for f in r.files)
    for f, row in zip(r.files, r.counts):
        np.testing.assert_array_equal(row, imghist.histogram(imghist.load(f)))
    bad = dict(r.failures)
    assert str(folder / "text.png") in bad and "text.png" in bad[str(folder / "text.png")]
    if (folder / "cut.jpg").exists():
        assert str(folder / "cut.jpg") in bad
    assert not any(f.endswith("notes.txt") for f in r.files) and str(folder / "notes.txt") not in bad
    deep = imghist.histogram_files(folder, recursive=True)
    assert len(deep.files) == len(r.files) + 1
    total = imghist.total_files(folder, recursive=True)
    np.testing.assert_array_equal(total.counts, deep.counts.sum(axis=0))
    assert total.files == deep.files and total.failures == deep.failures


def test_options_and_threads(folder):
    one = imghist.histogram_files(folder, threads=1, bins=16, range=(0, 256), gray="luma")
    four = imghist.histogram_files([folder], threads=4, bins=16, range=(0, 256), gray="luma")
    np.testing.assert_array_equal(one.counts, four.counts)
    assert one.files == four.files and one.counts.shape[1] == 16
    for f, row in zip(one.files, one.counts):
        np.testing.assert_array_equal(row, imghist.histogram(imghist.load(f, gray="luma"), 16,
                                                             (0, 256)))
    with pytest.raises(ValueError, match="bins"):
        imghist.histogram_files(folder, depth="native")
    nat = imghist.histogram_files(folder, depth="native", bins=64, range=(0, 65536))
    assert nat.counts.shape == (len(one.files), 64)
    with pytest.raises(ValueError, match="gray"):
        imghist.histogram_files(folder, gray="green")
    with pytest.raises(imghist.ImghistIOError):
        imghist.histogram_files(folder / "missing")


def test_progress_and_interrupt(folder):
    seen = []
    r = imghist.histogram_files(folder, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == len(r.files) + len(r.failures)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        imghist.histogram_files(folder, progress=stop)
    r2 = imghist.histogram_files(folder, progress=True)  # a bar or nothing, never an error
    assert r2.files == r.files


def test_single_file_and_empty_folder(tmp_path, samples):
    r = imghist.histogram_files(os.path.join(samples, "moon.png"))
    assert r.counts.shape == (1, 256) and r.failures == []
    (tmp_path / "empty").mkdir()
    e = imghist.histogram_files(tmp_path / "empty")
    assert e.counts.shape == (0, 256) and e.files == [] and e.failures == []
    assert imghist.total_files(tmp_path / "empty").counts.sum() == 0


def _jpeg_folder(tmp_path, samples, copies):
    """copies of a sample photograph as JPEGs of several layouts (Pillow's
    4:4:4, 4:2:2 and 4:2:0 where it is installed, OpenCV's 4:2:0), progressive
    and gray, plus the sample JPEG, for the GPU's decoder."""
    cv2 = pytest.importorskip("cv2")
    d = tmp_path / "jpegs"
    d.mkdir()
    img = cv2.imread(os.path.join(samples, "astronaut.png"), cv2.IMREAD_COLOR)
    crop = img[:383, :509]
    assert cv2.imwrite(str(d / "a420.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 90])
    try:
        from PIL import Image
        rgb = Image.fromarray(np.ascontiguousarray(crop[:, :, ::-1]))
        for name, sub in (("444", 0), ("422", 1), ("420p", 2)):
            rgb.save(d / f"pil{name}.jpg", quality=85, subsampling=sub)
    except ImportError:
        pass
    assert cv2.imwrite(str(d / "progressive.jpg"), img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    assert cv2.imwrite(str(d / "gray.jpg"), cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    shutil.copy(os.path.join(samples, "hubble_deep_field.jpg"), d / "hubble.jpg")
    base = sorted(os.listdir(d))
    k = 0
    while len(os.listdir(d)) < copies:
        shutil.copy(d / base[k % len(base)], d / f"c{k}_{base[k % len(base)]}")
        k += 1
    return d


def test_decode_choice(tmp_path, samples):
    d = _jpeg_folder(tmp_path, samples, 8)
    with pytest.raises(ValueError, match="decode"):
        imghist.histogram_files(d, decode="nvjpeg")
    with pytest.raises(ValueError, match="backend='cpu'"):
        imghist.histogram_files(d, decode="gpu", backend="cpu")
    auto = imghist.histogram_files(d)
    cpu = imghist.histogram_files(d, decode="cpu")
    assert auto.files == cpu.files and not cpu.failures
    np.testing.assert_array_equal(auto.counts, cpu.counts)


@pytest.mark.skipif(not imghist.cuda_available(), reason="no usable GPU")
@pytest.mark.parametrize("gray", ["bgr2gray", "luma"])
def test_decode_gpu_equals_cpu(tmp_path, samples, gray):
    # 80 small files: decode="gpu" takes them; auto leaves them to the CPU
    # (under 64 MiB a thread); the counts are the CPU's either way.
    d = _jpeg_folder(tmp_path, samples, 80)
    cpu = imghist.histogram_files(d, gray=gray, decode="cpu")
    assert len(cpu.files) == 80 and not cpu.failures
    try:
        gpu = imghist.histogram_files(d, gray=gray, decode="gpu")
    except imghist.ImghistError as e:
        if "nvJPEG" in str(e) or "libnvjpeg" in str(e):
            pytest.skip(f"no GPU JPEG decoder here: {e}")
        raise
    auto = imghist.histogram_files(d, gray=gray, backend="cuda")
    for r in (gpu, auto):
        assert r.files == cpu.files and not r.failures
        np.testing.assert_array_equal(r.counts, cpu.counts)
    tot = imghist.total_files(d, gray=gray, decode="gpu")
    np.testing.assert_array_equal(tot.counts, cpu.counts.sum(axis=0))
