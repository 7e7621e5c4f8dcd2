"""Fetches the re-ranker's training packages (ranker-packages.txt) into
WORK/src/NAME: Debian packages downloaded and unpacked (never installed),
npm tarballs packed; only the files the index reads, refusing evaluation
corpora and vendored copies (excluded.py). Prints what it used and refused.

    fetch_ranker.py PACKAGES_TXT WORK
"""
import os
import shutil
import subprocess
import sys
import tarfile

from excluded import package_excluded, path_excluded

SOURCE_EXTS = {".py", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".java",
               ".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}


def run(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def fetch(kind, spec, dl):
    os.makedirs(dl, exist_ok=True)
    unpacked = os.path.join(dl, "x")
    if os.path.isdir(unpacked):
        return unpacked
    if kind == "deb":
        run(["apt-get", "download", "-qq", "-o", "APT::Sandbox::User=root", spec], dl)
        deb = [f for f in os.listdir(dl) if f.endswith(".deb")][0]
        run(["dpkg-deb", "-x", deb, "x"], dl)
    elif kind == "npm":
        run(["npm", "pack", spec, "--silent"], dl)
        tgz = [f for f in os.listdir(dl) if f.endswith(".tgz")][0]
        with tarfile.open(os.path.join(dl, tgz)) as t:
            t.extractall(unpacked, filter="data") if hasattr(tarfile, "data_filter") \
                else t.extractall(unpacked)
        unpacked = os.path.join(unpacked, "package")
        os.rename(unpacked, unpacked + ".tmp")
        shutil.move(unpacked + ".tmp", os.path.join(dl, "y"))
        shutil.rmtree(os.path.join(dl, "x"))
        shutil.move(os.path.join(dl, "y"), os.path.join(dl, "x"))
        unpacked = os.path.join(dl, "x")
    else:
        raise SystemExit("unknown kind %s" % kind)
    return unpacked


def main():
    packages, work = sys.argv[1], sys.argv[2]
    for line in open(packages):
        if line.startswith("#") or not line.strip():
            continue
        name, kind, spec, path = line.split()
        why = package_excluded(spec)
        if why:
            print("refused %s: %s" % (name, why))
            continue
        src = os.path.join(fetch(kind, spec, os.path.join(work, "dl", name)), path)
        out = os.path.join(work, "src", name)
        if os.path.isdir(out):
            shutil.rmtree(out)
        n = refused = 0
        for d, _, files in os.walk(src):
            for f in sorted(files):
                if os.path.splitext(f)[1] not in SOURCE_EXTS:
                    continue
                rel = os.path.relpath(os.path.join(d, f), src)
                if path_excluded(rel):
                    refused += 1
                    continue
                os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
                shutil.copyfile(os.path.join(d, f), os.path.join(out, rel))
                n += 1
        print("%s %s: %d files (%d refused)" % (name, spec, n, refused), flush=True)


if __name__ == "__main__":
    main()
