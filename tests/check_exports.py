#!/usr/bin/env python3
"""Every IMGHIST_API declaration of the public headers (imghist.h and
imghist_experimental.h) is exported by the shared library, and nothing else
is: the same symbols in every build (CUDA or not, I/O or not), so one program
or Python extension works with any of them.
usage: check_exports.py HEADER... LIBRARY"""
import re
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
headers, library = sys.argv[1:-1], sys.argv[-1]
declared = set()
for header in headers:
    text = open(header).read()
    declared |= set(re.findall(r"IMGHIST_API\s[^;(]*?\b(imghist_\w+)\s*\(", text))
nm = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                    text=True).stdout
exported = {line.split()[-1] for line in nm.splitlines()
            if len(line.split()) == 3 and line.split()[1] in "TDBR"}
missing = sorted(declared - exported)
extra = sorted(exported - declared)
print(f"{len(declared)} declared, {len(exported)} exported")
if missing:
    print("declared but not exported:", " ".join(missing))
if extra:
    print("exported but not declared:", " ".join(extra))
sys.exit(1 if missing or extra or not declared else 0)
