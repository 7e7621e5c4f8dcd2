"""Fetches the re-ranker's training packages (ranker-packages.txt) into
WORK/src/NAME: Debian packages downloaded and unpacked (never installed),
Debian source packages' upstream tarballs, npm tarballs packed; only the files the index reads, refusing evaluation
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


def src_apt(work):
    """apt options reading Debian's source lists from a folder of work (as
    make-corpus.sh does), fetched once: the system's lists stay as they are."""
    apt = os.path.join(work, "apt")
    opts = ["-o", "Dir::Etc::SourceList=%s/deb-src.sources" % apt,
            "-o", "Dir::Etc::SourceParts=%s/parts" % apt, "-o", "Dir::State::Lists=%s/lists" % apt,
            "-o", "Dir::Cache=%s/cache" % apt, "-o", "APT::Sandbox::User=root"]
    if not os.path.isdir(os.path.join(apt, "lists")):
        for d in ("parts", "lists/partial", "cache"):
            os.makedirs(os.path.join(apt, d), exist_ok=True)
        uri = "http://deb.debian.org/debian"
        for f in sorted(os.listdir("/etc/apt/sources.list.d")):
            if f.endswith(".sources"):
                for line in open(os.path.join("/etc/apt/sources.list.d", f)):
                    if line.startswith("URIs:"):
                        uri = line.split()[1]
                        break
                break
        with open(os.path.join(apt, "deb-src.sources"), "w") as w:
            w.write("Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % uri)
        run(["apt-get"] + opts + ["update", "-qq"], work)
    return opts


def fetch(kind, spec, dl, work):
    os.makedirs(dl, exist_ok=True)
    unpacked = os.path.join(dl, "x")
    if os.path.isdir(unpacked):
        return unpacked
    if kind == "deb":
        run(["apt-get", "download", "-qq", "-o", "APT::Sandbox::User=root", spec], dl)
        deb = [f for f in os.listdir(dl) if f.endswith(".deb")][0]
        run(["dpkg-deb", "-x", deb, "x"], dl)
    elif kind == "src":
        # only the upstream tarball is needed: a missing debian/ part is no failure
        subprocess.run(["apt-get"] + src_apt(work) + ["source", "--download-only", "-qq", spec],
                       cwd=dl, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        origs = sorted(f for f in os.listdir(dl) if ".orig.tar." in f)
        if not origs:
            raise SystemExit("cannot fetch the source of %s" % spec)
        orig = origs[0]
        os.makedirs(unpacked)
        run(["tar", "-xf", orig, "-C", "x", "--strip-components=1"], dl)
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
        src = os.path.join(fetch(kind, spec, os.path.join(work, "dl", name), work), path)
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
