"""The backends a reference test runs the tool on: the CPU, and CUDA where
this machine has a usable GPU. (`--backend auto` runs one image on the CPU,
so the tests name CUDA themselves.)"""
import os
import subprocess


def backends(exe, samples):
    probe = subprocess.run([exe, os.path.join(samples, "moon.png"), "-q", "--backend", "cuda",
                            "--csv", os.devnull], capture_output=True)
    return ("cpu", "cuda") if probe.returncode == 0 else ("cpu",)
