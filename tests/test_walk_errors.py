#!/usr/bin/env python3
"""Folder runs of the imghist CLI over entries it cannot read or enter.

Every such entry is named on one line with its reason, counted as failed,
and makes the run exit 1, while the images it can read are all processed:
- a path longer than PATH_MAX (a tree of 20 folders of 203-byte names): the
  deepest folder it reaches is named, "File name too long";
- a tree deeper than the open-file limit (60 levels under a limit of 24
  descriptors): every image found, exit 0 (the walk holds one folder open);
- a file and a folder without read permission: named, "Permission denied"
  (as a user other than root; as root, run as nobody where that works);
- a dangling link and a FIFO are skipped as before (not images), exit 0.

usage: test_walk_errors.py IMGHIST_BINARY SAMPLES_DIR
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

from refcheck import check, finish

EXE, SAMPLES = os.path.abspath(sys.argv[1]), sys.argv[2]
SKIPPED = []
PNG = os.path.join(SAMPLES, "moon.png")


def run(args, **kw):
    return subprocess.run([EXE, *args], capture_output=True, text=True, **kw)


def csv_files(path):
    with open(path) as f:
        return sorted({line.split(",")[0] for line in f.read().splitlines()[1:]})


def long_path(tmp):
    root = os.path.join(tmp, "long")
    os.mkdir(root)
    shutil.copy(PNG, os.path.join(root, "top.png"))
    fd = os.open(root, os.O_RDONLY)
    names = []
    for i in range(20):
        name = f"d{i:02d}" + "x" * 200
        names.append(name)
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(PNG, "rb") as f:
        data = f.read()
    out = os.open("bottom.png", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, data)
    os.close(out)
    os.close(fd)
    csv = os.path.join(tmp, "long.csv")
    r = run([root, "-r", "--csv", csv])
    lines = r.stderr.splitlines()
    named = [l for l in lines if "cannot be read: File name too long" in l]
    check(r.returncode == 1, f"long path: exit {r.returncode}, want 1")
    check(len(named) == 1, f"long path: {len(named)} lines naming the entry, want 1")
    # The line names the first path the system refuses, whole.
    want = root
    for name in names:
        want = os.path.join(want, name)
        if len(want.encode()) >= 4096:
            break
    check(named and named[0].startswith(f"imghist: {want}:"),
          "long path: the line does not name the first entry past PATH_MAX")
    check(csv_files(csv) == [os.path.join(root, "top.png")], "long path: top.png not counted")
    check(any("1 processed, 1 failed" in l for l in lines), f"long path: summary {lines[-1:]}")


def deep_tree(tmp):
    root = os.path.join(tmp, "deep")
    d = root
    for i in range(60):
        d = os.path.join(d, f"{i}")
    os.makedirs(d)
    shutil.copy(PNG, os.path.join(root, "0", "a.png"))
    shutil.copy(PNG, os.path.join(d, "z.png"))
    csv = os.path.join(tmp, "deep.csv")

    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (24, 24))

    r = run([root, "-r", "--csv", csv], preexec_fn=few_files)
    check(r.returncode == 0, f"deep tree: exit {r.returncode}: {r.stderr.strip()}")
    check(len(csv_files(csv)) == 2, "deep tree: not both images counted")


def as_other_user():
    """preexec_fn that makes the child nobody, or None where the run is not root."""
    if os.geteuid() != 0:
        return None

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    return drop


def permissions(tmp):
    root = os.path.join(tmp, "perm")
    os.makedirs(os.path.join(root, "locked"))
    os.makedirs(os.path.join(root, "open"))
    shutil.copy(PNG, os.path.join(root, "open", "a.png"))
    shutil.copy(PNG, os.path.join(root, "locked", "b.png"))
    shutil.copy(PNG, os.path.join(root, "secret.png"))
    os.chmod(os.path.join(root, "secret.png"), 0)
    os.chmod(os.path.join(root, "locked"), 0)
    for p in (tmp, root, os.path.join(root, "open"), os.path.join(root, "open", "a.png")):
        os.chmod(p, 0o777 if os.path.isdir(p) else 0o644)
    drop = as_other_user()
    csv = os.path.join(tmp, "perm.csv")
    try:
        r = run([root, "-r", "--csv", csv], preexec_fn=drop)
    except (OSError, subprocess.SubprocessError) as e:
        SKIPPED.append(f"permissions: cannot run as another user ({e})")
        return
    if drop is not None and (r.returncode in (126, 127) or "error while loading" in r.stderr):
        SKIPPED.append("permissions: the binary does not start as nobody here")
        return
    lines = r.stderr.splitlines()
    for name in ("secret.png", "locked"):
        path = os.path.join(root, name)
        check(f"imghist: {path}: cannot be read: Permission denied" in lines,
              f"permissions: no line naming {name}: {lines}")
    check(r.returncode == 1, f"permissions: exit {r.returncode}, want 1")
    check(any("1 processed, 2 failed" in l for l in lines), f"permissions: summary {lines[-1:]}")


def not_images(tmp):
    root = os.path.join(tmp, "odd")
    os.mkdir(root)
    shutil.copy(PNG, os.path.join(root, "a.png"))
    os.symlink(os.path.join(tmp, "nowhere"), os.path.join(root, "dangling.png"))
    os.mkfifo(os.path.join(root, "pipe.png"))
    r = run([root, "--csv", os.path.join(tmp, "odd.csv"), "-v"], timeout=60)
    check(r.returncode == 0, f"dangling link and FIFO: exit {r.returncode}: {r.stderr.strip()}")
    check(any("2 skipped" in l for l in r.stderr.splitlines()),
          f"dangling link and FIFO: summary {r.stderr.splitlines()[-1:]}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for case in (long_path, deep_tree, permissions, not_images):
            case(tmp)
        os.chmod(os.path.join(tmp, "perm", "locked"), 0o755)
    for s in SKIPPED:
        print("skipped:", s)
    return finish("folder runs over unreadable entries")


if __name__ == "__main__":
    sys.exit(main())
